// Light observation of the page, run in malo's isolated script world (it sees the DOM
// but not the page's globals, so page overrides of DOM or JSON methods cannot affect it).
// `args.max_chars` limits the text summary.
const maxChars = args.max_chars;
const root = document.documentElement;
const interactiveSelector = [
  'a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
  '[role=button]', '[role=link]', '[role=checkbox]', '[role=radio]', '[role=tab]',
  '[role=menuitem]', '[role=switch]', '[role=textbox]', '[role=combobox]',
  '[contenteditable=""]', '[contenteditable=true]', '[tabindex]:not([tabindex="-1"])',
].join(',');
const text = (document.body ? document.body.innerText : '')
  .replace(/[ \t\u00a0]+/g, ' ')
  .replace(/\s*\n\s*/g, '\n')
  .trim();
return {
  url: location.href,
  title: document.title,
  ready_state: document.readyState,
  visibility_state: document.visibilityState,
  viewport: {
    width: window.innerWidth,
    height: window.innerHeight,
    device_pixel_ratio: window.devicePixelRatio,
    scroll_x: Math.round(window.scrollX),
    scroll_y: Math.round(window.scrollY),
    document_width: root ? root.scrollWidth : 0,
    document_height: root ? root.scrollHeight : 0,
  },
  element_count: document.getElementsByTagName('*').length,
  interactive_count: document.querySelectorAll(interactiveSelector).length,
  text: text.slice(0, maxChars),
  text_length: text.length,
  truncated: text.length > maxChars,
};
