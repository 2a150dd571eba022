// What the side-by-side benchmarks share: MCP servers over stdio driven by the official
// SDK's client, and the processes they leave behind.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const textOf = (answer) => (answer.content || []).filter((part) => part.type === 'text').map((part) => part.text).join('\n');

// The processes below `root` now, each with its start time (so a later process that reuses
// the pid is never taken for it).
export function processTree(root) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const parent = Number(fields[1]);
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push({ pid: Number(entry), started: fields[19] });
    } catch {
      // It exited meanwhile.
    }
  }
  const found = [];
  const stack = [root];
  while (stack.length) {
    for (const child of children.get(stack.pop()) || []) {
      found.push(child);
      stack.push(child.pid);
    }
  }
  return found;
}
export const startedAt = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
};
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// Kills, with SIGKILL, whichever of `processes` still runs.
export const killSurvivors = (processes) => {
  for (const { pid, started } of processes) {
    if (startedAt(pid) === started) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }
};

// The daemon's pid from `<data dir>/broker.json`, when that daemon runs.
export function runningDaemon(dataDir) {
  try {
    const pid = JSON.parse(fs.readFileSync(path.join(dataDir, 'broker.json'), 'utf8')).pid;
    return pid && startedAt(pid) !== undefined ? pid : undefined;
  } catch {
    return undefined;
  }
}

// An MCP server over stdio, and a way to stop it with everything it started.
export async function connect(target, command, args) {
  const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'pipe' });
  let stderr = '';
  const client = new Client({ name: 'malo-bench', version: '1.0.0' });
  const connecting = client.connect(transport);
  transport.stderr?.on('data', (chunk) => { stderr = (stderr + chunk).slice(-4000); });
  await connecting;
  const call = async (name, args = {}) => client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const callText = async (name, args = {}) => {
    const answer = await call(name, args);
    if (answer.isError) throw new Error(`${target} ${name} failed: ${textOf(answer).slice(0, 1000)}`);
    return textOf(answer);
  };
  const close = async () => {
    const tree = transport.pid ? processTree(transport.pid) : [];
    await client.close().catch(() => {});
    return tree;
  };
  return { call, callText, close, stderr: () => stderr };
}

// Stops `server` (connected with `connect`) and everything it started, with a daemon `malo
// mcp` started on `dir`, and removes `dir`.
export async function stopServer(server, target, dir) {
  const tree = await server.close();
  const daemon = target === 'malo' ? runningDaemon(dir) : undefined;
  if (daemon) {
    tree.push(...processTree(daemon), { pid: daemon, started: startedAt(daemon) });
    try { process.kill(daemon, 'SIGTERM'); } catch { /* gone */ }
    for (let waited = 0; waited < 15000 && startedAt(daemon) !== undefined; waited += 100) await sleep(100);
  }
  await sleep(300);
  killSurvivors(tree);
  fs.rmSync(dir, { recursive: true, force: true });
}

// Prints one figure's median and p95 of `samples` (ms) as a JSON line.
export const figure = (name, target, samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(JSON.stringify({ figure: name, target, median_ms: at(0.5), p95_ms: at(0.95), n: samples.length }));
};
