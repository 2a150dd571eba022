// The whole agent workload side by side, in one run: `malo mcp` (its own daemon on a
// fresh data directory) and Playwright MCP 0.0.83 on Debian's Chromium, each driven over
// stdio by the official SDK's client, as an agent's MCP host drives them. One rep is 11
// tool calls on the three benchmark pages: navigate (a), snapshot (a), type into the name
// field by ref, click "Apply coupon" by ref, snapshot (a), screenshot (a), navigate (b),
// snapshot (b), screenshot (b), navigate (c), list the requests of (c). Refs come from
// each server's own snapshot of that rep. Servers are warm (started, one rep thrown away);
// targets alternate rep by rep; `runs` fresh servers each.
// Prints one JSON line per figure: {"figure", "target", "median_ms", "p95_ms", "n"} for
// the whole rep and for each operation, {"figure": "characters per rep", "target",
// "median"} for the text the agent got back, and {"figure": "error", ...} on a failure.
// Usage: node bench-workload.mjs <malo binary> <pages base url> [reps] [runs]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, figure, stopServer, textOf } from './bench-common.mjs';

const [maloBinary, base, repsText, runsText] = process.argv.slice(2);
const reps = Number(repsText || 15);
const runs = Number(runsText || 2);

// What each server calls the operations, and how its snapshot names a ref.
const targets = {
  malo: {
    start: (dir) => [maloBinary, ['mcp', '--data-dir', dir, '--agent-id', 'bench-workload']],
    refOf: (snapshot, role, name) => snapshot.match(new RegExp(`(e\\d+) ${role} "${name}"`))?.[1],
    type: (ref, text) => ['browser_fill', { ref, text }],
    click: (ref) => ['browser_click', { ref }],
    screenshot: ['browser_screenshot', {}],
    requests: ['browser_requests', {}],
  },
  'playwright-mcp': {
    start: (dir) => [process.execPath, [
      'node_modules/@playwright/mcp/cli.js', '--headless', '--browser', 'chromium',
      '--executable-path', process.env.MALO_CHROMIUM || '/usr/bin/chromium',
      '--viewport-size', '1280x720', '--isolated', '--output-dir', dir,
    ]],
    refOf: (snapshot, role, name) => snapshot.match(new RegExp(`${role} "${name}"[^\\n]*\\[ref=([^\\]]+)\\]`))?.[1],
    type: (ref, text) => ['browser_type', { element: 'Full name', target: ref, text }],
    click: (ref) => ['browser_click', { element: 'Apply coupon', target: ref }],
    screenshot: ['browser_take_screenshot', {}],
    requests: ['browser_network_requests', {}],
  },
};

// One rep: the time of each operation, the whole rep, and the characters of text answered.
async function rep(server, target, number) {
  const spec = targets[target];
  const times = {};
  let characters = 0;
  const timed = async (name, tool, args) => {
    const begun = performance.now();
    const answer = await server.call(tool, args);
    times[name] = performance.now() - begun;
    if (answer.isError) throw new Error(`${target} ${tool}: ${textOf(answer).slice(0, 600)}`);
    const text = textOf(answer);
    characters += text.length;
    return text;
  };
  const begun = performance.now();
  await timed('navigate (a)', 'browser_navigate', { url: `${base}/form.html` });
  const form = await timed('snapshot (a)', 'browser_snapshot', {});
  const name = spec.refOf(form, 'textbox', 'Full name');
  const apply = spec.refOf(form, 'button', 'Apply coupon');
  if (!name || !apply) throw new Error(`${target}: no ref for the name field or the button in its snapshot:\n${form.slice(0, 1500)}`);
  await timed('type by ref', ...spec.type(name, `Agent ${number}`));
  await timed('click by ref', ...spec.click(apply));
  await timed('snapshot (a) again', 'browser_snapshot', {});
  await timed('screenshot (a)', ...spec.screenshot);
  await timed('navigate (b)', 'browser_navigate', { url: `${base}/large.html` });
  await timed('snapshot (b)', 'browser_snapshot', {});
  await timed('screenshot (b)', ...spec.screenshot);
  await timed('navigate (c)', 'browser_navigate', { url: `${base}/fetch50.html` });
  await timed('requests (c)', ...spec.requests);
  times['whole workload per rep (11 ops)'] = performance.now() - begun;
  return { times, characters };
}

async function start(target) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `malo-bench-workload-${target}-`));
  const [command, args] = targets[target].start(dir);
  const server = await connect(target, command, args);
  return { server, stop: () => stopServer(server, target, dir) };
}

async function main() {
  const samples = {};
  const characters = {};
  const failed = new Set();
  for (let run = 0; run < runs; run++) {
    const servers = {};
    for (const target of Object.keys(targets)) {
      if (failed.has(target)) continue;
      try {
        servers[target] = await start(target);
        await rep(servers[target].server, target, -1);
      } catch (error) {
        failed.add(target);
        console.log(JSON.stringify({ figure: 'error', target, error: String(error && error.stack || error) }));
      }
    }
    for (let number = 0; number < reps; number++) {
      for (const [target, { server }] of Object.entries(servers)) {
        if (failed.has(target)) continue;
        try {
          const { times, characters: chars } = await rep(server, target, number);
          for (const [name, ms] of Object.entries(times)) ((samples[target] ??= {})[name] ??= []).push(ms);
          (characters[target] ??= []).push(chars);
        } catch (error) {
          failed.add(target);
          console.log(JSON.stringify({ figure: 'error', target, error: String(error && error.stack || error) }));
        }
      }
    }
    for (const { stop } of Object.values(servers)) await stop();
  }
  for (const [target, figures] of Object.entries(samples)) {
    for (const [name, values] of Object.entries(figures)) figure(name, target, values);
    const sorted = [...characters[target]].sort((a, b) => a - b);
    console.log(JSON.stringify({ figure: 'characters per rep', target, median: sorted[Math.floor(sorted.length / 2)] }));
  }
  return failed.size === 0;
}

main().then((ok) => process.exit(ok ? 0 : 1), (error) => {
  console.log(JSON.stringify({ figure: 'error', target: 'bench', error: String(error && error.stack || error) }));
  process.exit(1);
});
