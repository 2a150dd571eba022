// What the page says, posted to the engine as it happens: console lines (from the
// page-world hook), uncaught errors and rejections, which requests were XHRs, the file
// input just clicked, download links; and what the engine reads when it acts: whether the
// document is being left, how many trusted input events it has received.
  // Console lines come from the page-world hook (page_world.js) as events on the document;
  // uncaught errors and rejections are seen here, out of the page's reach.
  const CHANNEL = '__MALO_CHANNEL__';
  const sourceOf = (caller) => {
    const found = /(?:@|at )?(\S+?):(\d+):(\d+)\)?$/.exec(String(caller || '').trim());
    return found ? { source: found[1], line: Number(found[2]), column: Number(found[3]) } : {};
  };
  document.addEventListener(CHANNEL, (event) => {
    event.stopImmediatePropagation();
    if (typeof event.detail !== 'string') return;
    let message;
    try { message = JSON.parse(event.detail); } catch (error) { return; }
    if (message.kind === 'console' && typeof message.text === 'string') {
      const args = Array.isArray(message.args) ? message.args.slice(0, 32) : undefined;
      post({ kind: 'console', level: String(message.level), text: message.text.slice(0, 4000), args, frame_url: location.href, ...sourceOf(message.caller) });
    }
  }, true);
  // On the wire an XMLHttpRequest and a fetch() look alike (Sec-Fetch-Dest: empty); the
  // page's Resource Timing says which was which once each is done. Read here, in the
  // isolated world, so fetch, XMLHttpRequest and WebSocket stay the browser's own.
  try {
    new PerformanceObserver((list) => {
      const entries = [];
      for (const entry of list.getEntries()) {
        if (entry.initiatorType === 'xmlhttprequest' || entry.initiatorType === 'fetch') entries.push([entry.name, entry.initiatorType]);
      }
      if (entries.length) post({ kind: 'initiators', entries });
    }).observe({ type: 'resource', buffered: true });
  } catch (error) { /* no Resource Timing: such requests stay fetches in the log */ }
  // WebKit tells the engine only the MIME types of a file chooser's accept list, not the
  // extensions; the chooser is for the file input just clicked (by a person, a label or
  // the page's own input.click()), which is seen here first.
  window.addEventListener('click', (event) => {
    const path = event.composedPath();
    const target = path[0];
    if (target instanceof HTMLInputElement && target.type === 'file') {
      post({ kind: 'file_input', accept: target.getAttribute('accept') || '' });
    }
    // A click on a link with `download` starts a download a moment later (when the page
    // lets the click through): the action that clicked waits for it.
    const link = path.find((node) => node instanceof HTMLAnchorElement && node.hasAttribute('download'));
    if (link) setTimeout(() => { if (!event.defaultPrevented) post({ kind: 'download_link' }); }, 0);
  }, true);
  window.addEventListener('error', (event) => {
    const stack = event.error && event.error.stack ? String(event.error.stack).slice(0, 8000) : null;
    post({ kind: 'page_error', error_kind: 'exception', message: String(event.message || 'error').slice(0, 4000), stack,
      source: event.filename || null, line: event.lineno || null, column: event.colno || null, frame_url: location.href });
  }, true);
  window.addEventListener('unhandledrejection', (event) => {
    const reason = event.reason;
    const message = reason && reason.message !== undefined ? String(reason.message) : String(reason);
    const stack = reason && reason.stack ? String(reason.stack).slice(0, 8000) : null;
    post({ kind: 'page_error', error_kind: 'unhandled_rejection', message: message.slice(0, 4000), stack, frame_url: location.href });
  }, true);

  // The main document's DOMContentLoaded, for the DevTools endpoint's lifecycle events.
  if (window === window.top) {
    document.addEventListener('DOMContentLoaded', () => post({ kind: 'dom_content_loaded' }), { once: true, capture: true });
  }

  // Whether this document is being left (a link, a form, script): set before the new
  // load starts, so an action can tell that it caused a navigation even before WebKit
  // reports one.
  let leaving = false;
  window.addEventListener('beforeunload', () => { leaving = true; }, true);
  const isLeaving = () => leaving;

  // Trusted input events this document has received: the engine delivers input through
  // another channel than its scripts, and waits on this count to know the page has
  // handled an action before it looks at the result.
  let inputSeen = 0;
  for (const type of ['mousemove', 'mousedown', 'mouseup', 'keydown', 'keyup', 'wheel']) {
    window.addEventListener(type, (event) => { if (event.isTrusted) inputSeen++; }, true);
  }
  const inputCount = () => inputSeen;
