// Drives a malo session with an unmodified puppeteer-core, as a user's script would, and
// prints one JSON line per check: {"check": name, "ok": bool, "seen": ...}.
// Usage: node puppeteer.mjs <ws_url> <http_url> <authorization header> <fixture base>
import puppeteer from 'puppeteer-core';

const [wsUrl, httpUrl, authorization, base, uploadPath] = process.argv.slice(2);
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));
const within = (promise, label, ms = 20000) =>
  Promise.race([promise, new Promise((_, fail) => setTimeout(() => fail(new Error(`${label} took over ${ms} ms`)), ms))]);

async function main() {
  // The capability in the URL alone.
  const browser = await within(puppeteer.connect({ browserWSEndpoint: wsUrl, defaultViewport: null }), 'connect');
  report('connect by ws url', true);
  report('version', /malo-browser/.test(await browser.version()), await browser.version());
  const pages = await within(browser.pages(), 'pages');
  report('pages', pages.length >= 1, pages.map((page) => page.url()));

  const page = await within(browser.newPage(), 'newPage');
  const seen = { requests: [], responses: [], console: [] };
  page.on('request', (request) => seen.requests.push([request.resourceType(), request.url()]));
  page.on('response', (response) => seen.responses.push([response.status(), response.url()]));
  page.on('console', (message) => seen.console.push(message.text()));

  await within(page.setViewport({ width: 700, height: 500 }), 'setViewport');
  report('setViewport changes innerWidth', (await page.evaluate(() => innerWidth)) === 700, await page.evaluate(() => [innerWidth, innerHeight]));

  await within(page.setExtraHTTPHeaders({ 'X-Malo-Extra': 'from-puppeteer' }), 'setExtraHTTPHeaders');
  const response = await within(page.goto(`${base}/f/devtools.html`), 'goto');
  report('goto answers 200', response && response.status() === 200, response && response.status());
  report('title', (await within(page.title(), 'title')) === 'Devtools fixture', await page.title());
  report('$eval', (await within(page.$eval('#heading', (element) => element.textContent), '$eval')) === 'Driven over the protocol');
  await within(page.waitForSelector('#btn', { visible: true }), 'waitForSelector');
  report('waitForSelector visible', true);

  await within(page.type('#name', 'Ada'), 'type');
  const typed = await page.$eval('#name', (element) => element.value);
  report('type', typed === 'Ada', typed);
  await within(page.keyboard.press('Enter'), 'press');
  const keys = await page.$eval('#keys', (element) => element.textContent);
  report('keyboard.press Enter is trusted', keys === 'enter trusted=true', keys);

  await within(page.click('#btn'), 'click');
  const clicks = await page.$eval('#clicks', (element) => element.textContent);
  report('click runs the handler, trusted', clicks === 'clicked trusted=true', clicks);

  const fileInput = await page.$('#file');
  await within(fileInput.uploadFile(uploadPath), 'uploadFile');
  const chosen = await page.$eval('#file', (element) => [...element.files].map((file) => `${file.name}:${file.size}`));
  report('uploadFile goes through the upload path', chosen.length === 1 && chosen[0] === 'notes.txt:11', chosen);

  const picture = await within(page.screenshot(), 'screenshot');
  const png = Buffer.from(picture);
  const size = [png.readUInt32BE(16), png.readUInt32BE(20)];
  report('screenshot is a PNG of the viewport', png.subarray(1, 4).toString() === 'PNG' && size[0] === 700 && size[1] === 500, size);

  const tree = await within(page.accessibility.snapshot(), 'accessibility.snapshot');
  const names = [];
  const walk = (node) => { if (!node) return; names.push(`${node.role}:${node.name}`); (node.children || []).forEach(walk); };
  walk(tree);
  report('accessibility snapshot has the button', names.includes('button:Press here'), names.slice(0, 20));

  await new Promise((resolve) => setTimeout(resolve, 500));
  report('request listener saw the document and the XHR',
    seen.requests.some(([type, url]) => type === 'document' && url.endsWith('/f/devtools.html')) &&
    seen.requests.some(([type, url]) => type === 'xhr' && url.endsWith('/api/xhr.json')), seen.requests);
  report('response listener saw them answered', seen.responses.some(([status, url]) => status === 200 && url.endsWith('/api/xhr.json')), seen.responses);
  report('console listener saw the log', seen.console.includes('devtools fixture loaded 42'), seen.console);

  await within(page.exposeFunction('maloDouble', (n) => n * 2), 'exposeFunction');
  const doubled = await within(page.evaluate(() => window.maloDouble(21)), 'call the exposed function');
  report('exposeFunction (a binding) answers the page', doubled === 42, doubled);

  const session = await page.createCDPSession();
  const started = Date.now();
  let refused = null;
  try { await session.send('Nonexistent.method'); } catch (error) { refused = error.message; }
  report('an unknown method is refused at once', /wasn't found/.test(refused || '') && Date.now() - started < 2000, refused);
  await session.detach();

  const created = new Promise((resolve) => browser.on('targetcreated', (target) => { if (target.type() === 'page') resolve(target); }));
  await page.evaluate(() => { window.open('/f/arrived.html'); });
  const popup = await within(created, 'a popup target');
  const popupPage = await within(popup.page(), 'the popup page');
  await within(popupPage.waitForFunction(() => document.title === 'arrived'), 'the popup loads');
  report('a popup is a new target', popup.opener() && popup.opener().type() === 'page', popup.url());
  await within(popupPage.close(), 'popup close');

  await within(page.close(), 'page.close');
  report('page.close', true);
  await browser.disconnect();

  // The capability as a header, with the session id in the path.
  const bare = wsUrl.replace(/\/devtools\/[0-9a-f]{64}\//, `/devtools/${wsUrl.split('/').pop()}/`);
  const withHeader = await within(puppeteer.connect({ browserWSEndpoint: bare, headers: { Authorization: authorization }, defaultViewport: null }), 'connect with header');
  report('connect by header', (await withHeader.pages()).length >= 1);
  await withHeader.disconnect();

  // By the HTTP URL (GET /json/version first).
  const byUrl = await within(puppeteer.connect({ browserURL: httpUrl, defaultViewport: null }), 'connect by url');
  const [first] = await byUrl.pages();
  const again = await within(first.goto(`${base}/f/devtools.html`), 'goto by url');
  report('connect by browserURL and goto', again && again.status() === 200);
  await byUrl.disconnect();
}

main().then(() => process.exit(0), (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
