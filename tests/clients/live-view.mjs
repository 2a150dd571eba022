// A person in a real browser (Debian's Chromium, driven by playwright-core) using malo's
// live view: prints one JSON line per check, {"check": name, "ok": bool, "seen": ...}.
// Usage: node live-view.mjs <live_url> <scenario> [<json>]
//   login      <json: {username, password, signin, code, verify} as [x, y] in page CSS px>
//              types the credentials and the second step's code through the view
//   done       presses Done
//   watch-only clicks and types into a watch-only view (json: {field: [x, y]})
//   leave      closes the page without Done
//   second     opens the link in a second browser (a context of its own) after the first
//   open       opens the link and reports what the browser shows (a refused link)
import { chromium } from 'playwright-core';

const [liveUrl, scenario, json] = process.argv.slice(2);
const points = json ? JSON.parse(json) : {};
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function frames(page) {
  return Number(await page.evaluate(() => document.body.dataset.frames || 0));
}

// Waits for the view's first frame; reports it as PNG data (the frame's own size).
async function firstFrame(page) {
  await page.waitForFunction(() => Number(document.body.dataset.frames || 0) >= 1, null, { timeout: 20000 });
  const picture = await page.evaluate(() => document.getElementById('frame').toDataURL('image/png'));
  report('first frame', picture.startsWith('data:image/png'), picture);
}

// A click at a point of the session's page (CSS px), through the view's scaling.
async function clickAt(page, [x, y]) {
  const box = await page.locator('#frame').boundingBox();
  const pageWidth = Number(await page.evaluate(() => document.body.dataset.pageWidth || 0));
  const scale = pageWidth ? box.width / pageWidth : 1;
  await page.mouse.click(box.x + x * scale, box.y + y * scale);
}

async function waitAddress(page, part) {
  await page.waitForFunction((part) => document.getElementById('address').value.includes(part), part, { timeout: 20000 });
}

async function open(browser) {
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const response = await page.goto(liveUrl, { timeout: 20000 });
  return { page, status: response ? response.status() : 0 };
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.MALO_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const { page, status } = await open(browser);
  report('status', true, status);
  if (scenario === 'open') {
    report('page', true, { title: await page.title(), text: await page.textContent('body') });
    await browser.close();
    return;
  }
  await firstFrame(page);
  const state = await page.evaluate(() => ({ control: document.body.dataset.control, width: document.getElementById('frame').style.width }));
  report('state', true, state);
  if (scenario === 'login') {
    await clickAt(page, points.username);
    await page.keyboard.type('demo', { delay: 10 });
    await clickAt(page, points.password);
    await page.keyboard.type('s3cret-pass', { delay: 10 });
    await clickAt(page, points.signin);
    await waitAddress(page, 'login-2fa-code');
    report('second step shown', true, await page.inputValue('#address'));
    await sleep(300);
    await clickAt(page, points.code);
    await page.keyboard.type('424242', { delay: 10 });
    await clickAt(page, points.verify);
    await page.waitForFunction(() => document.body.dataset.ended, null, { timeout: 20000 });
    report('ended', true, await page.textContent('#notice'));
  } else if (scenario === 'done') {
    await page.click('#done');
    await page.waitForFunction(() => document.body.dataset.ended, null, { timeout: 20000 });
    report('ended', true, await page.textContent('#notice'));
  } else if (scenario === 'watch-only') {
    report('done disabled', await page.isDisabled('#done'), await page.isDisabled('#done'));
    // The page's own controls are disabled; the socket is told anyway, as a hostile page would.
    await clickAt(page, points.field);
    await page.keyboard.type('intruder', { delay: 10 });
    await sleep(1000);
    report('frames', true, await frames(page));
  } else if (scenario === 'leave') {
    await page.close();
  } else if (scenario === 'second') {
    const second = await open(browser);
    report('second status', second.status === 409, second.status);
    report('second page', true, await second.page.textContent('body'));
  }
  await browser.close();
}

main().then(() => process.exit(0), (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
