// The html5_drag operation: HTML5 drag and drop played in the page with its own events.
  // WebKit hands a drag of a draggable element to the toolkit's native drag, which works on
  // the real screen's pointer, not in a hidden page. So such a drag is played in the page, as
  // the HTML5 model specifies: dragstart on the source, dragenter/dragover on what is under
  // each point, drop where the last dragover was cancelled, dragend; one DataTransfer
  // carries the data. These events are not trusted (isTrusted false).
  // What a press at (x, y) would drag, as WebKit decides: selected text under the point, or
  // the nearest draggable element (draggable=true, a link, an image, -webkit-user-drag).
  function dragSourceAt(x, y) {
    const hit = deepElementFromPoint(x, y);
    const selection = getSelection();
    if (hit && selection && !selection.isCollapsed && selection.rangeCount) {
      const rects = Array.from(selection.getRangeAt(0).getClientRects());
      if (rects.some((rect) => x >= rect.left && x <= rect.right && y >= rect.top && y <= rect.bottom)) {
        return { element: hit, text: selection.toString() };
      }
    }
    for (let node = hit; node; node = node.parentNode || (node instanceof ShadowRoot ? node.host : null)) {
      if (node.nodeType === 1 && (node.draggable || getComputedStyle(node).webkitUserDrag === 'element')) return { element: node, text: null };
    }
    return null;
  }
  function acceptsText(element) {
    return element.isContentEditable || (['input', 'textarea'].includes(element.localName) && !element.readOnly && !element.disabled);
  }
  function html5Drag(args) {
    const found = dragSourceAt(args.from_x, args.from_y);
    if (!found) return { html5: false };
    const source = found.element;
    const data = new DataTransfer();
    if (found.text !== null) data.setData('text/plain', found.text);
    const at = (x, y, extra) => Object.assign({ bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y,
      screenX: x + screenX, screenY: y + screenY, buttons: 1, view: window }, extra);
    const cancelled = (target, type, x, y, related) => {
      const event = new DragEvent(type, at(x, y, { dataTransfer: data, relatedTarget: related || null }));
      return !target.dispatchEvent(event);
    };
    const answer = (extra) => Object.assign({ html5: true, source: describe(source), selection: found.text !== null || undefined }, extra);
    source.dispatchEvent(new PointerEvent('pointerdown', at(args.from_x, args.from_y, { button: 0, pointerType: 'mouse', isPrimary: true })));
    if (!source.dispatchEvent(new MouseEvent('mousedown', at(args.from_x, args.from_y, { button: 0 })))) {
      return answer({ started: false, dropped: false, reason: 'mousedown was cancelled' });
    }
    if (cancelled(source, 'dragstart', args.from_x, args.from_y)) return answer({ started: false, dropped: false, reason: 'dragstart was cancelled' });
    let current = null;
    let accepted = false;
    const steps = Math.max(1, args.steps || 8);
    for (let step = 1; step <= steps; step++) {
      const x = args.from_x + (args.to_x - args.from_x) * step / steps;
      const y = args.from_y + (args.to_y - args.from_y) * step / steps;
      cancelled(source, 'drag', x, y);
      const under = deepElementFromPoint(x, y) || document.body;
      if (under !== current) {
        if (current) cancelled(current, 'dragleave', x, y, under);
        cancelled(under, 'dragenter', x, y, current);
        current = under;
      }
      // A cancelled dragover accepts the drop; a text field accepts text by default.
      accepted = cancelled(current, 'dragover', x, y) || (acceptsText(current) && data.types.includes('text/plain'));
      data.dropEffect = accepted ? (data.effectAllowed === 'copy' ? 'copy' : 'move') : 'none';
    }
    let dropped = false;
    if (accepted && current) {
      dropped = true;
      if (!cancelled(current, 'drop', args.to_x, args.to_y) && acceptsText(current) && data.types.includes('text/plain')) {
        // The default action of a text drop: the text goes in, as typed.
        current.focus({ preventScroll: true });
        document.execCommand('insertText', false, data.getData('text/plain'));
      }
    } else if (current) {
      cancelled(current, 'dragleave', args.to_x, args.to_y);
    }
    if (!dropped) data.dropEffect = 'none';
    cancelled(source, 'dragend', args.to_x, args.to_y);
    return answer({ started: true, dropped, drop_target: current ? describe(current) : null });
  }
