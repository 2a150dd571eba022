// The DevTools endpoint's runtime: what `Runtime.*` and `DOM.*` need inside a script world
// of the main frame. One instance per world and document, installed by the engine at
// document start (and on first use in a document that began before), as a global lexical
// binding with a random name (`__MALO_RUNTIME__`): no property of window, not listed by
// any reflection, reachable only by that name. Every intrinsic it uses is captured when it
// is installed, and its registries have no prototype, so a page that patches built-ins
// sees nothing of it. Handles are `<context>.<n>`; node ids are the agent's refs, asked
// across worlds with events of a type only the engine knows (`__MALO_NODES__`).
// Each entry point takes one JSON string and answers one JSON string (or a promise of one).
const __MALO_RUNTIME__ = (() => {
  'use strict';
  const G = globalThis;
  const doc = document;
  // Each owner's intrinsics read once, by destructuring (the same reads as `Owner.name`).
  const { apply, ownKeys, getOwnPropertyDescriptor: describeProperty, getPrototypeOf: protoOf } = Reflect;
  const { stringify, parse } = JSON;
  const { toString: tagOf } = Object.prototype;
  const { isArray } = Array;
  const CE = CustomEvent;
  const P = Promise;
  const resolveP = Promise.resolve.bind(Promise);
  const { then } = Promise.prototype;
  const { dispatchEvent: dispatch, addEventListener: listen, removeEventListener: unlisten } = EventTarget.prototype;
  const { toString: functionText, bind } = Function.prototype;
  const { composedPath } = Event.prototype;
  const detailOf = describeProperty(CustomEvent.prototype, 'detail').get;
  const nodeTypeOf = describeProperty(Node.prototype, 'nodeType').get;
  const nodeNameOf = describeProperty(Node.prototype, 'nodeName').get;
  const {
    getClientRects: rectsOf, getBoundingClientRect: boundsOf, scrollIntoView, querySelector: elementQuery,
  } = Element.prototype;
  const { querySelector } = Document.prototype;
  const { toString: symbolText } = Symbol.prototype;
  const { toLowerCase: lower } = String.prototype;
  const StringC = String;
  const { defineProperty } = Object;
  const ErrorC = Error;
  const NODES = '__MALO_NODES__';
  const indirectEval = eval;

  const isNode = (value) => {
    if (value === null || typeof value !== 'object') return false;
    try { apply(nodeTypeOf, value, []); return true; } catch (error) { return false; }
  };

  // ---- handles ----
  const objects = { __proto__: null };
  const groups = { __proto__: null };
  let next = 0;
  let context = 0;
  const keep = (value, group) => {
    const id = context + '.' + (++next);
    objects[id] = value;
    if (group) (groups[group] || (groups[group] = { __proto__: null }))[id] = true;
    return id;
  };
  const held = (id) => {
    if (!(id in objects)) throw new ErrorC('Could not find object with given id');
    return objects[id];
  };

  // ---- RemoteObject ----
  const unserializable = (value) => {
    if (typeof value === 'bigint') return StringC(value) + 'n';
    if (typeof value !== 'number') return null;
    if (value !== value) return 'NaN';
    if (value === 1 / 0) return 'Infinity';
    if (value === -1 / 0) return '-Infinity';
    if (value === 0 && 1 / value < 0) return '-0';
    return null;
  };
  const classOf = (value) => {
    try {
      const proto = protoOf(value);
      const constructor = proto && describeProperty(proto, 'constructor');
      return (constructor && typeof constructor.value === 'function' && constructor.value.name) || 'Object';
    } catch (error) { return 'Object'; }
  };
  const SUBTYPES = { __proto__: null, '[object Error]': 'error', '[object RegExp]': 'regexp', '[object Date]': 'date', '[object Map]': 'map',
    '[object Set]': 'set', '[object WeakMap]': 'weakmap', '[object WeakSet]': 'weakset', '[object Promise]': 'promise' };
  function byValue(value, seen) {
    if (value === null || typeof value !== 'object') {
      if (typeof value === 'function' || typeof value === 'symbol') return undefined;
      if (typeof value === 'bigint') return undefined;
      if (typeof value === 'number' && unserializable(value)) return null;
      return value;
    }
    for (let index = 0; index < seen.length; index++) if (seen[index] === value) throw new ErrorC('Object reference chain is too long');
    const path = [];
    for (let index = 0; index < seen.length; index++) path[index] = seen[index];
    path[seen.length] = value;
    if (isNode(value)) return {};
    if (isArray(value)) {
      const out = [];
      for (let index = 0; index < value.length; index++) {
        const item = byValue(value[index], path);
        out[out.length] = item === undefined ? null : item;
      }
      return out;
    }
    if (typeof value.toJSON === 'function') return byValue(value.toJSON(), path);
    const out = {};
    const keys = ownKeys(value);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index];
      if (typeof key !== 'string') continue;
      const property = describeProperty(value, key);
      if (!property || !property.enumerable) continue;
      const item = byValue(value[key], path);
      if (item !== undefined) out[key] = item;
    }
    return out;
  }
  function remote(value, returnByValue, group) {
    const type = typeof value;
    if (value === undefined) return { type: 'undefined' };
    if (value === null) return { type: 'object', subtype: 'null', value: null };
    const special = unserializable(value);
    if (special !== null) return { type, unserializableValue: special, description: special };
    if (type === 'string') return { type, value };
    if (type === 'number' || type === 'boolean') return { type, value, description: StringC(value) };
    if (type === 'symbol') return { type, description: apply(symbolText, value, []), objectId: keep(value, group) };
    if (returnByValue) return { type, value: byValue(value, []) };
    const shown = { type, objectId: keep(value, group) };
    if (type === 'function') {
      shown.className = 'Function';
      try { shown.description = apply(functionText, value, []); } catch (error) { shown.description = 'function'; }
      return shown;
    }
    shown.className = classOf(value);
    if (isNode(value)) {
      shown.subtype = 'node';
      const name = apply(lower, apply(nodeNameOf, value, []), []);
      shown.description = name + (typeof value.id === 'string' && value.id ? '#' + value.id : '');
      return shown;
    }
    if (isArray(value)) {
      shown.subtype = 'array';
      shown.description = 'Array(' + value.length + ')';
      return shown;
    }
    let tag = '';
    try { tag = apply(tagOf, value, []); } catch (error) { /* a revoked proxy */ }
    const subtype = SUBTYPES[tag];
    if (subtype) shown.subtype = subtype;
    if (subtype === 'error') shown.description = value.stack ? StringC(value.name) + ': ' + StringC(value.message) + '\n' + StringC(value.stack) : StringC(value);
    else if (subtype === 'date' || subtype === 'regexp') shown.description = StringC(value);
    else if (tag === '[object Window]') shown.description = 'Window';
    else shown.description = shown.className;
    return shown;
  }
  function failure(error, group) {
    const isError = error !== null && typeof error === 'object' && SUBTYPES[apply(tagOf, error, [])] === 'error';
    const details = {
      exceptionId: ++next,
      text: 'Uncaught',
      lineNumber: isError && error.line ? error.line - 1 : 0,
      columnNumber: isError && error.column ? error.column - 1 : 0,
      exception: remote(error, false, group),
    };
    if (isError && error.sourceURL) details.url = error.sourceURL;
    return details;
  }
  function argument(given) {
    if (given && 'objectId' in given) return held(given.objectId);
    if (given && 'unserializableValue' in given) {
      const text = given.unserializableValue;
      if (text === 'NaN') return NaN;
      if (text === 'Infinity') return 1 / 0;
      if (text === '-Infinity') return -1 / 0;
      if (text === '-0') return -0;
      return BigInt(text.slice(0, -1));
    }
    return given ? given.value : undefined;
  }
  // A value or a thrown error as the answer's JSON; a promise is awaited when asked.
  function settle(run, request) {
    const done = (value) => stringify({ result: remote(value, request.returnByValue, request.objectGroup) });
    const failed = (error) => stringify({ result: remote(error, false, request.objectGroup), exceptionDetails: failure(error, request.objectGroup) });
    let value;
    try { value = run(); } catch (error) { return failed(error); }
    if (request.awaitPromise && value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function') {
      return new P((answer) => apply(then, resolveP(value), [(result) => {
        try { answer(done(result)); } catch (error) { answer(stringify({ error: error.message })); }
      }, (error) => answer(failed(error))]));
    }
    try { return done(value); } catch (error) { return stringify({ error: error.message }); }
  }
  const start = (text) => {
    const request = parse(text);
    context = request.context;
    return request;
  };

  // `Runtime.callFunctionOn`: the function was compiled by the engine into the calling
  // script itself (no eval, so a page's CSP does not apply).
  function call(fn, text) {
    const request = start(text);
    let self;
    const args = [];
    try {
      self = request.objectId ? held(request.objectId) : undefined;
      const given = request.arguments || [];
      for (let index = 0; index < given.length; index++) args[index] = argument(given[index]);
    } catch (error) { return stringify({ error: error.message }); }
    return settle(() => apply(fn, self, args), request);
  }
  // `Runtime.evaluate` of an expression the engine compiled into a thunk.
  function evaluate(thunk, text) {
    return settle(thunk, start(text));
  }
  // `Runtime.evaluate` of a script that is not an expression (statements): global eval.
  function evaluateText(text) {
    const request = start(text);
    return settle(() => indirectEval(request.expression), request);
  }
  function getProperties(text) {
    const request = start(text);
    let value;
    try { value = held(request.objectId); } catch (error) { return stringify({ error: error.message }); }
    const result = [];
    let level = value;
    let own = true;
    while (level !== null && level !== undefined && (own || !request.ownProperties)) {
      if (typeof level !== 'object' && typeof level !== 'function') break;
      const keys = ownKeys(level);
      for (let index = 0; index < keys.length; index++) {
        const key = keys[index];
        const property = describeProperty(level, key);
        const shown = { name: typeof key === 'symbol' ? apply(symbolText, key, []) : key, configurable: property.configurable, enumerable: property.enumerable, isOwn: own };
        if ('value' in property) {
          shown.value = remote(property.value, false, request.objectGroup);
          shown.writable = property.writable;
        } else {
          if (property.get) shown.get = remote(property.get, false, request.objectGroup);
          if (property.set) shown.set = remote(property.set, false, request.objectGroup);
        }
        result[result.length] = shown;
      }
      own = false;
      level = protoOf(level);
      if (request.accessorPropertiesOnly) break;
    }
    return stringify({ result });
  }
  function release(text) {
    const request = parse(text);
    delete objects[request.objectId];
    return '{}';
  }
  function releaseGroup(text) {
    const request = parse(text);
    const ids = groups[request.objectGroup];
    if (ids) {
      const keys = ownKeys(ids);
      for (let index = 0; index < keys.length; index++) delete objects[keys[index]];
    }
    delete groups[request.objectGroup];
    return '{}';
  }

  // ---- nodes ----
  // The node id of a node (the agent's ref), asked of the agent's world.
  function nodeIdOf(node) {
    let id = null;
    const heard = (event) => { id = apply(detailOf, event, []); };
    apply(listen, node, [NODES + '-described', heard, true]);
    try { apply(dispatch, node, [new CE(NODES + '-describe', { composed: true })]); } finally { apply(unlisten, node, [NODES + '-described', heard, true]); }
    return id === null ? null : Number(id);
  }
  // The node of a node id, in this world.
  function nodeOfId(id) {
    let node = null;
    const heard = (event) => { node = apply(composedPath, event, [])[0]; };
    apply(listen, G, [NODES + '-give', heard, true]);
    try { apply(dispatch, doc, [new CE(NODES + '-resolve', { detail: StringC(id) })]); } finally { apply(unlisten, G, [NODES + '-give', heard, true]); }
    return node;
  }
  function target(request) {
    const node = request.objectId ? held(request.objectId) : request.backendNodeId ? nodeOfId(request.backendNodeId) : null;
    if (!isNode(node)) throw new ErrorC(request.objectId ? 'Object id doesn\'t reference a Node' : 'No node with given id found');
    return node;
  }
  function describedNode(node, depth) {
    const id = nodeIdOf(node);
    const shown = { nodeId: id || 0, backendNodeId: id || 0, nodeType: apply(nodeTypeOf, node, []), nodeName: apply(nodeNameOf, node, []),
      localName: node.localName || '', nodeValue: node.nodeValue || '' };
    if (node.attributes) {
      shown.attributes = [];
      for (let index = 0; index < node.attributes.length; index++) shown.attributes.push(node.attributes[index].name, node.attributes[index].value);
    }
    if (node.childNodes) shown.childNodeCount = node.childNodes.length;
    if (node.nodeType === 9) { shown.documentURL = doc.URL; shown.baseURL = doc.baseURI; }
    if (depth > 0 && node.childNodes) {
      shown.children = [];
      for (let index = 0; index < node.childNodes.length && index < 200; index++) shown.children.push(describedNode(node.childNodes[index], depth - 1));
    }
    return shown;
  }
  const guarded = (work) => (text) => {
    const request = start(text);
    try { return stringify(work(request)); } catch (error) { return stringify({ error: error.message }); }
  };
  const describeNode = guarded((request) => ({ node: describedNode(target(request), request.depth || 0) }));
  const resolveNode = guarded((request) => ({ object: remote(target(request), false, request.objectGroup) }));
  const getDocument = guarded((request) => ({ root: describedNode(doc, request.depth === undefined ? 1 : request.depth) }));
  const querySelectorOf = guarded((request) => {
    const scope = target(request);
    const found = scope.nodeType === 9 ? apply(querySelector, scope, [request.selector]) : apply(elementQuery, scope, [request.selector]);
    return { nodeId: found ? nodeIdOf(found) : 0 };
  });
  const quad = (rect) => [rect.left, rect.top, rect.right, rect.top, rect.right, rect.bottom, rect.left, rect.bottom];
  const contentQuads = guarded((request) => {
    const node = target(request);
    const element = node.nodeType === 1 ? node : node.parentElement;
    const rects = element ? apply(rectsOf, element, []) : [];
    const quads = [];
    for (let index = 0; index < rects.length; index++) if (rects[index].width > 0 && rects[index].height > 0) quads.push(quad(rects[index]));
    return { quads };
  });
  const boxModel = guarded((request) => {
    const node = target(request);
    const element = node.nodeType === 1 ? node : node.parentElement;
    if (!element) throw new ErrorC('Could not compute box model.');
    const rect = apply(boundsOf, element, []);
    const style = getComputedStyle(element);
    const px = (name) => parseFloat(style[name]) || 0;
    const padding = { left: rect.left + px('borderLeftWidth'), top: rect.top + px('borderTopWidth'), right: rect.right - px('borderRightWidth'), bottom: rect.bottom - px('borderBottomWidth') };
    const content = { left: padding.left + px('paddingLeft'), top: padding.top + px('paddingTop'), right: padding.right - px('paddingRight'), bottom: padding.bottom - px('paddingBottom') };
    const margin = { left: rect.left - px('marginLeft'), top: rect.top - px('marginTop'), right: rect.right + px('marginRight'), bottom: rect.bottom + px('marginBottom') };
    return { model: { content: quad(content), padding: quad(padding), border: quad(rect), margin: quad(margin), width: rect.width, height: rect.height } };
  });
  const scrollIntoViewIfNeeded = guarded((request) => {
    const node = target(request);
    const element = node.nodeType === 1 ? node : node.parentElement;
    if (!element || !element.isConnected) throw new ErrorC('Node is detached from document');
    apply(scrollIntoView, element, [{ block: 'center', inline: 'center', behavior: 'instant' }]);
    return {};
  });
  const nodeId = guarded((request) => ({ backendNodeId: nodeIdOf(target(request)) }));

  // `Runtime.addBinding`: a global function of this world whose calls reach the client (as
  // `bindingCalled`) through the agent's world; it reads as native code.
  function addBinding(text) {
    const request = parse(text);
    const name = StringC(request.name);
    const send = function (payload) {
      apply(dispatch, doc, [new CE(NODES + '-binding', { detail: stringify([name, StringC(payload), request.world || null]) })]);
    };
    const bound = apply(bind, send, [undefined]);
    defineProperty(bound, 'name', { value: name });
    defineProperty(G, name, { value: bound, writable: true, configurable: true, enumerable: false });
    return '{}';
  }

  return Object.freeze({ __proto__: null, addBinding, call, evaluate, evaluateText, getProperties, release, releaseGroup, describeNode, resolveNode,
    getDocument, querySelector: querySelectorOf, contentQuads, boxModel, scrollIntoViewIfNeeded, nodeId });
})();
