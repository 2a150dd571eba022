// The snapshot's content: a document, or one element's subtree, read in document order over
// the flat tree (an open shadow root in place of its host's children, slotted nodes where
// their slot is) as a list of items: lines of visible text, interactive elements, child
// frames, and marks where a heading, landmark, table, form, dialog or live region starts
// (each but a heading's with the ref of its element, which `scope` takes).
// Text is read as innerText reads it: what CSS hides is left out, block boxes and table
// rows end lines, a row's cells are joined with a tab. Words an element line already says
// are left out: the text inside an interactive element when its name is that text (a
// link's words), and a label's text when it is the name of the control it labels.
  // A longer line of text is split at a space, so that no line takes much of an answer.
  const MAX_LINE_CHARS = 2000;
  // Never rendered, or read another way (a select's options are on its element line).
  const NOT_READ = new Set(['script', 'style', 'template', 'head', 'noscript', 'title', 'meta', 'link', 'datalist', 'caption']);
  // Elements whose children are not text to read (a select's options are on its line).
  const NO_TEXT_INSIDE = new Set(['select', 'textarea', 'input', 'svg', 'canvas', 'video', 'audio']);
  const LANDMARKS = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'region']);
  const KEPT_WHITESPACE = new Set(['pre', 'pre-wrap', 'pre-line', 'break-spaces']);
  // Stands for the tab between two cells while spaces are collapsed.
  const CELL_SEPARATOR = '\u0001';

  // Reads `root` (an element, or the document). `maxItems` caps the elements described
  // (the rest are counted in `omitted_nodes`); without `withText`, only elements and marks.
  function readContent(root, maxItems, withText) {
    const items = [];
    const nodes = [];
    const frameList = [];
    const forms = new Map();
    let pieces = [];
    let pendingHeading = 0;
    let elementCount = 0;
    let omittedNodes = 0;
    const emit = (item) => {
      if (pendingHeading) { item.h = pendingHeading; pendingHeading = 0; }
      items.push(item);
    };
    const endLine = () => {
      if (!pieces.length) return;
      let text = pieces.join('').replace(/\s+/g, ' ').replace(/ ?\u0001 ?/g, '\t').trim();
      pieces = [];
      while (text) {
        let cut = text.length;
        if (cut > MAX_LINE_CHARS) {
          cut = text.lastIndexOf(' ', MAX_LINE_CHARS);
          if (cut < MAX_LINE_CHARS / 2) cut = MAX_LINE_CHARS - (/[\ud800-\udbff]/.test(text[MAX_LINE_CHARS - 1]) ? 1 : 0);
        }
        emit({ text: text.slice(0, cut).trim() });
        text = text.slice(cut).trim();
      }
    };
    const textOf = (from) => items.slice(from).filter((item) => item.text !== undefined).map((item) => item.text).join(' ');
    // Drops the text items read since `from` when `name` already says them.
    const dropTextSaidBy = (from, name) => {
      const text = textOf(from);
      if (!text || text.length > NAME_CHARS || clean(text, NAME_CHARS) !== name) return;
      const kept = items.slice(from).filter((item) => item.text === undefined);
      items.length = from;
      items.push(...kept);
    };
    const formOf = (form) => {
      if (!forms.has(form)) {
        forms.set(form, { ref: refFor(form), name: nameOf(form, 'form') || form.getAttribute('id') || undefined, action: form.getAttribute('action') || undefined,
          method: (form.getAttribute('method') || 'get').toLowerCase(), fields: [], marked: false });
      }
      return forms.get(form);
    };
    const mark = (kind, entry) => items.push({ mark: kind, entry });
    // Depth first with an explicit stack (a deep page must not exhaust the call stack): an
    // element pushes what to do after its children, then its children in reverse.
    const stack = [{ node: root, textShown: true, preserved: false }];
    while (stack.length) {
      const { node, textShown, preserved, after } = stack.pop();
      if (after) { after(); continue; }
      if (node.nodeType === 3) {
        if (!withText || !textShown) continue;
        if (!preserved) { pieces.push(node.data); continue; }
        node.data.split('\n').forEach((part, index) => { if (index) endLine(); pieces.push(part); });
        continue;
      }
      if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) continue;
      let children = node.childNodes;
      let ownTextShown = textShown;
      let ownPreserved = preserved;
      const afters = [];
      if (node.nodeType === 1) {
        const element = node;
        const tag = element.localName;
        if (NOT_READ.has(tag)) continue;
        const style = getComputedStyle(element);
        const display = style.display;
        if (display === 'none') continue;
        elementCount++;
        ownTextShown = style.visibility === 'visible';
        ownPreserved = KEPT_WHITESPACE.has(style.whiteSpace);
        const role = roleOf(element);
        if (tag === 'br') { endLine(); continue; }
        if (tag === 'iframe' || tag === 'frame') {
          endLine();
          if (isVisible(element)) {
            const content = frameContentBox(element);
            frameList.push({ frame: frameIdFor(element), ref: refFor(element), name: nameOf(element, 'iframe'), src: element.getAttribute('src') || '',
              x: Math.round(content.x), y: Math.round(content.y), w: Math.round(content.w), h: Math.round(content.h) });
            items.push({ frame: frameList.length - 1 });
          }
          continue;
        }
        const endsLines = !(display.startsWith('inline') || display === 'contents' || display === 'table-cell' || display.startsWith('ruby'));
        if (endsLines) { endLine(); afters.push(endLine); }
        // Cells are joined with a tab (a token, where " | " costs two before a number).
        if (display === 'table-cell' && (element.cellIndex > 0 || (element.cellIndex === undefined && element.previousElementSibling))) pieces.push(CELL_SEPARATOR);
        if (role === 'heading') {
          endLine();
          const level = Number(element.getAttribute('aria-level')) || Number(tag.slice(1)) || 2;
          const entry = { level, text: '' };
          mark('heading', entry);
          const from = items.length;
          pendingHeading = level;
          afters.push(() => {
            endLine();
            pendingHeading = 0;
            const said = items.slice(from).map((item) => (item.text !== undefined ? item.text : item.node !== undefined ? nodes[item.node].name : '')).join(' ');
            entry.text = clean(said || element.innerText, NAME_CHARS);
          });
        }
        if (LANDMARKS.has(role) && (role !== 'region' || element.hasAttribute('aria-label') || element.hasAttribute('aria-labelledby'))) {
          mark('landmark', { ref: refFor(element), role, name: nameOf(element, role) || undefined });
        }
        if ((role === 'dialog' || role === 'alertdialog') && (tag !== 'dialog' || element.open)) {
          mark('dialog', { ref: refFor(element), role, name: nameOf(element, role) || undefined, modal: tag === 'dialog' ? element.matches(':modal') : element.getAttribute('aria-modal') === 'true' });
        }
        if (role === 'alert' || role === 'status' || role === 'log' || (element.hasAttribute('aria-live') && element.getAttribute('aria-live') !== 'off')) {
          const text = clean(element.innerText, VALUE_CHARS);
          if (text) mark('live', { ref: refFor(element), role: role || 'live', text });
        }
        if (tag === 'table') mark('table', Object.assign({ ref: refFor(element) }, tableEntry(element)));
        if (tag === 'form') {
          const entry = formOf(element);
          entry.marked = true;
          mark('form', entry);
        }
        if (isInteractive(element, role) && isVisible(element)) {
          endLine();
          if (nodes.length >= maxItems) omittedNodes++;
          else {
            const info = nodeInfo(element, role);
            if (element.form) formOf(element.form).fields.push(info.ref);
            nodes.push(info);
            emit({ node: nodes.length - 1 });
            const from = items.length;
            afters.unshift(() => { endLine(); dropTextSaidBy(from, info.name); });
          }
        } else if (tag === 'label' && element.control && isInteractive(element.control, roleOf(element.control)) && isVisible(element.control)) {
          const control = element.control;
          const from = items.length;
          afters.unshift(() => { endLine(); dropTextSaidBy(from, nameOf(control, roleOf(control))); });
        }
        if (NO_TEXT_INSIDE.has(tag)) children = [];
        else if (tag === 'details' && !element.open) children = Array.from(element.children).filter((child) => child.localName === 'summary').slice(0, 1);
        else if (style.contentVisibility === 'hidden') children = [];
        else if (element.shadowRoot) children = element.shadowRoot.childNodes;
        else if (tag === 'slot') {
          const assigned = element.assignedNodes();
          if (assigned.length) children = assigned;
        }
      }
      if (afters.length) stack.push({ after: () => afters.forEach((run) => run()) });
      for (let index = children.length - 1; index >= 0; index--) stack.push({ node: children[index], textShown: ownTextShown, preserved: ownPreserved });
    }
    endLine();
    // A form whose own element was not read (hidden, elsewhere) is listed at the end.
    for (const entry of forms.values()) { if (!entry.marked) mark('form', entry); }
    for (const entry of forms.values()) delete entry.marked;
    return { items, nodes, frames: frameList, element_count: elementCount, omitted_nodes: omittedNodes };
  }

  function tableEntry(table) {
    const rows = table.rows ? table.rows.length : 0;
    const head = table.tHead && table.tHead.rows[0] ? table.tHead.rows[0] : (table.rows && table.rows[0]);
    const cells = (row) => Array.from(row.cells).slice(0, MAX_COLUMNS).map((cell) => clean(cell.innerText, CELL_CHARS));
    const firstBody = table.tBodies && table.tBodies[0] && table.tBodies[0].rows[0];
    const caption = table.caption ? table.caption.innerText : table.getAttribute('aria-label');
    return { caption: caption ? clean(caption, NAME_CHARS) : undefined, rows, columns: head ? head.cells.length : 0,
      headers: head ? cells(head) : [], first_row: firstBody ? cells(firstBody) : undefined };
  }
