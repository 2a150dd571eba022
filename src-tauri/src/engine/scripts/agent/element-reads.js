// One-line reads of one element (`get` and `is`): its text, inner HTML, value (passwords
// redacted), an attribute, computed styles, how many elements a selector matches, and
// whether it is visible, enabled or checked. A selector that matches nothing is visible
// false; for the other reads it is E_NOT_FOUND.
  // The computed styles `get styles` answers when no property is named.
  const READ_STYLES = ['display', 'visibility', 'opacity', 'color', 'background-color', 'font-family', 'font-size',
    'font-weight', 'line-height', 'text-align', 'width', 'height', 'margin', 'padding', 'border', 'position', 'z-index', 'cursor'];
  const ELEMENT_READ_CHARS = 200000;

  function elementRead(args) {
    if (args.what === 'count') {
      useBase(args.base);
      if (typeof args.ref === 'number') return { value: elementFor(args.ref) ? 1 : 0 };
      return { value: queryAll(args.selector, 0).length };
    }
    if (args.what === 'visible' && typeof args.selector === 'string' && !queryAll(args.selector, 1).length) return { value: false };
    const element = target(args);
    const cap = (text) => (typeof text === 'string' && text.length > ELEMENT_READ_CHARS ? text.slice(0, ELEMENT_READ_CHARS) : text);
    switch (args.what) {
      case 'text': return { value: cap(element.innerText !== undefined ? element.innerText : element.textContent) };
      case 'html': return { value: cap(element.innerHTML) };
      case 'value': {
        if (isSensitive(element)) return { value: '[redacted]' };
        if ('value' in element && element.localName !== 'li' && element.localName !== 'button') return { value: cap(String(element.value)) };
        if (element.isContentEditable) return { value: cap(element.innerText) };
        return { value: null };
      }
      case 'attr': return { value: cap(element.getAttribute(args.name)) };
      case 'styles': {
        const style = getComputedStyle(element);
        if (args.name) return { value: style.getPropertyValue(args.name) };
        const styles = {};
        for (const property of READ_STYLES) styles[property] = style.getPropertyValue(property);
        return { value: styles };
      }
      case 'visible': return { value: isVisible(element) };
      case 'enabled': return { value: !isDisabled(element) };
      case 'checked': {
        if ('checked' in element && (element.type === 'checkbox' || element.type === 'radio')) return { value: !!element.checked };
        const aria = element.getAttribute('aria-checked');
        if (aria !== null) return { value: aria === 'true' };
        throw new AgentError('E_BAD_REQUEST', 'the element is not a checkbox, radio or switch (no checked state)', { ref: 'e' + refFor(element) });
      }
      default: throw new AgentError('E_BAD_REQUEST', 'unknown read ' + JSON.stringify(args.what));
    }
  }
