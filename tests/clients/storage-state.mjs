// Loads a storageState file malo exported into an unmodified Playwright, driving Debian's
// Chromium, and prints one JSON line per check: {"check": name, "ok": bool, "seen": ...}.
// The fixture server then tells whether Chromium sent the exported cookies.
// Usage: node storage-state.mjs <state file> <fixture base>
import { chromium } from 'playwright-core';

const [statePath, base] = process.argv.slice(2);
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.MALO_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox'],
    timeout: 30000,
  });
  report('launch', true, browser.version());
  const context = await browser.newContext({ storageState: statePath });
  const page = await context.newPage();
  await page.goto(`${base}/f/account.html`, { timeout: 20000 });
  const greeting = await page.textContent('#greeting');
  report('greeting', greeting === 'welcome', greeting);
  const cookies = await context.cookies();
  report('cookies', cookies.some((cookie) => cookie.name === 'sid' && cookie.httpOnly), cookies.map((cookie) => cookie.name));
  await browser.close();
}

main().then(() => process.exit(0), (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
