// Drives a malo session with an unmodified playwright-core over CDP, as a user's script
// would, and prints one JSON line per check: {"check": name, "ok": bool, "seen": ...}.
// Usage: node playwright.mjs <http_url> <fixture base>
import { chromium } from 'playwright-core';

const [httpUrl, base] = process.argv.slice(2);
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));

async function main() {
  const browser = await chromium.connectOverCDP(httpUrl, { timeout: 20000 });
  report('connectOverCDP', true, browser.version());
  const context = browser.contexts()[0];
  const page = context.pages()[0];
  report('first page', !!page, context.pages().length);
  const response = await page.goto(`${base}/f/devtools.html`, { timeout: 20000 });
  report('goto', response && response.status() === 200, response && response.status());
  report('evaluate', (await page.evaluate(() => document.title)) === 'Devtools fixture', await page.evaluate(() => document.title));
  await page.fill('#name', 'Grace', { timeout: 10000 });
  report('fill', (await page.inputValue('#name')) === 'Grace', await page.inputValue('#name'));
  await page.click('#btn', { timeout: 10000 });
  const clicks = await page.textContent('#clicks');
  report('click', clicks === 'clicked trusted=true', clicks);
  const picture = await page.screenshot({ timeout: 10000 });
  report('screenshot', picture.subarray(1, 4).toString() === 'PNG', picture.length);
  await browser.close();
}

main().then(() => process.exit(0), (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
