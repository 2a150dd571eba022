// Drives a malo session with an unmodified chrome-devtools-mcp, through the official MCP
// SDK's client over stdio, as an agent's MCP host would, and prints one JSON line per
// check: {"check": name, "ok": bool, "seen": ...}.
// Usage: node devtools-mcp.mjs <--wsEndpoint|--browserUrl> <url> <fixture base>
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [how, endpoint, base] = process.argv.slice(2);
const report = (check, ok, seen) => console.log(JSON.stringify({ check, ok: !!ok, seen }));
const textOf = (answer) => (answer.content || []).filter((part) => part.type === 'text').map((part) => part.text).join('\n');

async function main() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js', how, endpoint, '--no-usage-statistics', '--no-performance-crux'],
    env: { ...process.env, CI: '1', CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1', CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1', CHROME_DEVTOOLS_MCP_NO_CONFIG_DISCOVERY: '1' },
    stderr: 'pipe',
  });
  let stderr = '';
  const client = new Client({ name: 'malo-e2e', version: '1.0.0' });
  const connecting = client.connect(transport);
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  await connecting;
  const call = async (name, args = {}) => {
    const answer = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
    return { error: !!answer.isError, text: textOf(answer), content: answer.content || [] };
  };
  try {
    let answer = await call('list_pages');
    report('list_pages', !answer.error && /^\d+: /m.test(answer.text), answer.text);
    const pageId = Number((answer.text.match(/^(\d+): .*\[selected\]/m) || answer.text.match(/^(\d+):/m) || [])[1]);

    answer = await call('navigate_page', { pageId, type: 'url', url: `${base}/f/devtools.html` });
    report('navigate_page url', !answer.error && !/Unable to/.test(answer.text), answer.text);

    answer = await call('take_snapshot', { pageId });
    const snapshot = answer.text;
    const uid = (role, name) => (snapshot.match(new RegExp(`uid=(\\S+) ${role} "${name}"`)) || [])[1];
    const [nameUid, buttonUid, emailUid] = [uid('textbox', 'Your name'), uid('button', 'Press here'), uid('textbox', 'Email')];
    report('take_snapshot with uids', !answer.error && /RootWebArea "Devtools fixture"/.test(snapshot) && nameUid && buttonUid && emailUid, snapshot.slice(0, 1500));

    answer = await call('fill', { pageId, uid: nameUid, value: 'Grace' });
    report('fill by uid', !answer.error, answer.text.slice(0, 300));
    answer = await call('click', { pageId, uid: buttonUid });
    report('click by uid', !answer.error, answer.text.slice(0, 300));
    answer = await call('evaluate_script', { pageId, function: '() => [document.getElementById("name").value, document.getElementById("clicks").textContent]' });
    report('evaluate_script sees the fill and the trusted click', /"Grace"/.test(answer.text) && /clicked trusted=true/.test(answer.text), answer.text);

    answer = await call('click', { pageId, uid: nameUid });
    answer = await call('press_key', { pageId, key: 'Enter' });
    const keys = await call('evaluate_script', { pageId, function: '() => document.getElementById("keys").textContent' });
    report('press_key Enter, trusted', !answer.error && /enter trusted=true/.test(keys.text), keys.text);

    answer = await call('click', { pageId, uid: emailUid });
    answer = await call('type_text', { pageId, text: 'ada@example.com', submitKey: 'Enter' });
    report('type_text with a submit key', !answer.error, answer.text.slice(0, 300));
    answer = await call('wait_for', { pageId, text: ['This page is served late.'], timeout: 10000 });
    report('wait_for a text', !answer.error, answer.text.slice(0, 300));

    answer = await call('navigate_page', { pageId, type: 'back' });
    report('navigate_page back', !answer.error && !/Unable to/.test(answer.text), answer.text);
    answer = await call('navigate_page', { pageId, type: 'reload' });
    report('navigate_page reload', !answer.error && !/Unable to/.test(answer.text), answer.text);

    await new Promise((resolve) => setTimeout(resolve, 500));
    answer = await call('list_network_requests', { pageId });
    const xhr = answer.text.match(/reqid=(\d+) GET \S*\/api\/xhr\.json/);
    report('list_network_requests has the XHR', !!xhr, answer.text);
    if (xhr) {
      answer = await call('get_network_request', { pageId, reqid: Number(xhr[1]) });
      report('get_network_request has its body', /"via":\s*"xhr"/.test(answer.text), answer.text);
    }
    answer = await call('list_console_messages', { pageId });
    report('list_console_messages has the log', /devtools fixture loaded 42/.test(answer.text), answer.text);
    answer = await call('take_screenshot', { pageId });
    report('take_screenshot', answer.content.some((part) => part.type === 'image' && part.data.length > 1000), answer.content.map((part) => part.type));

    answer = await call('new_page', { url: `${base}/f/arrived.html` });
    const newId = Number((answer.text.match(/^(\d+): .*arrived.*/m) || [])[1]);
    report('new_page', !answer.error && /arrived\.html/.test(answer.text), answer.text);
    answer = await call('select_page', { pageId, bringToFront: true });
    report('select_page', !answer.error && new RegExp(`^${pageId}: .*\\[selected\\]`, 'm').test(answer.text), answer.text);
    answer = await call('close_page', { pageId: newId });
    report('close_page', !answer.error && !/arrived\.html/.test(answer.text), answer.text);
  } finally {
    await client.close();
    if (process.env.MALO_SHOW_STDERR) console.error(stderr);
  }
}

main().then(() => process.exit(0), (error) => {
  report('scenario', false, String(error && error.stack || error));
  process.exit(1);
});
