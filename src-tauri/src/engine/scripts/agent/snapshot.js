// The snapshot operation: one element described (ref, role, name, state, selector, box),
// then the document or one element's subtree, read by readContent.
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
  // The document, or the subtree of `ref`/`selector` (`scope`), as content items (see
  // readContent) with the elements they list, and where the viewport is.
  function snapshot(args) {
    useBase(args.base);
    const scoped = typeof args.ref === 'number' || typeof args.selector === 'string';
    const root = scoped ? target(args) : document;
    const maxItems = typeof args.max_items === 'number' ? args.max_items : Infinity;
    const content = readContent(root, maxItems, args.max_chars !== 0);
    const role = scoped ? roleOf(root) : null;
    return Object.assign({
      url: location.href, title: document.title,
      viewport: { width: innerWidth, height: innerHeight, scroll_x: Math.round(scrollX), scroll_y: Math.round(scrollY),
        document_width: document.documentElement ? document.documentElement.scrollWidth : 0,
        document_height: document.documentElement ? document.documentElement.scrollHeight : 0 },
      scope: scoped ? { ref: refFor(root), role: role || root.localName, name: nameOf(root, role) || undefined } : undefined,
    }, content, { next_ref: refs.next });
  }
