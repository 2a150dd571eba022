// malo's media emulation (engine/webkit/emulation.rs): in the page's own world, every frame,
// before the page's scripts. WebKitGTK keeps prefers-color-scheme, prefers-reduced-motion and
// forced-colors per process, so a session's own values are given here: the conditions on
// those features in the document's style sheets are rewritten to always-true or
// always-false ones, and matchMedia answers for them (and tells its listeners of changes).
// The page can see this (a rewritten rule's mediaText, matchMedia's source); cross-origin
// style sheets, whose rules no script may read, keep the engine's own values.
(() => {
  'use strict';
  const channel = '__MALO_MEDIA_CHANNEL__';
  let state = __MALO_MEDIA_STATE__;
  const nativeMatchMedia = window.matchMedia;
  if (typeof nativeMatchMedia !== 'function') return;
  const WeakRefType = globalThis.WeakRef;
  const FEATURE = /\(\s*(prefers-color-scheme|prefers-reduced-motion|forced-colors)\s*(?::\s*([a-z-]+)\s*)?\)/gi;
  const ALWAYS = '(min-width: 0px)';
  const NEVER = '(not (min-width: 0px))';
  const mentions = (text) => { FEATURE.lastIndex = 0; return FEATURE.test(text); };
  // A media query text with each emulated feature replaced by a condition of its value.
  const rewrite = (text) => {
    FEATURE.lastIndex = 0;
    return text.replace(FEATURE, (whole, name, value) => {
      const feature = name.toLowerCase();
      const emulated = state[feature];
      if (emulated === undefined) return whole;
      let matches;
      if (value === undefined) matches = feature === 'prefers-color-scheme' ? true : emulated !== (feature === 'forced-colors' ? 'none' : 'no-preference');
      else matches = value.toLowerCase() === emulated;
      return matches ? ALWAYS : NEVER;
    });
  };

  // ---- style sheets --------------------------------------------------------------------------
  const originals = new WeakMap();
  const scanned = new WeakMap();
  let generation = 0;
  const rewriteList = (list) => {
    if (!list) return;
    let original = originals.get(list);
    if (original === undefined) {
      original = list.mediaText;
      if (!mentions(original)) return;
      originals.set(list, original);
    }
    const wanted = rewrite(original);
    if (list.mediaText !== wanted) list.mediaText = wanted;
  };
  const walkRules = (rules) => {
    for (const rule of rules) {
      if (rule.media) rewriteList(rule.media);
      if (rule.styleSheet) walkSheet(rule.styleSheet);
      let inner = null;
      try { inner = rule.cssRules; } catch (error) { inner = null; }
      if (inner) walkRules(inner);
    }
  };
  const walkSheet = (sheet) => {
    if (!sheet || scanned.get(sheet) === generation) return;
    scanned.set(sheet, generation);
    rewriteList(sheet.media);
    let rules = null;
    try { rules = sheet.cssRules; } catch (error) { return; } // cross-origin: unreadable
    if (rules) walkRules(rules);
  };
  const scan = () => {
    try {
      for (const sheet of document.styleSheets) walkSheet(sheet);
      for (const sheet of document.adoptedStyleSheets || []) walkSheet(sheet);
    } catch (error) { /* never the page's problem */ }
  };
  new MutationObserver(scan).observe(document, { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['media', 'href', 'rel'] });
  document.addEventListener('load', (event) => { if (event.target && event.target.localName === 'link') scan(); }, true);
  document.addEventListener('DOMContentLoaded', scan, true);

  // ---- matchMedia ----------------------------------------------------------------------------
  const tracked = [];
  const define = (object, name, get) => Object.defineProperty(object, name, { get, configurable: true, enumerable: true });
  const matchMedia = function matchMedia(query) {
    const text = String(query);
    if (!mentions(text)) return nativeMatchMedia.call(window, text);
    const list = nativeMatchMedia.call(window, rewrite(text));
    const media = nativeMatchMedia.call(window, text).media;
    define(list, 'media', () => media);
    define(list, 'matches', () => nativeMatchMedia.call(window, rewrite(text)).matches);
    if (WeakRefType) tracked.push({ ref: new WeakRefType(list), last: list.matches, media });
    return list;
  };
  Object.defineProperty(window, 'matchMedia', { value: matchMedia, writable: true, configurable: true, enumerable: true });

  // ---- changes at run time -------------------------------------------------------------------
  document.addEventListener(channel, (event) => {
    let next;
    try { next = JSON.parse(event.detail); } catch (error) { return; }
    if (!next || typeof next !== 'object') return;
    state = next;
    generation += 1;
    scan();
    for (let i = tracked.length - 1; i >= 0; i -= 1) {
      const entry = tracked[i];
      const list = entry.ref.deref();
      if (!list) { tracked.splice(i, 1); continue; }
      const now = list.matches;
      if (now === entry.last) continue;
      entry.last = now;
      try { list.dispatchEvent(new MediaQueryListEvent('change', { media: entry.media, matches: now })); } catch (error) { /* keep going */ }
    }
  });
  scan();
})();
