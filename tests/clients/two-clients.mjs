// Two DevTools clients on one session at once, and one of them dropped without a word.
// As "main": connects, starts a child client, works beside it, then checks that the
// child's death changed nothing. As "child": connects, works, then dies (SIGKILL).
// Prints one JSON line per check: {"check": name, "ok": bool, "seen": ...}.
// Usage: node two-clients.mjs main <ws_url> <fixture base>
import puppeteer from 'puppeteer-core';
import { spawn } from 'node:child_process';

const [role, wsUrl, base] = process.argv.slice(2);
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));

async function child() {
  const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl, defaultViewport: null });
  const [page] = await browser.pages();
  for (let round = 0; round < 20; round++) await page.evaluate((n) => n * 2, round);
  console.log('child-ready');
  // Keep the page busy while dying: an evaluate in flight and a pending wait.
  page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 10000))).catch(() => {});
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100);
}

async function main() {
  const browser = await puppeteer.connect({ browserWSEndpoint: wsUrl, defaultViewport: null });
  const [page] = await browser.pages();
  await page.goto(`${base}/f/devtools.html`);
  const other = spawn(process.execPath, [process.argv[1], 'child', wsUrl, base], { stdio: ['ignore', 'pipe', 'inherit'] });
  let childOutput = '';
  other.stdout.on('data', (chunk) => { childOutput += chunk; });
  // Both clients evaluate on the same page at once.
  const mine = [];
  for (let round = 0; round < 20; round++) mine.push(page.evaluate((n) => n + 1, round));
  const answers = await Promise.all(mine);
  report('evaluates beside another client', answers.every((value, index) => value === index + 1), answers.slice(0, 5));
  const code = await new Promise((resolve) => other.on('exit', (exitCode, signal) => resolve(signal || exitCode)));
  report('the other client worked, then was killed', /child-ready/.test(childOutput) && code === 'SIGKILL', [childOutput.trim(), code]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const pages = await browser.pages();
  report('the session kept its page', pages.length === 1 && pages[0].url().endsWith('/f/devtools.html'), pages.map((each) => each.url()));
  await page.type('#name', 'still here');
  report('this client goes on', (await page.$eval('#name', (element) => element.value)) === 'still here');
  await browser.disconnect();
}

(role === 'child' ? child() : main()).then(() => { if (role !== 'child') process.exit(0); }, (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
