// Roles, names and states: an element's ARIA role (explicit or implied by HTML), whether
// it is interactive, its accessible name and value (sensitive ones redacted), whether it
// is disabled or visible.
  // Input types that take typed text; any type HTML does not know is text (input.type says
  // "text" then), so the effective type decides, never the attribute.
  const TEXT_INPUTS = new Set(['text', 'email', 'search', 'url', 'tel', 'password', 'number']);
  // Input types whose value a picker sets (fill sets it, checked for its format).
  const PICKER_INPUTS = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range']);
  function inputType(element) { return element.localName === 'input' ? String(element.type || 'text').toLowerCase() : undefined; }
  function roleOf(element) {
    const explicit = element.getAttribute('role');
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = element.localName;
    switch (tag) {
      case 'a': return element.hasAttribute('href') ? 'link' : null;
      case 'button': return 'button';
      case 'select': return element.multiple || element.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'summary': return 'button';
      case 'details': return 'group';
      case 'dialog': return 'dialog';
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': return 'heading';
      case 'nav': return 'navigation';
      case 'main': return 'main';
      case 'header': return element.closest('article,aside,main,nav,section') ? null : 'banner';
      case 'footer': return element.closest('article,aside,main,nav,section') ? null : 'contentinfo';
      case 'aside': return 'complementary';
      case 'section': return element.hasAttribute('aria-label') || element.hasAttribute('aria-labelledby') ? 'region' : null;
      case 'form': return 'form';
      case 'table': return 'table';
      case 'iframe': return 'iframe';
      case 'img': return 'img';
      case 'input': {
        const type = inputType(element);
        if (type === 'hidden') return null;
        if (type === 'checkbox') return 'checkbox';
        if (type === 'radio') return 'radio';
        if (type === 'range') return 'slider';
        if (type === 'number') return 'spinbutton';
        if (type === 'search') return 'searchbox';
        if (['submit', 'button', 'reset', 'image'].includes(type)) return 'button';
        if (type === 'file') return 'button';
        if (type === 'color') return 'button';
        return 'textbox';
      }
    }
    if (element.isContentEditable && (!element.parentElement || !element.parentElement.isContentEditable)) return 'textbox';
    return null;
  }
  const INTERACTIVE_ROLES = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'listbox', 'checkbox', 'radio', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'treeitem', 'gridcell']);
  function isInteractive(element, role) {
    if (role && INTERACTIVE_ROLES.has(role)) return true;
    if (element.localName === 'summary') return true;
    const tabindex = element.getAttribute('tabindex');
    if (tabindex !== null && tabindex !== '-1' && element.localName !== 'iframe' && !['dialog', 'main', 'form', 'table', 'heading'].includes(role)) return true;
    if (element.hasAttribute('onclick')) return true;
    return false;
  }
  function clean(text, limit) {
    const collapsed = String(text || '').replace(/\s+/g, ' ').trim();
    return collapsed.length > limit ? collapsed.slice(0, limit - 1) + '…' : collapsed;
  }
  function textOfIds(element, ids) {
    const root = element.getRootNode();
    return ids.split(/\s+/).map((id) => {
      const target = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      return target ? target.textContent : '';
    }).join(' ');
  }
  function nameOf(element, role) {
    const labelledby = element.getAttribute('aria-labelledby');
    if (labelledby) { const text = clean(textOfIds(element, labelledby), NAME_CHARS); if (text) return text; }
    const label = element.getAttribute('aria-label');
    if (label && label.trim()) return clean(label, NAME_CHARS);
    if (element.labels && element.labels.length) {
      const text = clean(Array.from(element.labels).map((node) => node.innerText || node.textContent).join(' '), NAME_CHARS);
      if (text) return text;
    }
    const tag = element.localName;
    if (tag === 'input') {
      const type = inputType(element);
      if (['submit', 'button', 'reset'].includes(type)) return clean(element.value || type, NAME_CHARS);
      if (type === 'image') return clean(element.alt || 'image', NAME_CHARS);
    }
    if (tag === 'img') return clean(element.alt, NAME_CHARS);
    if (tag === 'iframe') return clean(element.title || element.name, NAME_CHARS);
    if (['button', 'link', 'tab', 'menuitem', 'option', 'heading', 'summary', 'checkbox', 'radio', 'switch', 'treeitem', 'gridcell'].includes(role) || tag === 'summary') {
      const text = clean(element.innerText !== undefined ? element.innerText : element.textContent, NAME_CHARS);
      if (text) return text;
    }
    const fallback = element.getAttribute('placeholder') || element.getAttribute('title') || element.getAttribute('name');
    return clean(fallback, NAME_CHARS);
  }
  function isSensitive(element) {
    return element.localName === 'input' && (element.type === 'password' || /password|passwd|secret|otp|one-time-code|cc-number|cc-csc/i.test(element.autocomplete || ''));
  }
  function valueOf(element) {
    if (isSensitive(element)) return '[redacted]';
    if (element.localName === 'select') {
      return Array.from(element.selectedOptions).map((option) => option.value).join(',');
    }
    if ('value' in element && typeof element.value === 'string') return clean(element.value, VALUE_CHARS);
    if (element.isContentEditable) return clean(element.innerText, VALUE_CHARS);
    return undefined;
  }
  function isDisabled(element) {
    if (element.disabled) return true;
    if (element.getAttribute('aria-disabled') === 'true') return true;
    const fieldset = element.closest && element.closest('fieldset[disabled]');
    return !!(fieldset && !fieldset.querySelector('legend')?.contains(element));
  }
  // Visible as Playwright defines it: a non-empty box and not `visibility: hidden` (nor in
  // a `display: none` or `content-visibility: hidden` subtree). `opacity: 0` is visible: the
  // styled checkboxes of UI kits are transparent inputs laid over their drawing.
  function isVisible(element) {
    if (typeof element.checkVisibility === 'function') {
      if (!element.checkVisibility({ checkVisibilityCSS: true })) return false;
    } else {
      const style = getComputedStyle(element);
      if (style.visibility !== 'visible' || style.display === 'none') return false;
    }
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && rect.height > 0;
  }
