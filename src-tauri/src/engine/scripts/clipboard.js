// malo's per-session clipboard (engine/webkit/emulation.rs): in the isolated world "malo",
// every frame, before the page's scripts. WebKitGTK would copy to and paste from the
// person's system clipboard, shared by every session; this script takes every copy, cut and
// paste event first (a capturing listener on the window, registered before any page script),
// stops it and cancels the engine's own action, then plays the event in the page again with
// the session's clipboard: the page's listeners see a copy, cut or paste event whose
// clipboardData is the session's, and what they set (or else the selection) becomes the
// session's clipboard, which the engine hands every frame of the session's tabs.
(() => {
  'use strict';
  if (globalThis.__maloClipboard) return;
  const SECRET = '__MALO_CLIP_SECRET__';
  let text = __MALO_CLIP_TEXT__;
  let replaying = false;
  const tell = (value) => {
    try { window.webkit.messageHandlers.__MALO_CLIP_HANDLER__.postMessage(value); } catch (error) { /* engine gone */ }
  };
  const TEXT_TYPES = /^(text|search|url|tel|password|email|number)$/;
  const isField = (element) => element instanceof HTMLTextAreaElement || (element instanceof HTMLInputElement && TEXT_TYPES.test(element.type));
  const focused = () => {
    let element = document.activeElement;
    while (element && element.shadowRoot && element.shadowRoot.activeElement) element = element.shadowRoot.activeElement;
    return element;
  };
  const editable = (element) => (isField(element) ? !element.readOnly && !element.disabled : !!(element && element.isContentEditable));
  // Where the browser aims clipboard events: the focused element, else the selection's.
  const target = () => {
    const element = focused();
    if (element && element !== document.body) return element;
    const selection = getSelection();
    const node = selection && selection.anchorNode;
    return (node && (node.nodeType === 1 ? node : node.parentElement)) || document.body || document.documentElement;
  };
  const selected = () => {
    const element = focused();
    if (isField(element)) {
      try { return element.value.slice(element.selectionStart, element.selectionEnd); } catch (error) { return ''; }
    }
    const selection = getSelection();
    return selection ? selection.toString() : '';
  };
  const play = (kind, at, data) => {
    const event = new ClipboardEvent(kind, { bubbles: true, cancelable: true, composed: true, clipboardData: data });
    replaying = true;
    try { at.dispatchEvent(event); } finally { replaying = false; }
    return event;
  };
  // A copy or cut: answers the text it put on the session's clipboard, or null (nothing
  // selected and nothing set by the page: the clipboard stays as it was).
  const copy = (kind, at) => {
    const data = new DataTransfer();
    const event = play(kind, at, data);
    if (event.defaultPrevented) return data.getData('text/plain');
    const copied = selected();
    if (!copied) return null;
    if (kind === 'cut' && editable(focused())) document.execCommand('delete');
    return copied;
  };
  // A paste of the session's clipboard: the page's listeners first, then (unless one
  // cancelled it) the text typed into the focused editable element.
  const paste = (at) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    const event = play('paste', at, data);
    if (event.defaultPrevented) return { pasted: false, handled_by_page: true };
    if (!editable(focused()) || text === '') return { pasted: false, handled_by_page: false };
    document.execCommand('insertText', false, text);
    return { pasted: true, handled_by_page: false };
  };
  // The session's clipboard changed: this frame and its children see it.
  const set = (value) => {
    text = String(value);
    for (let index = 0; index < window.frames.length; index += 1) {
      try { window.frames[index].postMessage({ maloClipboard: SECRET, text }, '*'); } catch (error) { /* gone */ }
    }
  };
  for (const kind of ['copy', 'cut']) {
    window.addEventListener(kind, (event) => {
      if (replaying) return;
      event.stopImmediatePropagation();
      event.preventDefault();
      const copied = copy(kind, event.target instanceof Node ? event.target : target());
      if (copied !== null) { set(copied); tell(copied); }
    }, true);
  }
  window.addEventListener('paste', (event) => {
    if (replaying) return;
    event.stopImmediatePropagation();
    event.preventDefault();
    paste(event.target instanceof Node ? event.target : target());
  }, true);
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || typeof data !== 'object' || data.maloClipboard !== SECRET) return;
    event.stopImmediatePropagation();
    if (event.source !== window.parent || window.parent === window) return;
    set(data.text);
  }, true);
  Object.defineProperty(globalThis, '__maloClipboard', {
    value: Object.freeze({
      set,
      // The tool's copy, cut and paste, as a person's key would do them in the main frame.
      copy: (kind) => { const copied = copy(kind || 'copy', target()); if (copied !== null) set(copied); return copied; },
      paste: () => paste(target()),
    }),
    enumerable: false,
  });
})();
