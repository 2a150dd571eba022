// malo's page-world hook: the one script of malo that runs in the page's own world (every
// frame, before the page's scripts), so the page can see it. It only tells malo's
// isolated agent, through an event on the document, what the page writes to its console.
// It touches nothing else of the page: fetch, XMLHttpRequest and WebSocket stay the
// browser's own. A page that replaces console.log afterwards hides its own later log
// lines, nothing more: other levels, other frames and uncaught errors (caught in the
// isolated world) go on.
(() => {
  'use strict';
  const channel = '__MALO_CHANNEL__';
  const dispatch = EventTarget.prototype.dispatchEvent;
  const stringify = JSON.stringify;
  const send = (message) => {
    try { dispatch.call(document, new CustomEvent(channel, { detail: stringify(message) })); } catch (error) { /* never the page's problem */ }
  };
  const describe = (value) => {
    if (typeof value === 'string') return value;
    // WebKit's stacks name only the frames: the message goes first.
    if (value instanceof Error) return value.stack ? String(value) + '\n' + value.stack : String(value);
    if (typeof value === 'object' && value !== null) {
      try { return stringify(value); } catch (error) { return String(value); }
    }
    return String(value);
  };
  // Each argument as JSON can carry it (strings cut at 4000), or described.
  const argument = (value) => {
    if (value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
    if (typeof value === 'string') return value.slice(0, 4000);
    return { description: describe(value).slice(0, 4000), type: typeof value };
  };
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const native = console[level];
    if (typeof native !== 'function') continue;
    console[level] = function (...args) {
      try {
        const caller = (new Error().stack || '').split('\n')[1] || '';
        send({ kind: 'console', level, text: args.map(describe).join(' ').slice(0, 4000), args: args.slice(0, 32).map(argument), caller });
      } catch (error) { /* keep logging */ }
      return native.apply(this, args);
    };
  }
})();
