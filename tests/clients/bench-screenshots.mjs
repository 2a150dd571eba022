// Screenshots side by side, in one run: malo (`malo mcp`, browser_screenshot) and Playwright
// MCP 0.0.83 on Debian's Chromium (browser_take_screenshot), both driven as an agent's MCP
// host drives them (the official SDK's client over stdio), on the same pages, both at
// 1280x720. Per row and page, `reps` timed calls after 2 warm-ups: the wall time of the
// whole tool call and the image's bytes (decoded from base64). Prints one JSON line per
// figure: {"figure": "<row> (<page>)", "target": "malo"|"playwright-mcp", "median_ms",
// "p95_ms", "bytes", "width", "height", "n"}, and {"figure": "error", "target", "error"}
// when something fails.
// Usage: node bench-screenshots.mjs <malo binary> <malo data dir> <pages base url> [reps]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, killSurvivors, processTree, runningDaemon as daemonOf, sleep, startedAt, textOf } from './bench-common.mjs';

const [maloBinary, dataDir, base, repsText] = process.argv.slice(2);
const reps = Number(repsText || 15);
const warmUps = 2;
// Playwright MCP 0.0.83 has no quality field: its JPEG is always quality 90, so malo's is too.
const jpegQuality = 90;
// The pages, and the same element on each side: a CSS selector for malo, and for Playwright
// MCP the ref its own snapshot gives that element (as an agent would read it).
const pages = [
  // The unnamed <form> is a `generic` node in Playwright's snapshot, the parent of "Full name".
  { name: 'form', file: 'form.html', selector: '#checkout', element: 'checkout form', ref: /- generic \[ref=([^\]]+)\]:\n\s*- text: Full name/ },
  { name: 'large', file: 'large.html', selector: '#inventory', element: 'inventory table', ref: /- table \[ref=([^\]]+)\]/ },
];
// Each row: what malo is asked (browser_screenshot) and what Playwright MCP is asked
// (browser_take_screenshot). `max_width` lifts malo's MCP cap on the long edge (1568 px), so
// both sides give the full-size picture.
const rows = [
  { name: 'viewport PNG', malo: {}, playwright: {} },
  { name: 'viewport JPEG', malo: { format: 'jpeg', quality: jpegQuality }, playwright: { type: 'jpeg' } },
  { name: 'full page PNG', malo: { full_page: true }, playwright: { fullPage: true } },
  { name: 'element PNG', malo: 'element', playwright: 'element' },
];

const figure = (name, target, samples, image) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(JSON.stringify({ figure: name, target, median_ms: at(0.5), p95_ms: at(0.95), bytes: image.bytes, width: image.width, height: image.height, n: samples.length }));
};
const failed = (target, error) => console.log(JSON.stringify({ figure: 'error', target, error: String(error && error.stack || error) }));

// The image of a tool answer: its bytes and its size in pixels, read from the PNG or JPEG header.
function imageOf(answer) {
  const part = (answer.content || []).find((block) => block.type === 'image');
  if (answer.isError || !part) throw new Error(`no image in the answer: ${textOf(answer).slice(0, 500)}`);
  const data = Buffer.from(part.data, 'base64');
  let width, height;
  if (data.readUInt32BE(0) === 0x89504e47) {
    [width, height] = [data.readUInt32BE(16), data.readUInt32BE(20)];
  } else {
    // JPEG: the first start-of-frame segment (SOF0-SOF15 less DHT, JPG and DAC) holds the size.
    for (let at = 2; at + 9 < data.length; at += 2 + data.readUInt16BE(at + 2)) {
      const marker = data[at + 1];
      if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
        [height, width] = [data.readUInt16BE(at + 5), data.readUInt16BE(at + 7)];
        break;
      }
    }
  }
  return { bytes: data.length, width, height };
}


// `reps` timed calls after the warm-ups; the figure of the last image.
async function measure(name, target, shoot) {
  for (let warm = 0; warm < warmUps; warm++) imageOf(await shoot());
  const samples = [];
  let image;
  for (let rep = 0; rep < reps; rep++) {
    const begun = performance.now();
    const answer = await shoot();
    samples.push(performance.now() - begun);
    image = imageOf(answer);
  }
  figure(name, target, samples, image);
}

async function runMalo() {
  // A daemon this run starts (`malo mcp` starts one when none runs on the data dir) is
  // stopped at the end; one that ran before is left alone.
  const daemonBefore = daemonOf(dataDir);
  const server = await connect('malo', maloBinary, ['mcp', '--data-dir', dataDir, '--agent-id', 'bench-screenshots', '--caps', 'sessions']);
  let tree = [];
  try {
    const { session_id: session } = JSON.parse(await server.callText('browser_session_new', { width: 1280, height: 720 }));
    for (const page of pages) {
      await server.callText('browser_navigate', { url: `${base}/${page.file}`, session });
      for (const row of rows) {
        const asked = row.malo === 'element' ? { selector: page.selector } : row.malo;
        await measure(`${row.name} (${page.name})`, 'malo', () => server.call('browser_screenshot', { ...asked, max_width: 100000, session }));
      }
    }
    await server.callText('browser_session_close', { session });
  } catch (error) {
    throw new Error(`${error && error.stack || error}\nmalo mcp stderr: ${server.stderr()}`);
  } finally {
    tree = await server.close();
    const daemon = daemonOf(dataDir);
    if (daemon && daemon !== daemonBefore) {
      tree.push(...processTree(daemon), { pid: daemon, started: startedAt(daemon) });
      try { process.kill(daemon, 'SIGTERM'); } catch { /* gone */ }
      for (let waited = 0; waited < 15000 && startedAt(daemon) !== undefined; waited += 100) await sleep(100);
    }
    killSurvivors(tree);
  }
}

async function runPlaywright() {
  const outputDir = fs.mkdtempSync(path.join(os.tmpdir(), 'malo-bench-playwright-'));
  const server = await connect('playwright-mcp', process.execPath, [
    'node_modules/@playwright/mcp/cli.js',
    '--headless',
    '--browser', 'chromium',
    '--executable-path', process.env.MALO_CHROMIUM || '/usr/bin/chromium',
    '--viewport-size', '1280x720',
    '--isolated',
    '--output-dir', outputDir,
  ]);
  try {
    for (const page of pages) {
      await server.callText('browser_navigate', { url: `${base}/${page.file}` });
      for (const row of rows) {
        let asked = row.playwright;
        if (asked === 'element') {
          const snapshot = await server.callText('browser_snapshot');
          const ref = (snapshot.match(page.ref) || [])[1];
          if (!ref) throw new Error(`no ref for the ${page.element} in Playwright MCP's snapshot of ${page.file}:\n${snapshot.slice(0, 1500)}`);
          asked = { element: page.element, target: ref };
        }
        await measure(`${row.name} (${page.name})`, 'playwright-mcp', () => server.call('browser_take_screenshot', asked));
      }
    }
  } catch (error) {
    throw new Error(`${error && error.stack || error}\nplaywright-mcp stderr: ${server.stderr()}`);
  } finally {
    const tree = await server.close();
    await sleep(500);
    killSurvivors(tree);
    fs.rmSync(outputDir, { recursive: true, force: true });
  }
}

async function main() {
  let ok = true;
  for (const [target, run] of [['malo', runMalo], ['playwright-mcp', runPlaywright]]) {
    try {
      await run();
    } catch (error) {
      failed(target, error);
      ok = false;
    }
  }
  return ok;
}

main().then((ok) => process.exit(ok ? 0 : 1), (error) => {
  failed('bench', error);
  process.exit(1);
});
