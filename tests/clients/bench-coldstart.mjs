// Cold start side by side, in one run: `malo mcp` on a fresh data directory (it starts its
// own daemon) and Playwright MCP 0.0.83 on Debian's Chromium, each spawned as an agent's
// MCP host spawns it (the official SDK's client over stdio). Per rep, alternating: spawn ->
// ready (the `initialize` answer) and spawn -> first navigate done (browser_navigate to the
// form page answered). Prints one JSON line per figure: {"figure", "target":
// "malo"|"playwright-mcp", "median_ms", "p95_ms", "n"}, and {"figure": "error", "target",
// "error"} when something fails.
// Usage: node bench-coldstart.mjs <malo binary> <pages base url> [reps]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, figure, stopServer } from './bench-common.mjs';

const [maloBinary, base, repsText] = process.argv.slice(2);
const reps = Number(repsText || 5);
const page = `${base}/form.html`;

const servers = {
  malo: (dir) => [maloBinary, ['mcp', '--data-dir', dir, '--agent-id', 'bench-cold']],
  'playwright-mcp': (dir) => [process.execPath, [
    'node_modules/@playwright/mcp/cli.js', '--headless', '--browser', 'chromium',
    '--executable-path', process.env.MALO_CHROMIUM || '/usr/bin/chromium',
    '--viewport-size', '1280x720', '--isolated', '--output-dir', dir,
  ]],
};

// One cold start: the two times, and everything it started stopped again.
async function coldStart(target) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `malo-bench-cold-${target}-`));
  const [command, args] = servers[target](dir);
  const begun = performance.now();
  const server = await connect(target, command, args);
  const ready = performance.now() - begun;
  let navigated;
  try {
    await server.callText('browser_navigate', { url: page });
    navigated = performance.now() - begun;
  } catch (error) {
    throw new Error(`${error && error.stack || error}\n${target} stderr: ${server.stderr()}`);
  } finally {
    await stopServer(server, target, dir);
  }
  return { ready, navigated };
}

async function main() {
  const samples = { malo: { ready: [], navigated: [] }, 'playwright-mcp': { ready: [], navigated: [] } };
  const failed = new Set();
  // One warm-up each (disk caches), then alternating reps.
  for (let rep = -1; rep < reps; rep++) {
    for (const target of Object.keys(servers)) {
      if (failed.has(target)) continue;
      try {
        const { ready, navigated } = await coldStart(target);
        if (rep >= 0) {
          samples[target].ready.push(ready);
          samples[target].navigated.push(navigated);
        }
      } catch (error) {
        failed.add(target);
        console.log(JSON.stringify({ figure: 'error', target, error: String(error && error.stack || error) }));
      }
    }
  }
  for (const [target, { ready, navigated }] of Object.entries(samples)) {
    if (!ready.length) continue;
    figure('spawn -> ready', target, ready);
    figure('spawn -> first navigate done', target, navigated);
  }
  return failed.size === 0;
}

main().then((ok) => process.exit(ok ? 0 : 1), (error) => {
  console.log(JSON.stringify({ figure: 'error', target: 'bench', error: String(error && error.stack || error) }));
  process.exit(1);
});
