// Finding elements as a person names them (Playwright's getByRole and friends): by role and
// accessible name, visible text, label, placeholder, alt text, title or test id, in this
// document and its open shadow roots, in document order, with the child frames in their
// places (Rust enters them and merges the lists).
  // Text as compared: whitespace made single spaces, trimmed.
  function normalText(text) { return String(text || '').replace(/\s+/g, ' ').trim(); }
  // Exact: the whole text, case and all; else a part of it, in any case. A match answers
  // 'whole' when it is the whole text (in any case): Rust keeps only those when any is.
  function textMatcher(wanted, exact) {
    const want = normalText(wanted);
    if (exact) return (text) => (normalText(text) === want ? 'whole' : false);
    const lower = want.toLowerCase();
    return (text) => {
      const seen = normalText(text).toLowerCase();
      return seen === lower ? 'whole' : seen.includes(lower) ? 'part' : false;
    };
  }
  // Out of the accessibility tree: not rendered, or under aria-hidden="true".
  function hiddenFromTree(element) {
    if (typeof element.checkVisibility === 'function' && !element.checkVisibility({ checkVisibilityCSS: true })) return true;
    for (let node = element; node; node = node.parentElement || (node.getRootNode() instanceof ShadowRoot ? node.getRootNode().host : null)) {
      if (node.getAttribute('aria-hidden') === 'true') return true;
    }
    return false;
  }
  const NO_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'meta', 'link', 'iframe', 'frame']);
  // What an element's text is, for a text locator: a button-like input's value, else its text.
  function ownText(element) {
    if (element.localName === 'input' && ['button', 'submit', 'reset'].includes(inputType(element))) return element.value;
    return element.textContent;
  }
  function labelText(element) {
    const parts = [];
    const labelledby = element.getAttribute('aria-labelledby');
    if (labelledby) parts.push(textOfIds(element, labelledby));
    const label = element.getAttribute('aria-label');
    if (label) parts.push(label);
    if (element.labels) for (const node of element.labels) parts.push(node.innerText || node.textContent);
    return parts;
  }
  // The test for one element, by the locator's kind.
  function locatorTest(args) {
    const matches = textMatcher(args.value, args.exact);
    switch (args.by) {
      case 'role': {
        const wanted = String(args.value).trim().toLowerCase();
        const named = typeof args.name === 'string' ? textMatcher(args.name, args.exact) : null;
        return (element) => {
          const role = roleOf(element);
          if (!role || role.toLowerCase() !== wanted || hiddenFromTree(element)) return false;
          return named ? named(nameOf(element, role)) : 'whole';
        };
      }
      case 'text': return (element) => !NO_TEXT.has(element.localName) && matches(ownText(element));
      case 'label': return (element) => {
        const found = labelText(element).map(matches);
        return found.includes('whole') ? 'whole' : found.includes('part') ? 'part' : false;
      };
      case 'placeholder': return (element) => element.hasAttribute('placeholder') && matches(element.getAttribute('placeholder'));
      case 'alt': return (element) => element.hasAttribute('alt') && matches(element.getAttribute('alt'));
      case 'title': return (element) => element.hasAttribute('title') && matches(element.getAttribute('title'));
      case 'testid': return (element) => element.getAttribute('data-testid') === String(args.value) && 'whole';
    }
    throw new AgentError('E_BAD_REQUEST', 'unknown locator kind ' + JSON.stringify(args.by));
  }
  // The matches in this document (at most `limit`), and its rendered child frames, in
  // document order: `{ref, role, name, visible, whole}` or `{frame}`. A text match is the
  // innermost element holding the text (not every ancestor of it).
  function find(args) {
    useBase(args.base);
    const test = locatorTest(args);
    const limit = typeof args.limit === 'number' ? args.limit : 200;
    const order = [];
    const matched = new Set();
    for (const element of walk(document)) {
      const tag = element.localName;
      if ((tag === 'iframe' || tag === 'frame') && isVisible(element)) order.push({ frame: element });
      else {
        const how = test(element);
        if (how) { matched.add(element); order.push({ element, whole: how === 'whole' }); }
      }
    }
    const innermost = (element) => {
      const children = Array.from(element.children);
      if (element.shadowRoot) children.push(...element.shadowRoot.children);
      return !children.some((child) => matched.has(child));
    };
    const items = [];
    let count = 0;
    for (const entry of order) {
      if (entry.frame) { items.push({ frame: frameIdFor(entry.frame) }); continue; }
      const element = entry.element;
      if (args.by === 'text' && !innermost(element)) continue;
      count++;
      if (count > limit) continue;
      const role = roleOf(element);
      items.push({ ref: refFor(element), role: role || element.localName, name: nameOf(element, role), visible: isVisible(element),
        whole: entry.whole });
    }
    return { items, count, next_ref: refs.next };
  }
