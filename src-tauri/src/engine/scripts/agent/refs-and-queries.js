// Refs and queries: refs are numbers for elements (frame ids for iframes), handed out
// once and stable while the element lives; the agent's error type; walking the tree and
// querying it across open shadow roots (`>>>` steps into one).
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
