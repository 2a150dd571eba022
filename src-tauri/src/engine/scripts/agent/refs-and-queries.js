// Refs and queries: refs are numbers for elements (frame ids for iframes), handed out
// once and stable while the element lives; the agent's error type; walking the tree and
// querying it across open shadow roots (`>>>` steps into one).
  // Numbers for elements, handed out once and kept while the element lives: `numberOf`
  // gives an element its number (the next one, the first time), `live` the element of a
  // number while it is in the page, null once it has left (or been collected).
  function numbering() {
    const byNumber = new Map();   // number -> WeakRef<Element>
    const byElement = new WeakMap();
    const table = {
      next: 1,
      numberOf(element) {
        let number = byElement.get(element);
        if (number === undefined) {
          number = table.next++;
          byElement.set(element, number);
          byNumber.set(number, new WeakRef(element));
        }
        return number;
      },
      live(number) {
        const held = byNumber.get(number);
        const element = held && held.deref();
        return element && element.isConnected ? element : null;
      },
      forget(number) { byNumber.delete(number); },
    };
    return table;
  }
  const refs = numbering();     // elements, by ref
  const frames = numbering();   // iframes, by frame id

  function useBase(base) { if (typeof base === 'number' && base > refs.next) refs.next = base; }
  const refFor = refs.numberOf;
  // A ref whose element has left the page stays dead.
  function elementFor(ref) {
    const element = refs.live(ref);
    if (!element) refs.forget(ref);
    return element;
  }
  const frameIdFor = frames.numberOf;
  const frameFor = frames.live;

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
