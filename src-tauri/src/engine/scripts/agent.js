// malo's page agent. Installed by the engine as a user script in every frame (cross-origin
// ones too), at document start, in the isolated script world "malo": it sees the DOM but
// not the page's globals, so a page that overrides DOM methods or JSON cannot affect it,
// and the page cannot see or call it.
//
// The main frame is driven with `__malo.handle(op, args)` (evaluated from Rust). A child
// frame is reached by relaying the operation down the frame tree with postMessage; our
// capturing listener is registered before any page script, stops the event, and only obeys
// messages that come from the parent window and carry the session's secret. Results of
// relayed operations go straight to Rust through the world's private message handler, so
// a parent page never sees a cross-origin child's data.
(() => {
  'use strict';
  if (globalThis.__malo) return;
  const SECRET = '__MALO_SECRET__';
  // Caps of single strings and nested lists in snapshots (docs/API.md lists them).
  const NAME_CHARS = 80;
  const VALUE_CHARS = 200;
  const CELL_CHARS = 40;
  const MAX_OPTIONS = 50;
  const MAX_COLUMNS = 20;

  // ---- refs: element <-> number, stable while the element lives ------------------------
  const elementByRef = new Map();   // number -> WeakRef<Element>
  const refByElement = new WeakMap();
  let nextRef = 1;
  const frameById = new Map();      // number -> WeakRef<HTMLIFrameElement>
  const frameIdByElement = new WeakMap();
  let nextFrame = 1;

  function useBase(base) { if (typeof base === 'number' && base > nextRef) nextRef = base; }
  function refFor(element) {
    let ref = refByElement.get(element);
    if (ref === undefined) {
      ref = nextRef++;
      refByElement.set(element, ref);
      elementByRef.set(ref, new WeakRef(element));
    }
    return ref;
  }
  function elementFor(ref) {
    const held = elementByRef.get(ref);
    const element = held && held.deref();
    if (!element || !element.isConnected) {
      elementByRef.delete(ref);
      return null;
    }
    return element;
  }
  function frameIdFor(iframe) {
    let id = frameIdByElement.get(iframe);
    if (id === undefined) {
      id = nextFrame++;
      frameIdByElement.set(iframe, id);
      frameById.set(id, new WeakRef(iframe));
    }
    return id;
  }
  function frameFor(id) {
    const held = frameById.get(id);
    const iframe = held && held.deref();
    return iframe && iframe.isConnected ? iframe : null;
  }

  class AgentError extends Error {
    constructor(code, message, details) { super(message); this.code = code; this.details = details || {}; }
  }

  // ---- tree walking, across open shadow roots ----------------------------------------------
  function* walk(root) {
    const stack = [root];
    while (stack.length) {
      const node = stack.pop();
      const children = node.children || [];
      for (let index = children.length - 1; index >= 0; index--) stack.push(children[index]);
      if (node.shadowRoot) stack.push(node.shadowRoot);
      if (node.nodeType === 1) yield node;
    }
  }
  function queryAll(selector, limit) {
    const parts = String(selector).split('>>>').map((part) => part.trim());
    let scopes = [document];
    for (let level = 0; level < parts.length; level++) {
      const found = [];
      for (const scope of scopes) {
        let matches;
        try { matches = scope.querySelectorAll(parts[level]); } catch (error) {
          throw new AgentError('E_BAD_REQUEST', 'invalid selector ' + JSON.stringify(parts[level]) + ': ' + error.message);
        }
        for (const match of matches) found.push(level + 1 < parts.length ? (match.shadowRoot || match) : match);
      }
      scopes = found;
    }
    if (scopes.length === 0 && parts.length === 1) {
      // Not in the light DOM: look inside open shadow roots too.
      for (const element of walk(document)) {
        if (element.shadowRoot) {
          try { scopes.push(...element.shadowRoot.querySelectorAll(parts[0])); } catch (error) { break; }
        }
        if (limit && scopes.length >= limit) break;
      }
    }
    return limit ? scopes.slice(0, limit) : scopes;
  }

  // ---- roles, names, states ----------------------------------------------------------------
  // Input types that take typed text; any type HTML does not know is text (input.type says
  // "text" then), so the effective type decides, never the attribute.
  const TEXT_INPUTS = new Set(['text', 'email', 'search', 'url', 'tel', 'password', 'number']);
  // Input types whose value a picker sets (fill sets it, checked for its format).
  const PICKER_INPUTS = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range']);
  function inputType(element) { return element.localName === 'input' ? String(element.type || 'text').toLowerCase() : undefined; }
  function roleOf(element) {
    const explicit = element.getAttribute('role');
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = element.localName;
    switch (tag) {
      case 'a': return element.hasAttribute('href') ? 'link' : null;
      case 'button': return 'button';
      case 'select': return element.multiple || element.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'summary': return 'button';
      case 'details': return 'group';
      case 'dialog': return 'dialog';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'header': return element.closest('article,aside,main,nav,section') ? null : 'banner';
      case 'footer': return element.closest('article,aside,main,nav,section') ? null : 'contentinfo';
      case 'aside': return 'complementary';
      case 'form': return 'form';
      case 'table': return 'table';
      case 'iframe': return 'iframe';
      case 'img': return 'img';
      case 'input': {
        const type = inputType(element);
        if (type === 'hidden') return null;
        if (type === 'checkbox') return 'checkbox';
        if (type === 'radio') return 'radio';
        if (type === 'range') return 'slider';
        if (type === 'number') return 'spinbutton';
        if (type === 'search') return 'searchbox';
        if (['submit', 'button', 'reset', 'image'].includes(type)) return 'button';
        if (type === 'file') return 'button';
        if (type === 'color') return 'button';
        return 'textbox';
      }
    }
    if (element.isContentEditable && (!element.parentElement || !element.parentElement.isContentEditable)) return 'textbox';
    return null;
  }
  const INTERACTIVE_ROLES = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'listbox', 'checkbox', 'radio', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem', 'gridcell']);
  function isInteractive(element, role) {
    if (role && INTERACTIVE_ROLES.has(role)) return true;
    if (element.localName === 'summary') return true;
    const tabindex = element.getAttribute('tabindex');
    if (tabindex !== null && tabindex !== '-1' && element.localName !== 'iframe' && !['dialog', 'main', 'form', 'table', 'heading'].includes(role)) return true;
    if (element.hasAttribute('onclick')) return true;
    return false;
  }
  function clean(text, limit) {
    const collapsed = String(text || '').replace(/\s+/g, ' ').trim();
    return collapsed.length > limit ? collapsed.slice(0, limit - 1) + '…' : collapsed;
  }
  function textOfIds(element, ids) {
    const root = element.getRootNode();
    return ids.split(/\s+/).map((id) => {
      const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      return target ? target.textContent : '';
    }).join(' ');
  }
  function nameOf(element, role) {
    const labelledby = element.getAttribute('aria-labelledby');
    if (labelledby) { const text = clean(textOfIds(element, labelledby), NAME_CHARS); if (text) return text; }
    const label = element.getAttribute('aria-label');
    if (label && label.trim()) return clean(label, NAME_CHARS);
    if (element.labels && element.labels.length) {
      const text = clean(Array.from(element.labels).map((node) => node.innerText || node.textContent).join(' '), NAME_CHARS);
      if (text) return text;
    }
    const tag = element.localName;
    if (tag === 'input') {
      const type = inputType(element);
      if (['submit', 'button', 'reset'].includes(type)) return clean(element.value || type, NAME_CHARS);
      if (type === 'image') return clean(element.alt || 'image', NAME_CHARS);
    }
    if (tag === 'img') return clean(element.alt, NAME_CHARS);
    if (tag === 'iframe') return clean(element.title || element.name, NAME_CHARS);
    if (['button', 'link', 'tab', 'menuitem', 'option', 'heading', 'summary', 'checkbox', 'radio', 'switch', 'treeitem', 'gridcell'].includes(role) || tag === 'summary') {
      const text = clean(element.innerText !== undefined ? element.innerText : element.textContent, NAME_CHARS);
      if (text) return text;
    }
    const fallback = element.getAttribute('placeholder') || element.getAttribute('title') || element.getAttribute('name');
    return clean(fallback, NAME_CHARS);
  }
  function isSensitive(element) {
    return element.localName === 'input' && (element.type === 'password' || /password|passwd|secret|otp|one-time-code|cc-number|cc-csc/i.test(element.autocomplete || ''));
  }
  function valueOf(element) {
    if (isSensitive(element)) return '[redacted]';
    if (element.localName === 'select') {
      return Array.from(element.selectedOptions).map((option) => option.value).join(',');
    }
    if ('value' in element && typeof element.value === 'string') return clean(element.value, VALUE_CHARS);
    if (element.isContentEditable) return clean(element.innerText, VALUE_CHARS);
    return undefined;
  }
  function isDisabled(element) {
    if (element.disabled) return true;
    if (element.getAttribute('aria-disabled') === 'true') return true;
    const fieldset = element.closest && element.closest('fieldset[disabled]');
    return !!(fieldset && !fieldset.querySelector('legend')?.contains(element));
  }
  // Visible as Playwright defines it: a non-empty box and not `visibility: hidden` (nor in
  // a `display: none` or `content-visibility: hidden` subtree). `opacity: 0` is visible: the
  // styled checkboxes of UI kits are transparent inputs laid over their drawing.
  function isVisible(element) {
    if (typeof element.checkVisibility === 'function') {
      if (!element.checkVisibility({ checkVisibilityCSS: true })) return false;
    } else {
      const style = getComputedStyle(element);
      if (style.visibility !== 'visible' || style.display === 'none') return false;
    }
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0;
  }

  // ---- selectors -----------------------------------------------------------------------------
  function cssEscape(text) { return CSS.escape(text); }
  function uniqueIn(root, selector) {
    try { return root.querySelectorAll(selector).length === 1; } catch (error) { return false; }
  }
  function selectorFor(element) {
    const root = element.getRootNode();
    const local = localSelector(element, root);
    if (root instanceof ShadowRoot) return selectorFor(root.host) + ' >>> ' + local;
    return local;
  }
  function localSelector(element, root) {
    if (element.id && uniqueIn(root, '#' + cssEscape(element.id))) return '#' + cssEscape(element.id);
    for (const attribute of ['data-testid', 'data-test', 'name', 'aria-label']) {
      const value = element.getAttribute(attribute);
      if (value) {
        const candidate = element.localName + '[' + attribute + '="' + value.replace(/["\\]/g, '\\$&') + '"]';
        if (uniqueIn(root, candidate)) return candidate;
      }
    }
    const steps = [];
    let current = element;
    while (current && current.nodeType === 1) {
      if (current !== element && current.id && uniqueIn(root, '#' + cssEscape(current.id))) {
        steps.unshift('#' + cssEscape(current.id));
        break;
      }
      let step = current.localName;
      const parent = current.parentElement;
      if (parent) {
        const siblings = Array.from(parent.children).filter((child) => child.localName === current.localName);
        if (siblings.length > 1) step += ':nth-of-type(' + (siblings.indexOf(current) + 1) + ')';
      }
      steps.unshift(step);
      current = parent;
    }
    return steps.join(' > ');
  }

  // ---- geometry --------------------------------------------------------------------------
  // The latest box read of each element, with when: stability checks compare with it.
  const measured = new WeakMap();
  function measureBox(element) {
    const rect = element.getBoundingClientRect();
    // The timeline's time is the current frame's: it tells two frames apart.
    const frame = document.timeline ? document.timeline.currentTime : null;
    const now = { at: performance.now(), frame, left: rect.left, top: rect.top, width: rect.width, height: rect.height };
    measured.set(element, now);
    return now;
  }
  function box(element) {
    const rect = measureBox(element);
    return { x: Math.round(rect.left), y: Math.round(rect.top), w: Math.round(rect.width), h: Math.round(rect.height) };
  }
  function inViewport(rect) {
    return rect.x < innerWidth && rect.y < innerHeight && rect.x + rect.w > 0 && rect.y + rect.h > 0;
  }
  function frameContentBox(iframe) {
    const rect = iframe.getBoundingClientRect();
    const style = getComputedStyle(iframe);
    const left = rect.left + iframe.clientLeft + parseFloat(style.paddingLeft || '0');
    const top = rect.top + iframe.clientTop + parseFloat(style.paddingTop || '0');
    return { x: left, y: top, w: iframe.clientWidth, h: iframe.clientHeight };
  }
  function describe(element) {
    if (!element) return 'nothing';
    const role = roleOf(element);
    let text = element.localName;
    if (element.id) text += '#' + element.id;
    else if (element.classList.length) text += '.' + Array.from(element.classList).slice(0, 2).join('.');
    const name = nameOf(element, role);
    return name ? text + ' "' + name + '"' : text;
  }
  function deepElementFromPoint(x, y) {
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }
  function contains(element, other) {
    for (let node = other; node; node = node.parentNode || (node instanceof ShadowRoot ? node.host : null)) {
      if (node === element) return true;
    }
    return false;
  }

  // ---- describing one element --------------------------------------------------------------
  function nodeInfo(element, role) {
    const info = { ref: refFor(element), role: role || element.localName, name: nameOf(element, role) };
    const tag = element.localName;
    if (tag === 'input') info.type = inputType(element);
    const value = valueOf(element);
    if (value !== undefined && !['link', 'button', 'checkbox', 'radio', 'switch'].includes(role)) info.value = value;
    if (isSensitive(element)) info.sensitive = true;
    if ('checked' in element && (role === 'checkbox' || role === 'radio' || role === 'switch')) info.checked = element.checked;
    else if (element.hasAttribute('aria-checked')) info.checked = element.getAttribute('aria-checked') === 'true';
    if (isDisabled(element)) info.disabled = true;
    if (element.required || element.getAttribute('aria-required') === 'true') info.required = true;
    if (element.hasAttribute('aria-expanded')) info.expanded = element.getAttribute('aria-expanded') === 'true';
    if (element.getAttribute('aria-selected') === 'true') info.selected = true;
    if (role === 'link') info.href = element.getAttribute('href');
    if (element.getAttribute('placeholder') && info.name !== clean(element.getAttribute('placeholder'), NAME_CHARS)) info.placeholder = clean(element.getAttribute('placeholder'), NAME_CHARS);
    if (tag === 'select') {
      info.options = Array.from(element.options).slice(0, MAX_OPTIONS).map((option) => ({ value: option.value, label: clean(option.label || option.text, 60), selected: option.selected || undefined }));
      if (element.options.length > MAX_OPTIONS) info.options_truncated = true;
    }
    if (document.activeElement === element) info.focused = true;
    info.selector = selectorFor(element);
    Object.assign(info, box(element));
    info.in_viewport = inViewport(info);
    return info;
  }

  // ---- snapshot --------------------------------------------------------------------------
  function snapshot(args) {
    useBase(args.base);
    const maxItems = args.max_items || 500;
    const maxChars = args.max_chars === undefined ? 4000 : args.max_chars;
    const result = {
      url: location.href, title: document.title,
      viewport: { width: innerWidth, height: innerHeight, scroll_x: Math.round(scrollX), scroll_y: Math.round(scrollY),
        document_width: document.documentElement ? document.documentElement.scrollWidth : 0,
        document_height: document.documentElement ? document.documentElement.scrollHeight : 0 },
      nodes: [], headings: [], landmarks: [], forms: [], tables: [], frames: [], dialogs: [], live: [],
      element_count: 0, items_truncated: false, totals: {},
    };
    // Every list holds at most max_items entries; `totals` counts what each list had, so
    // that the answer can say which lists were cut and from how many.
    const add = (list, item) => {
      result.totals[list] = (result.totals[list] || 0) + 1;
      if (result[list].length < maxItems) result[list].push(item);
    };
    const forms = new Map();
    for (const element of walk(document)) {
      result.element_count++;
      const tag = element.localName;
      if (tag === 'script' || tag === 'style' || tag === 'template' || tag === 'head' || tag === 'noscript') continue;
      const role = roleOf(element);
      if (tag === 'iframe' || tag === 'frame') {
        if (!isVisible(element)) continue;
        const content = frameContentBox(element);
        add('frames', { frame: frameIdFor(element), name: nameOf(element, 'iframe'), src: element.getAttribute('src') || '',
          x: Math.round(content.x), y: Math.round(content.y), w: Math.round(content.w), h: Math.round(content.h) });
        continue;
      }
      if (role === 'heading') {
        if (isVisible(element)) {
          const level = Number(element.getAttribute('aria-level')) || Number(tag.slice(1)) || 2;
          add('headings', { level, text: clean(element.innerText, NAME_CHARS) });
        }
        continue;
      }
      if (['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'region'].includes(role)) {
        if (role !== 'region' || element.hasAttribute('aria-label') || element.hasAttribute('aria-labelledby')) {
          add('landmarks', { role, name: nameOf(element, role) || undefined });
        }
      }
      if (role === 'dialog' || role === 'alertdialog') {
        const open = tag === 'dialog' ? element.open : isVisible(element);
        if (open) add('dialogs', { role, name: nameOf(element, role) || undefined, modal: tag === 'dialog' ? element.matches(':modal') : element.getAttribute('aria-modal') === 'true' });
      }
      if (role === 'alert' || role === 'status' || role === 'log' || (element.hasAttribute('aria-live') && element.getAttribute('aria-live') !== 'off')) {
        const text = clean(element.innerText, VALUE_CHARS);
        if (text) add('live', { role: role || 'live', text });
      }
      if (tag === 'table' && isVisible(element)) {
        const rows = element.rows ? element.rows.length : 0;
        const head = element.tHead && element.tHead.rows[0] ? element.tHead.rows[0] : (element.rows && element.rows[0]);
        const cells = (row) => Array.from(row.cells).slice(0, MAX_COLUMNS).map((cell) => clean(cell.innerText, CELL_CHARS));
        const headers = head ? cells(head) : [];
        const columns = head ? head.cells.length : 0;
        const firstBody = element.tBodies && element.tBodies[0] && element.tBodies[0].rows[0];
        const caption = element.caption ? element.caption.innerText : element.getAttribute('aria-label');
        add('tables', { caption: caption ? clean(caption, NAME_CHARS) : undefined, rows, columns, headers, first_row: firstBody ? cells(firstBody) : undefined });
      }
      if (!isInteractive(element, role)) continue;
      if (!isVisible(element)) continue;
      if (result.nodes.length >= maxItems) { add('nodes', null); continue; }
      const info = nodeInfo(element, role);
      if (element.form) {
        const form = element.form;
        if (!forms.has(form)) {
          forms.set(form, { name: nameOf(form, 'form') || form.getAttribute('id') || undefined, action: form.getAttribute('action') || undefined,
            method: (form.getAttribute('method') || 'get').toLowerCase(), fields: [] });
        }
        forms.get(form).fields.push(info.ref);
        info.form = Array.from(forms.keys()).indexOf(form);
      }
      add('nodes', info);
    }
    for (const form of forms.values()) add('forms', form);
    const text = (document.body ? document.body.innerText : '').replace(/[ \t\u00a0]+/g, ' ').replace(/\s*\n\s*/g, '\n').trim();
    result.text = text.slice(0, maxChars);
    result.text_length = text.length;
    result.text_truncated = text.length > maxChars;
    result.next_ref = nextRef;
    return result;
  }

  // ---- locating a target for an action ------------------------------------------------------
  function target(args) {
    useBase(args.base);
    if (typeof args.ref === 'number') {
      const element = elementFor(args.ref);
      if (!element) throw new AgentError('E_STALE_REF', 'the element of ref e' + args.ref + ' is gone (the page changed); take a new snapshot', { ref: 'e' + args.ref });
      return element;
    }
    if (typeof args.selector === 'string') {
      const [element] = queryAll(args.selector, 1);
      if (!element) throw new AgentError('E_NOT_FOUND', 'no element matches ' + JSON.stringify(args.selector), { selector: args.selector });
      return element;
    }
    throw new AgentError('E_BAD_REQUEST', 'give a ref or a selector');
  }
  function scrollIntoViewIfNeeded(element) {
    const rect = element.getBoundingClientRect();
    const fully = rect.left >= 0 && rect.top >= 0 && rect.right <= innerWidth && rect.bottom <= innerHeight;
    if (!fully) element.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  }
  // Scrolls the element into view and reports where its centre is and whether a click there
  // would reach it. A control that is not drawn itself (a hidden checkbox behind a styled
  // label) is acted on through its visible label, as a person would click it. With
  // `stable`, the box is measured again at the next animation frame: `moving` if it changed.
  function locate(args) {
    const element = target(args);
    if (args.scroll !== false) scrollIntoViewIfNeeded(element);
    let actOn = element;
    let via_label;
    if (!isVisible(element) && element.labels) {
      const label = Array.from(element.labels).find(isVisible);
      if (label) {
        actOn = label;
        via_label = describe(label);
        if (args.scroll !== false) scrollIntoViewIfNeeded(label);
      }
    }
    const role = roleOf(element);
    const type = inputType(element);
    const previous = measured.get(actOn);
    const measure = () => measureBox(actOn);
    const describeAt = (rect) => {
      const x = rect.left + rect.width / 2;
      const y = rect.top + rect.height / 2;
      const visible = isVisible(actOn);
      let covered_by = null;
      if (visible && x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) {
        const hit = deepElementFromPoint(x, y);
        const reaches = hit && (contains(actOn, hit) || contains(element, hit) || (element.labels && Array.from(element.labels).some((label) => contains(label, hit))));
        if (hit && !reaches) covered_by = describe(hit);
      }
      const editable = element.isContentEditable || (element.localName === 'input' && !element.readOnly && TEXT_INPUTS.has(type))
        || (element.localName === 'textarea' && !element.readOnly);
      return { ref: refFor(element), role: role || element.localName, name: nameOf(element, role), tag: element.localName, type,
        x, y, w: Math.round(rect.width), h: Math.round(rect.height), visible, disabled: isDisabled(element), editable,
        readonly: (element.readOnly === true) || element.getAttribute('aria-readonly') === 'true' || undefined,
        checked: 'checked' in element && ['checkbox', 'radio', 'switch'].includes(role || '') ? element.checked : (element.hasAttribute('aria-checked') ? element.getAttribute('aria-checked') === 'true' : undefined),
        value: valueOf(element), covered_by, via_label,
        in_viewport: x >= 0 && y >= 0 && x < innerWidth && y < innerHeight, sensitive: isSensitive(element) || undefined,
        next_ref: nextRef };
    };
    const first = measure();
    if (!args.stable || !mayBeMoving(actOn, previous, first)) return describeAt(first);
    return new Promise((resolve) => {
      let done = false;
      const finish = (moving) => {
        if (done) return;
        done = true;
        const second = measure();
        const moved = moving && !sameBox(first, second);
        resolve(Object.assign(describeAt(second), { moving: moved || undefined }));
      };
      // Two frames on: the page's own frame callbacks have run in between, whatever order
      // the callbacks of one frame run in.
      requestAnimationFrame(() => requestAnimationFrame(() => finish(true)));
      // A document that paints no frames (hidden, throttled) cannot move either.
      setTimeout(() => finish(false), 150);
    });
  }
  // Whether the element may be moving. It is known to hold still when no animation or
  // transition runs on it or its ancestors, and its box now is the box measured in an
  // earlier frame (a snapshot, an earlier action) less than 5 s ago: two frames, one box.
  // Otherwise its box is compared over the next animation frames, which costs frames.
  function mayBeMoving(element, previous, now) {
    if (!previous || now.frame === null || previous.frame === now.frame || now.at - previous.at > 5000 || !sameBox(previous, now)) return true;
    if (typeof document.getAnimations !== 'function') return true;
    return document.getAnimations().some((animation) => {
      const target = animation.playState === 'running' && animation.effect && animation.effect.target;
      return !!target && contains(target, element);
    });
  }
  function sameBox(one, other) {
    return one.left === other.left && one.top === other.top && one.width === other.width && one.height === other.height;
  }
  function frameBox(args) {
    const iframe = frameFor(args.frame);
    if (!iframe) throw new AgentError('E_STALE_REF', 'the frame is gone; take a new snapshot');
    if (args.scroll !== false) scrollIntoViewIfNeeded(iframe);
    const content = frameContentBox(iframe);
    return { x: content.x, y: content.y, w: content.w, h: content.h };
  }

  // What a click at (x, y) of this document reaches, when it should reach the frame: null
  // when it is the frame, else a description of what covers it.
  function frameHit(args) {
    const iframe = frameFor(args.frame);
    if (!iframe) throw new AgentError('E_STALE_REF', 'the frame is gone; take a new snapshot');
    const hit = deepElementFromPoint(args.x, args.y);
    return { covered_by: !hit || hit === iframe ? null : describe(hit) };
  }

  // ---- small operations ---------------------------------------------------------------------
  // Focus without WebKit's deferred reveal: a plain focus() schedules a scroll to the element
  // that runs at some later layout, possibly after a later scroll and under a later click,
  // which then lands elsewhere. Scroll now instead, if needed, and only now.
  function focusNow(element) {
    element.focus({ preventScroll: true });
    scrollIntoViewIfNeeded(element);
  }
  function focus(args) { const element = target(args); focusNow(element); return { focused: document.activeElement === element || element.contains(document.activeElement) }; }
  // Selects all of a field's (or an editable element's) content.
  function selectContents(element) {
    if (typeof element.select === 'function' && 'value' in element) { element.select(); return; }
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
  // Focus, optionally select everything, and type the text as one trusted insertion.
  function fill(args) {
    const element = target(args);
    focusNow(element);
    if (args.clear) {
      selectContents(element);
    } else if ('value' in element && typeof element.setSelectionRange === 'function') {
      try { element.setSelectionRange(element.value.length, element.value.length); } catch (error) { /* types without selection */ }
    }
    // From the isolated world, execCommand('insertText') fires a trusted input event.
    const inserted = args.text === '' ? document.execCommand('delete', false) : document.execCommand('insertText', false, args.text);
    return { inserted, value: valueOf(element), focused: document.activeElement === element };
  }
  // The formats a picker produces, per input type (HTML's value syntax).
  const PICKER_FORMATS = {
    date: [/^\d{4,}-\d{2}-\d{2}$/, 'YYYY-MM-DD'],
    time: [/^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, 'HH:MM or HH:MM:SS'],
    'datetime-local': [/^\d{4,}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, 'YYYY-MM-DDTHH:MM'],
    month: [/^\d{4,}-\d{2}$/, 'YYYY-MM'],
    week: [/^\d{4,}-W\d{2}$/, 'YYYY-Www'],
    color: [/^#[0-9a-fA-F]{6}$/, '#rrggbb'],
    range: [/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, 'a number'],
  };
  // Inputs that take no typed text (date and time pickers, colour, range): the value is set
  // as a person's picker sets it, then announced with input and change. A value the input
  // refuses (wrong format, no such date) is an error, never a silent empty field.
  function setValue(args) {
    const element = target(args);
    const type = inputType(element);
    const format = PICKER_FORMATS[type];
    if (!format) throw new AgentError('E_BAD_REQUEST', describe(element) + ' does not take a picked value');
    const text = type === 'color' ? args.text.toLowerCase() : args.text;
    if (!format[0].test(text)) {
      throw new AgentError('E_BAD_REQUEST', JSON.stringify(args.text) + ' is not a valid ' + type + ' value (expected ' + format[1] + ')', { type, expected: format[1] });
    }
    focusNow(element);
    const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
    const before = element.value;
    setter.call(element, text);
    if (element.value === '' || (type !== 'range' && type !== 'datetime-local' && type !== 'time' && element.value !== text)) {
      setter.call(element, before);
      throw new AgentError('E_BAD_REQUEST', JSON.stringify(args.text) + ' is not a valid ' + type + ' value (expected ' + format[1] + ')', { type, expected: format[1] });
    }
    element.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
    element.dispatchEvent(new Event('change', { bubbles: true }));
    return { value: valueOf(element) };
  }
  function select(args) {
    const element = target(args);
    if (element.localName !== 'select') throw new AgentError('E_BAD_REQUEST', 'select works on <select> elements; this is ' + describe(element));
    const wanted = args.values || [];
    const byLabel = args.by === 'label';
    const byIndex = args.by === 'index';
    const options = Array.from(element.options);
    const chosen = wanted.map((want) => byIndex ? options[Number(want)]
      : options.find((option) => byLabel ? clean(option.label || option.text, 1000) === want : option.value === want));
    const missing = wanted.filter((want, index) => !chosen[index]);
    if (missing.length && byIndex) throw new AgentError('E_NOT_FOUND', 'no option at index ' + missing[0] + ' (the select has ' + options.length + ')', { options: options.length });
    if (missing.length) throw new AgentError('E_NOT_FOUND', 'no option with ' + (byLabel ? 'label ' : 'value ') + JSON.stringify(missing[0]), { available: options.slice(0, 30).map((option) => byLabel ? option.label : option.value) });
    if (!element.multiple && chosen.length > 1) throw new AgentError('E_BAD_REQUEST', 'this select takes one value');
    focusNow(element);
    for (const option of options) option.selected = chosen.includes(option);
    element.dispatchEvent(new Event('input', { bubbles: true }));
    element.dispatchEvent(new Event('change', { bubbles: true }));
    return { selected: Array.from(element.selectedOptions).map((option) => ({ value: option.value, label: option.label })) };
  }
  function scrollBy(args) { window.scrollBy({ left: args.dx || 0, top: args.dy || 0, behavior: 'instant' }); return { scroll_x: Math.round(scrollX), scroll_y: Math.round(scrollY) }; }

  function extract(args) {
    const limit = args.max_chars;
    const elements = queryAll(args.selector, args.all ? 200 : 1);
    if (!elements.length) throw new AgentError('E_NOT_FOUND', 'no element matches ' + JSON.stringify(args.selector), { selector: args.selector });
    const one = (element) => {
      switch (args.mode) {
        case 'html': return element.outerHTML;
        case 'attribute': return element.getAttribute(args.attribute);
        case 'value': return isSensitive(element) ? '[redacted]' : ('value' in element ? String(element.value) : null);
        default: return element.innerText !== undefined ? element.innerText : element.textContent;
      }
    };
    let truncated = false;
    const cut = (text) => {
      if (typeof text !== 'string') return text;
      if (text.length > limit) { truncated = true; return text.slice(0, limit); }
      return text;
    };
    const values = elements.map(one).map(cut);
    return { matches: queryAll(args.selector, 0).length, value: args.all ? undefined : values[0], values: args.all ? values : undefined, truncated };
  }

  // State of a selector or text, for wait_for and assert.
  function probe(args) {
    const out = {};
    if (typeof args.selector === 'string') {
      const elements = queryAll(args.selector, 0);
      out.count = elements.length;
      const element = elements[0];
      out.exists = !!element;
      out.visible = !!element && isVisible(element);
      if (element) {
        out.enabled = !isDisabled(element);
        out.text = clean(element.innerText !== undefined ? element.innerText : element.textContent, 2000);
        const value = valueOf(element);
        if (value !== undefined) out.value = value;
      }
    }
    if (typeof args.text === 'string') {
      const scope = out.exists && args.selector ? queryAll(args.selector, 1)[0] : document.body;
      const haystack = scope ? (scope.innerText || '') : '';
      out.text_found = haystack.includes(args.text);
    }
    out.url = location.href;
    return out;
  }

  // ---- files: an <input type=file> answered through its own chooser -------------------------
  // Every match of a selector in the document and in every open shadow root, in tree order.
  function deepQueryAll(selector) {
    const found = [];
    for (const element of walk(document)) {
      try { if (element.matches(selector)) found.push(element); } catch (error) {
        throw new AgentError('E_BAD_REQUEST', 'invalid selector ' + JSON.stringify(selector) + ': ' + error.message);
      }
    }
    return found;
  }
  // Finds a file input (a ref, or the nth match of a selector) and checks it takes `count`
  // files; the engine then opens its chooser and answers it with the files.
  function fileInput(args) {
    useBase(args.base);
    let element;
    if (typeof args.ref === 'number') element = target(args);
    else {
      const matches = args.pierce ? deepQueryAll(args.selector) : queryAll(args.selector, 0);
      element = matches[args.nth || 0];
      if (!element) {
        throw new AgentError('E_NOT_FOUND', 'no element matches ' + JSON.stringify(args.selector) + (args.nth ? ' at index ' + args.nth : '')
          + ' (' + matches.length + ' matches)', { selector: args.selector, matches: matches.length });
      }
    }
    if (element.localName !== 'input' || element.type !== 'file') {
      throw new AgentError('E_BAD_REQUEST', describe(element) + ' is not a file input (<input type=file>)', { reason: 'not_a_file_input' });
    }
    if (element.disabled) throw new AgentError('E_DISABLED', 'the file input ' + describe(element) + ' is disabled');
    if (args.count > 1 && !element.multiple) {
      throw new AgentError('E_BAD_REQUEST', 'the file input ' + describe(element) + ' takes one file, not ' + args.count + ' (it has no multiple attribute)', { reason: 'not_multiple' });
    }
    return { ref: refFor(element), multiple: element.multiple, accept: element.accept, selector: selectorFor(element), next_ref: nextRef };
  }
  // Opens the input's chooser as a person's click would (this call counts as a user gesture).
  function openFileChooser(args) {
    const element = target(args);
    element.click();
    return { opened: true };
  }
  // The files an input holds now.
  function fileInputState(args) {
    const element = target(args);
    const files = Array.from(element.files || []);
    return { count: files.length, files: files.map((file) => ({ name: file.name, size: file.size })) };
  }
  // A frame of this document, by a selector of its <iframe>.
  function frameOf(args) {
    const [frame] = queryAll(args.selector, 1);
    if (!frame || !['iframe', 'frame'].includes(frame.localName)) {
      throw new AgentError('E_NOT_FOUND', 'no iframe matches ' + JSON.stringify(args.selector), { frame_selector: args.selector });
    }
    return { frame: frameIdFor(frame) };
  }

  // ---- login -------------------------------------------------------------------------
  const ERROR_TEXT = /(invalid|incorrect|wrong|unknown|bad)\s+(user\s*name|username|e-?mail|password|credentials|login)|(login|sign[- ]?in|authentication)\s+(failed|error)|not\s+recogni[sz]ed|try again/i;
  const SUBMIT_TEXT = /^(log\s*in|login|sign\s*in|signin|submit|continue|next|enter|go)$/i;
  function visibleMatches(selector) { return queryAll(selector, 0).filter(isVisible); }
  // Finds the username, password and submit controls (or uses the given selectors).
  function loginForm(args) {
    useBase(args.base);
    const pick = (selector, what) => {
      if (!selector) return null;
      const [found] = visibleMatches(selector);
      if (!found) throw new AgentError('E_NOT_FOUND', 'no visible ' + what + ' matches ' + JSON.stringify(selector), { selector });
      return found;
    };
    const password = pick(args.password_selector, 'password field') || visibleMatches('input[type=password]')[0];
    if (!password) throw new AgentError('E_NOT_FOUND', 'no visible password field on this page; pass password_selector');
    const scope = password.form || document;
    const candidates = Array.from(scope.querySelectorAll('input')).filter((input) => isVisible(input) && input !== password
      && ['', 'text', 'email', 'tel'].includes((input.getAttribute('type') || '').toLowerCase()));
    const scored = candidates.map((input) => {
      const hint = [input.autocomplete, input.name, input.id, input.getAttribute('placeholder'), nameOf(input, 'textbox')].join(' ').toLowerCase();
      let score = 0;
      if (/username|email|login|user|account|phone/.test(hint)) score += 2;
      if (input.compareDocumentPosition(password) & Node.DOCUMENT_POSITION_FOLLOWING) score += 1;
      return { input, score };
    }).sort((a, b) => b.score - a.score);
    const username = pick(args.username_selector, 'username field') || (scored[0] && scored[0].input) || null;
    let submit = pick(args.submit_selector, 'submit control');
    if (!submit) {
      const buttons = Array.from(scope.querySelectorAll('button, input[type=submit], input[type=image], [role=button]')).filter(isVisible);
      submit = buttons.find((button) => (button.type || '').toLowerCase() === 'submit' && button.localName !== 'a')
        || buttons.find((button) => SUBMIT_TEXT.test(clean(button.innerText || button.value || '', 40))) || null;
    }
    return { password: refFor(password), username: username ? refFor(username) : null, submit: submit ? refFor(submit) : null,
      text_length: (document.body ? document.body.innerText : '').length, url: location.href, next_ref: nextRef };
  }
  // Where a login attempt stands: error shown, password field gone, URL or text changed.
  function loginState(args) {
    const password = elementFor(args.password);
    const text = document.body ? document.body.innerText : '';
    let error = null;
    if (args.error_selector) {
      const [shown] = visibleMatches(args.error_selector);
      if (shown) error = clean(shown.innerText, 200);
    }
    if (!error) {
      const match = text.match(ERROR_TEXT);
      if (match && !(args.errors_before || []).includes(match[0].toLowerCase())) {
        // The whole line the message stands in, as the person would read it.
        const line = text.split('\n').find((candidate) => candidate.includes(match[0]));
        error = clean(line || match[0], 200);
      }
    }
    return {
      url: location.href,
      password_present: !!(password && isVisible(password)),
      success_selector: args.success_selector ? visibleMatches(args.success_selector).length > 0 : false,
      text_length: text.length,
      error,
      errors_now: (text.match(new RegExp(ERROR_TEXT.source, 'gi')) || []).map((found) => found.toLowerCase()),
    };
  }

  // ---- HTML5 drag and drop ------------------------------------------------------------------
  // WebKit hands a drag of a draggable element to the toolkit's native drag, which works on
  // the real screen's pointer, not in a hidden page. So such a drag is played in the page, as
  // the HTML5 model specifies: dragstart on the source, dragenter/dragover on what is under
  // each point, drop where the last dragover was cancelled, dragend; one DataTransfer
  // carries the data. These events are not trusted (isTrusted false).
  // What a press at (x, y) would drag, as WebKit decides: selected text under the point, or
  // the nearest draggable element (draggable=true, a link, an image, -webkit-user-drag).
  function dragSourceAt(x, y) {
    const hit = deepElementFromPoint(x, y);
    const selection = getSelection();
    if (hit && selection && !selection.isCollapsed && selection.rangeCount) {
      const rects = Array.from(selection.getRangeAt(0).getClientRects());
      if (rects.some((rect) => x >= rect.left && x <= rect.right && y >= rect.top && y <= rect.bottom)) {
        return { element: hit, text: selection.toString() };
      }
    }
    for (let node = hit; node; node = node.parentNode || (node instanceof ShadowRoot ? node.host : null)) {
      if (node.nodeType === 1 && (node.draggable || getComputedStyle(node).webkitUserDrag === 'element')) return { element: node, text: null };
    }
    return null;
  }
  function acceptsText(element) {
    return element.isContentEditable || (['input', 'textarea'].includes(element.localName) && !element.readOnly && !element.disabled);
  }
  function html5Drag(args) {
    const found = dragSourceAt(args.from_x, args.from_y);
    if (!found) return { html5: false };
    const source = found.element;
    const data = new DataTransfer();
    if (found.text !== null) data.setData('text/plain', found.text);
    const at = (x, y, extra) => Object.assign({ bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y,
      screenX: x + screenX, screenY: y + screenY, buttons: 1, view: window }, extra);
    const cancelled = (target, type, x, y, related) => {
      const event = new DragEvent(type, at(x, y, { dataTransfer: data, relatedTarget: related || null }));
      return !target.dispatchEvent(event);
    };
    const answer = (extra) => Object.assign({ html5: true, source: describe(source), selection: found.text !== null || undefined }, extra);
    source.dispatchEvent(new PointerEvent('pointerdown', at(args.from_x, args.from_y, { button: 0, pointerType: 'mouse', isPrimary: true })));
    if (!source.dispatchEvent(new MouseEvent('mousedown', at(args.from_x, args.from_y, { button: 0 })))) {
      return answer({ started: false, dropped: false, reason: 'mousedown was cancelled' });
    }
    if (cancelled(source, 'dragstart', args.from_x, args.from_y)) return answer({ started: false, dropped: false, reason: 'dragstart was cancelled' });
    let current = null;
    let accepted = false;
    const steps = Math.max(1, args.steps || 8);
    for (let step = 1; step <= steps; step++) {
      const x = args.from_x + (args.to_x - args.from_x) * step / steps;
      const y = args.from_y + (args.to_y - args.from_y) * step / steps;
      cancelled(source, 'drag', x, y);
      const under = deepElementFromPoint(x, y) || document.body;
      if (under !== current) {
        if (current) cancelled(current, 'dragleave', x, y, under);
        cancelled(under, 'dragenter', x, y, current);
        current = under;
      }
      // A cancelled dragover accepts the drop; a text field accepts text by default.
      accepted = cancelled(current, 'dragover', x, y) || (acceptsText(current) && data.types.includes('text/plain'));
      data.dropEffect = accepted ? (data.effectAllowed === 'copy' ? 'copy' : 'move') : 'none';
    }
    let dropped = false;
    if (accepted && current) {
      dropped = true;
      if (!cancelled(current, 'drop', args.to_x, args.to_y) && acceptsText(current) && data.types.includes('text/plain')) {
        // The default action of a text drop: the text goes in, as typed.
        current.focus({ preventScroll: true });
        document.execCommand('insertText', false, data.getData('text/plain'));
      }
    } else if (current) {
      cancelled(current, 'dragleave', args.to_x, args.to_y);
    }
    if (!dropped) data.dropEffect = 'none';
    cancelled(source, 'dragend', args.to_x, args.to_y);
    return answer({ started: true, dropped, drop_target: current ? describe(current) : null });
  }

  // Every operation Rust may call (engine/agent.rs lists the same names, and a test holds it).
  const operations = { login_form: loginForm, login_state: loginState, snapshot, locate, frame_box: frameBox, frame_hit: frameHit,
    focus, fill, set_value: setValue, select, scroll_by: scrollBy, extract, probe, html5_drag: html5Drag,
    file_input: fileInput, open_file_chooser: openFileChooser, file_input_state: fileInputState, frame_of: frameOf };

  function handle(op, args) {
    const operation = operations[op];
    if (!operation) throw new AgentError('E_INTERNAL', 'unknown agent operation ' + op);
    return operation(args || {});
  }
  // An operation's answer, or a promise of it for the few that wait for a frame.
  function run(op, args) {
    const failed = (error) => ({ ok: false, error: { code: error.code || 'E_SCRIPT_ERROR', message: String(error.message || error), details: error.details || {} } });
    try {
      const result = handle(op, args);
      if (result && typeof result.then === 'function') return result.then((value) => ({ ok: true, result: value }), failed);
      return { ok: true, result };
    } catch (error) {
      return failed(error);
    }
  }

  // ---- relay down the frame tree ------------------------------------------------------------
  function post(message) {
    try { window.webkit.messageHandlers.malo.postMessage(JSON.stringify(message)); } catch (error) { /* no handler: engine gone */ }
  }
  function send(path, op, args, id) {
    const [first, ...rest] = path;
    const iframe = frameFor(first);
    if (!iframe || !iframe.contentWindow) {
      return { ok: false, error: { code: 'E_STALE_REF', message: 'the frame is gone; take a new snapshot', details: {} } };
    }
    iframe.contentWindow.postMessage({ malo: SECRET, path: rest, op, args, id }, '*');
    return { ok: true, sent: true };
  }
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || typeof data !== 'object' || data.malo !== SECRET) return;
    event.stopImmediatePropagation();
    if (event.source !== window.parent || window.parent === window) return;
    if (data.path && data.path.length) {
      const forwarded = send(data.path, data.op, data.args, data.id);
      if (!forwarded.ok) post({ id: data.id, ...forwarded });
      return;
    }
    Promise.resolve(run(data.op, data.args)).then((answer) => post({ id: data.id, ...answer }));
  }, true);

  // ---- what the page says: console lines, uncaught errors, which requests were XHRs --------
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
      post({ kind: 'console', level: String(message.level), text: message.text.slice(0, 4000), frame_url: location.href, ...sourceOf(message.caller) });
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

  Object.defineProperty(globalThis, '__malo', { value: Object.freeze({ run, send, isLeaving, inputCount }), enumerable: false });
})();
