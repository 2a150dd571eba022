// The same Puppeteer script against a malo session and against Debian's Chromium, side by
// side: connect, then per round goto, click, type, evaluate and screenshot; and the
// Runtime.evaluate round trip. Prints one JSON line per figure:
// {"figure": name, "target": "malo"|"chromium", "median_ms": m, "p95_ms": p, "n": n}.
// Usage: node bench-cdp.mjs <malo ws_url> <fixture base> [rounds]
import puppeteer from 'puppeteer-core';

const [wsUrl, base, roundsText] = process.argv.slice(2);
const rounds = Number(roundsText || 20);
const figure = (name, target, samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  console.log(JSON.stringify({ figure: name, target, median_ms: at(0.5), p95_ms: at(0.95), n: samples.length }));
};
const timed = async (samples, work) => { const begun = performance.now(); await work(); samples.push(performance.now() - begun); };

async function run(target, connect) {
  const connectTimes = [];
  let browser;
  await timed(connectTimes, async () => { browser = await connect(); });
  figure('connect', target, connectTimes);
  const page = (await browser.pages())[0] || (await browser.newPage());
  const steps = { goto: [], click: [], type: [], evaluate: [], screenshot: [], script: [] };
  for (let round = 0; round < rounds; round++) {
    const begun = performance.now();
    await timed(steps.goto, () => page.goto(`${base}/f/devtools.html`));
    await timed(steps.click, () => page.click('#btn'));
    await timed(steps.type, () => page.type('#name', 'Ada'));
    await timed(steps.evaluate, () => page.evaluate(() => document.querySelectorAll('*').length));
    await timed(steps.screenshot, () => page.screenshot());
    steps.script.push(performance.now() - begun);
  }
  for (const [name, samples] of Object.entries(steps)) figure(name === 'script' ? 'whole script (one round)' : name, target, samples);
  const session = await page.createCDPSession();
  const trips = [];
  for (let trip = 0; trip < 200; trip++) await timed(trips, () => session.send('Runtime.evaluate', { expression: '1 + 1', returnByValue: true }));
  figure('Runtime.evaluate round trip', target, trips);
  return browser;
}

async function main() {
  const malo = await run('malo', () => puppeteer.connect({ browserWSEndpoint: wsUrl, defaultViewport: null }));
  await malo.disconnect();
  const chromium = await run('chromium', () => puppeteer.launch({
    executablePath: process.env.MALO_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    defaultViewport: null,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--window-size=1280,800'],
  }));
  await chromium.close();
}

main().then(() => process.exit(0), (error) => {
  console.log(JSON.stringify({ figure: 'error', target: 'bench', error: String(error && error.stack || error) }));
  process.exit(1);
});
