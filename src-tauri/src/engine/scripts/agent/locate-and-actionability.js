// Locating a target for an action (by ref or selector), scrolling it into view and saying
// whether it is actionable: visible, enabled, editable, not covered, holding still;
// a child frame's box and what covers a point meant for it.
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
        next_ref: refs.next };
    };
    const first = measure();
    if (!args.stable || !mayBeMoving(actOn, previous, first)) return describeAt(first);
    return new Promise((resolve) => {
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        const second = measure();
        resolve(Object.assign(describeAt(second), { moving: !sameBox(first, second) || undefined }));
      };
      // Two frames on: the page's own frame callbacks have run in between, whatever order
      // the callbacks of one frame run in.
      requestAnimationFrame(() => requestAnimationFrame(finish));
      // A document that paints no frames (hidden, throttled) is compared after 150 ms
      // instead; so is one whose frames come slower than that on a loaded machine (its box
      // still tells whether it moved).
      setTimeout(finish, 150);
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
