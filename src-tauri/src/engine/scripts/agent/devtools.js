// What the DevTools endpoint (cdp/) needs of the agent. Node ids every script world
// shares: a node's id is its ref (so a CDP backendNodeId and a snapshot ref name the same
// element), handed across worlds by synchronous events whose type only the engine and the
// endpoint's runtime know (`__MALO_NODES__`, fresh per tab). And the accessibility tree in
// Chrome's shape, for `Accessibility.getFullAXTree` and `queryAXTree`.
  const NODES = '__MALO_NODES__';
  // Another world asks for a node's id: the node is the event's first target; the answer
  // goes back as a nested event on it, before the asker's dispatchEvent returns.
  window.addEventListener(NODES + '-describe', (event) => {
    event.stopImmediatePropagation();
    const node = event.composedPath()[0];
    node.dispatchEvent(new CustomEvent(NODES + '-described', { detail: String(refFor(node)) }));
  }, true);
  // Another world asks for the node of an id: it is given as an event dispatched on it.
  window.addEventListener(NODES + '-resolve', (event) => {
    event.stopImmediatePropagation();
    const node = refs.live(Number(event.detail));
    if (node) node.dispatchEvent(new CustomEvent(NODES + '-give', { detail: String(event.detail), composed: true }));
  }, true);

  // A binding a DevTools client installed was called (in any world): the engine tells the
  // client. The detail is [name, payload, world].
  document.addEventListener(NODES + '-binding', (event) => {
    event.stopImmediatePropagation();
    let call;
    try { call = JSON.parse(String(event.detail)); } catch (error) { return; }
    if (!Array.isArray(call) || typeof call[0] !== 'string') return;
    post({ kind: 'binding', name: call[0], payload: String(call[1]), world: typeof call[2] === 'string' ? call[2] : undefined });
  }, true);

  // ---- the accessibility tree, as Chrome reports it ------------------------------------------
  const AX_SKIPPED = new Set(['script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'title']);
  const AX_IMPLIED = { p: 'paragraph', label: 'LabelText', ul: 'list', ol: 'list', li: 'listitem', article: 'article', section: 'region', blockquote: 'blockquote', hr: 'separator', option: 'option', fieldset: 'group' };
  const axValue = (type, value) => ({ type, value });
  const axProperty = (name, type, value) => ({ name, value: axValue(type, value) });
  function axNode(node, role, name, ignored) {
    const ref = refFor(node);
    const shown = { nodeId: String(ref), ignored, role: axValue(role === 'RootWebArea' || role === 'StaticText' || role === 'generic' ? 'internalRole' : 'role', role), childIds: [], backendDOMNodeId: ref };
    if (name) shown.name = axValue('computedString', name);
    if (ignored) shown.ignoredReasons = [];
    return shown;
  }
  function axProperties(element, role) {
    const properties = [];
    const focusable = element.tabIndex >= 0 && !isDisabled(element);
    if (focusable) properties.push(axProperty('focusable', 'booleanOrUndefined', true));
    if (document.activeElement === element) properties.push(axProperty('focused', 'booleanOrUndefined', true));
    if (isDisabled(element)) properties.push(axProperty('disabled', 'boolean', true));
    if (role === 'heading') properties.push(axProperty('level', 'integer', Number(element.getAttribute('aria-level')) || Number(element.localName.slice(1)) || 2));
    if (role === 'link' && element.href) properties.push(axProperty('url', 'string', element.href));
    if (['textbox', 'searchbox', 'combobox', 'spinbutton'].includes(role)) {
      properties.push(axProperty('editable', 'token', element.isContentEditable ? 'richtext' : 'plaintext'));
      properties.push(axProperty('settable', 'booleanOrUndefined', true));
      properties.push(axProperty('multiline', 'boolean', element.localName === 'textarea'));
      properties.push(axProperty('readonly', 'boolean', !!element.readOnly));
    }
    if (element.required || element.getAttribute('aria-required') === 'true') properties.push(axProperty('required', 'boolean', true));
    if (['checkbox', 'radio', 'switch', 'menuitemcheckbox'].includes(role)) {
      const checked = 'checked' in element ? element.checked : element.getAttribute('aria-checked') === 'true';
      properties.push(axProperty('checked', 'tristate', checked ? 'true' : 'false'));
    }
    if (element.hasAttribute('aria-expanded')) properties.push(axProperty('expanded', 'booleanOrUndefined', element.getAttribute('aria-expanded') === 'true'));
    if (element.getAttribute('aria-selected') === 'true' || (element.localName === 'option' && element.selected)) properties.push(axProperty('selected', 'booleanOrUndefined', true));
    return properties;
  }
  // `root`: a node's ref (default: the document). Hidden subtrees are left out; elements
  // without a role give their children to their parent, as Chrome's ignored nodes do.
  function axTree(args) {
    const limit = Number(args.max_nodes) || 5000;
    const start = args.root ? refs.live(Number(args.root)) : document;
    if (!start) throw new AgentError('E_STALE_REF', 'no node with the given id is in the document');
    const nodes = [];
    const rootElement = start === document ? document.documentElement : start;
    const rootRole = start === document ? 'RootWebArea' : (roleOf(start) || AX_IMPLIED[start.localName] || 'generic');
    const rootName = start === document ? document.title : (start.nodeType === 1 ? nameOf(start, rootRole) : '');
    const root = axNode(start, rootRole, rootName, false);
    if (start === document) root.properties = [axProperty('focusable', 'booleanOrUndefined', true), axProperty('url', 'string', location.href)];
    else if (start.nodeType === 1) root.properties = axProperties(start, rootRole);
    nodes.push(root);
    const childrenOf = (node) => (node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes);
    const visit = (node, parent, named) => {
      for (const child of childrenOf(node)) {
        if (nodes.length >= limit) return;
        if (child.nodeType === 3) {
          const text = clean(child.data, 1000);
          if (!text || named) continue;
          const leaf = axNode(child, 'StaticText', text, false);
          leaf.parentId = parent.nodeId;
          parent.childIds.push(leaf.nodeId);
          nodes.push(leaf);
          continue;
        }
        if (child.nodeType !== 1 || AX_SKIPPED.has(child.localName)) continue;
        if (!isVisible(child) && getComputedStyle(child).display !== 'contents') continue;
        let role = roleOf(child) || AX_IMPLIED[child.localName] || null;
        if (role === 'none' || role === 'presentation') role = null;
        if (!role && !isInteractive(child, role)) {
          visit(child, parent, named);
          continue;
        }
        role = role || 'generic';
        const name = nameOf(child, role);
        const shown = axNode(child, role === 'iframe' ? 'Iframe' : role, name, false);
        shown.parentId = parent.nodeId;
        shown.properties = axProperties(child, role);
        const value = ['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider'].includes(role) ? valueOf(child) : undefined;
        if (value !== undefined) shown.value = axValue('string', value);
        parent.childIds.push(shown.nodeId);
        nodes.push(shown);
        // A control named by its text has no text leaves of its own (Chrome's are ignored).
        const namedByText = !!name && ['button', 'link', 'heading', 'option', 'tab', 'menuitem', 'checkbox', 'radio', 'LabelText', 'paragraph', 'listitem'].includes(role);
        if (role !== 'iframe') visit(child, shown, namedByText && !['paragraph', 'listitem', 'LabelText'].includes(role));
      }
    };
    visit(start === document ? rootElement : start, root, false);
    return { nodes, truncated: nodes.length >= limit };
  }
