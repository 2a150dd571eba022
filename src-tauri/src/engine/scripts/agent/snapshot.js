// The snapshot operation: one element described (ref, role, name, state, selector, box),
// then the document: interactive elements, headings, landmarks, forms, tables, frames,
// dialogs, live regions and text, each list capped.
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
    result.next_ref = refs.next;
    return result;
  }
