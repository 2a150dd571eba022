// Selectors and geometry: a short unique CSS selector for an element (through shadow
// hosts), its box (remembered with the frame it was read in, for stability checks), a
// frame's content box, a one-line description, and what a point hits.
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
