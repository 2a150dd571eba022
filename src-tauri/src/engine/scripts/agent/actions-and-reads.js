// Small operations: focus, fill (one trusted insertion), set_value (pickers), select,
// scroll_by; and the reads: extract, and probe (for wait_for and assert).
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
