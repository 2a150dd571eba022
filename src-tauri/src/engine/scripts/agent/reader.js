// Reading (`read`): the document's main content as Markdown blocks, chosen the way reader
// modes choose it. Paragraph-like elements score their ancestors by their text (commas,
// length), class and id names that say "content" or "sidebar" weigh for or against, and
// link-heavy containers lose; the best container, widened to its article or to a parent
// that adds little text (its heading), is rendered. Inside it, navigation, banners,
// sidebars, footers, forms, controls, hidden elements and link lists are left out.
// Headings, paragraphs, lists, quotes, code, tables and links become Markdown, a block
// each (a list item and a table row too), which Rust pages by its token budget.
  const READ_SKIPPED = new Set(['script', 'style', 'template', 'head', 'noscript', 'title', 'meta', 'link', 'svg', 'canvas',
    'iframe', 'frame', 'frameset', 'object', 'embed', 'video', 'audio', 'select', 'textarea', 'input', 'button', 'form',
    'nav', 'aside', 'footer', 'dialog', 'menu', 'datalist', 'map', 'area']);
  const READ_SKIPPED_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar',
    'toolbar', 'dialog', 'alertdialog', 'tablist', 'button']);
  const READ_BLOCKS = new Set(['address', 'article', 'aside', 'blockquote', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset',
    'figcaption', 'figure', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr', 'li', 'main', 'ol', 'p',
    'pre', 'section', 'table', 'ul', 'summary', 'center', 'body']);
  const READ_INLINE = new Set(['a', 'abbr', 'b', 'bdi', 'bdo', 'br', 'cite', 'code', 'data', 'del', 'dfn', 'em', 'i', 'img',
    'ins', 'kbd', 'mark', 'q', 'rp', 'rt', 'ruby', 's', 'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var',
    'wbr', 'font', 'label', 'picture', 'strike', 'tt', 'big']);
  const READ_UNLIKELY = /(^|[-_\s])(nav|navbar|navigation|menu|sidebar|side-bar|breadcrumbs?|footer|masthead|share|sharing|social|related|comments?|advert|ads|ad|promo|sponsor|cookies?|banner|newsletter|subscribe|popup|modal|skip|toolbar|pagination|pager|widget)([-_\s]|$)/i;
  const READ_LIKELY = /(^|[-_\s])(article|body|content|entry|main|page|post|text|story|blog|prose|markdown)([-_\s]|$)/i;
  // Characters of Markdown one answer of the agent carries at most (Rust pages it further).
  const READ_MAX_CHARS = 2000000;
  // A hard line break inside a block, kept through whitespace collapsing.
  const HARD_BREAK = '\u0002';

  function childrenOf(node) {
    if (node.localName === 'slot' && typeof node.assignedNodes === 'function') {
      const assigned = node.assignedNodes({ flatten: true });
      if (assigned.length) return assigned;
    }
    return node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
  }
  function classWords(element) {
    return (typeof element.className === 'string' ? element.className : '') + ' ' + (element.id || '');
  }
  // Left out of what is read: never content, hidden, or chrome around the content.
  function readSkipped(element) {
    const tag = element.localName;
    if (READ_SKIPPED.has(tag)) return true;
    if (element.hidden || element.getAttribute('aria-hidden') === 'true') return true;
    const role = element.getAttribute('role');
    if (role && READ_SKIPPED_ROLES.has(role)) return true;
    if (tag === 'header' && !element.querySelector('h1, h2, h3')) return true;
    if (!/^h[1-6]$/.test(tag) && tag !== 'article' && tag !== 'main' && tag !== 'table') {
      const words = classWords(element);
      if (READ_UNLIKELY.test(words) && !READ_LIKELY.test(words)) return true;
    }
    if (typeof element.checkVisibility === 'function' && !element.checkVisibility({ checkVisibilityCSS: true })) return true;
    return false;
  }
  const squash = (text) => text.replace(/[ \t\n\r\f\v\u00a0]+/g, ' ').trim();

  // ---- choosing the content ----------------------------------------------------------------
  function readTextLength(element, lengths) {
    if (lengths.has(element)) return lengths.get(element);
    let length = 0;
    for (const child of childrenOf(element)) {
      if (child.nodeType === 3) length += squash(child.data).length;
      else if (child.nodeType === 1 && !readSkipped(child)) length += readTextLength(child, lengths);
    }
    lengths.set(element, length);
    return length;
  }
  function linkDensity(element, lengths) {
    const total = readTextLength(element, lengths);
    if (!total) return 0;
    let linked = 0;
    for (const link of element.querySelectorAll('a')) linked += squash(link.textContent || '').length;
    return Math.min(1, linked / total);
  }
  function baseScore(element) {
    let score = 0;
    switch (element.localName) {
      case 'article': score += 30; break;
      case 'main': score += 15; break;
      case 'div': case 'section': score += 5; break;
      case 'pre': case 'td': case 'blockquote': score += 3; break;
      case 'ol': case 'ul': case 'dl': case 'dd': case 'dt': case 'li': case 'form': case 'address': score -= 3; break;
      case 'th': case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6': score -= 5; break;
    }
    if (element.getAttribute('role') === 'main') score += 15;
    const words = classWords(element);
    if (READ_LIKELY.test(words)) score += 25;
    if (READ_UNLIKELY.test(words)) score -= 25;
    return score;
  }
  function chooseContent() {
    const body = document.body || document.documentElement;
    if (!body) return null;
    const lengths = new Map();
    const scores = new Map();
    const add = (element, points) => {
      if (!element || element.nodeType !== 1) return;
      if (!scores.has(element)) scores.set(element, baseScore(element));
      scores.set(element, scores.get(element) + points);
    };
    for (const paragraph of body.querySelectorAll('p, pre, td, blockquote, li, div, section')) {
      if (paragraph.closest('nav, aside, footer, form, [role=navigation], [role=complementary], [role=contentinfo]')) continue;
      if (paragraph.localName === 'div' || paragraph.localName === 'section') {
        // A container scores as a paragraph only for text directly inside it.
        let own = '';
        for (const child of paragraph.childNodes) if (child.nodeType === 3) own += child.data;
        if (squash(own).length < 25) continue;
      }
      const text = squash(paragraph.textContent || '');
      if (text.length < 25) continue;
      const points = 1 + text.split(/[,，、]/).length + Math.min(Math.floor(text.length / 100), 3);
      let ancestor = paragraph.parentElement;
      for (let level = 0; ancestor && level < 3; level++, ancestor = ancestor.parentElement) {
        add(ancestor, level === 0 ? points : points / (level * 2));
        if (ancestor === body) break;
      }
    }
    let best = null;
    let bestScore = -Infinity;
    for (const [element, score] of scores) {
      if (readSkipped(element)) continue;
      const final = score * (1 - linkDensity(element, lengths));
      if (final > bestScore) { best = element; bestScore = final; }
    }
    if (!best) return document.querySelector('article, main, [role=main]') || body;
    // The article the best container is part of; else parents that add little text (the
    // heading above it, a byline).
    const article = best.closest('article');
    if (article && article !== best && readTextLength(article, lengths) < readTextLength(best, lengths) * 2) best = article;
    while (best.parentElement && best !== body && best.localName !== 'article') {
      const parent = best.parentElement;
      if (readSkipped(parent) || readTextLength(parent, lengths) > readTextLength(best, lengths) * 1.25 + 200) break;
      best = parent;
    }
    return best;
  }

  // ---- rendering it as Markdown --------------------------------------------------------------
  function isBlockElement(element) {
    const tag = element.localName;
    if (READ_BLOCKS.has(tag) || /^h[1-6]$/.test(tag)) return true;
    if (READ_INLINE.has(tag)) return false;
    const display = getComputedStyle(element).display;
    return !(display.startsWith('inline') || display === 'contents' || display === 'ruby');
  }
  function inlineOf(node) {
    let out = '';
    for (const child of childrenOf(node)) {
      if (child.nodeType === 3) { out += child.data; continue; }
      if (child.nodeType !== 1 || readSkipped(child)) continue;
      out += inlineElement(child);
    }
    return out;
  }
  function wrap(mark, text) {
    const inner = squash(text);
    return inner ? ' ' + mark + inner + mark + ' ' : '';
  }
  function inlineElement(element) {
    switch (element.localName) {
      case 'br': return HARD_BREAK;
      case 'img': {
        const alt = squash(element.getAttribute('alt') || '');
        return alt && element.src && !element.src.startsWith('data:') ? '![' + alt.replace(/[[\]]/g, '') + '](' + element.src + ')' : '';
      }
      case 'a': {
        const text = squash(inlineOf(element).replace(new RegExp(HARD_BREAK, 'g'), ' '));
        const href = element.href && typeof element.href === 'string' ? element.href : '';
        if (!text) return '';
        if (!href || /^javascript:/i.test(href)) return text;
        return ' [' + text.replace(/[[\]]/g, '\\$&') + '](' + href.replace(/[ ()]/g, (character) => '%' + character.charCodeAt(0).toString(16).toUpperCase()) + ') ';
      }
      case 'strong': case 'b': return wrap('**', inlineOf(element));
      case 'em': case 'i': return wrap('*', inlineOf(element));
      case 'del': case 's': case 'strike': return wrap('~~', inlineOf(element));
      case 'code': case 'kbd': case 'samp': case 'tt': {
        const code = squash(element.textContent || '');
        return code ? ' `' + code.replace(/`/g, '\u02cb') + '` ' : '';
      }
      default: return inlineOf(element);
    }
  }
  // An inline run as one line of Markdown (hard breaks become new lines under `prefix`).
  function inlineText(raw, prefix) {
    return raw.split(HARD_BREAK).map(squash).map((line) => line.replace(/ ([,.;:!?)])/g, '$1')).filter(Boolean).join('\n' + prefix);
  }

  function renderContent(root) {
    const blocks = [];
    let chars = 0;
    let cut = false;
    const push = (md, extra) => {
      if (!md || cut) return;
      if (chars + md.length > READ_MAX_CHARS) { cut = true; return; }
      chars += md.length;
      blocks.push(Object.assign({ md }, extra));
    };
    // The children of a container: runs of inline content are paragraphs, blocks render.
    function container(node, quote) {
      let run = '';
      const flush = () => {
        const text = inlineText(run, quote);
        run = '';
        if (text) push(quote + text);
      };
      for (const child of childrenOf(node)) {
        if (child.nodeType === 3) { run += child.data; continue; }
        if (child.nodeType !== 1 || readSkipped(child)) continue;
        if (isBlockElement(child)) { flush(); block(child, quote); } else run += inlineElement(child);
      }
      flush();
    }
    function block(element, quote) {
      const tag = element.localName;
      const heading = /^h([1-6])$/.exec(tag);
      if (heading) {
        const text = inlineText(inlineOf(element).replace(new RegExp(HARD_BREAK, 'g'), ' '), quote);
        if (text) push(quote + '#'.repeat(Number(heading[1])) + ' ' + text, { opens: true });
        return;
      }
      switch (tag) {
        case 'p': case 'summary': case 'figcaption': case 'address': case 'dt': case 'dd': {
          const text = inlineText(inlineOf(element), quote);
          if (!text) return;
          if (tag === 'dt') push(quote + '**' + text + '**', { tight: true });
          else if (tag === 'dd') push(quote + ': ' + text, { tight: true });
          else push(quote + text);
          return;
        }
        case 'ul': case 'ol': list(element, quote, 0); return;
        case 'li': list({ localName: 'ul', children: [element] }, quote, 0); return;
        case 'pre': {
          const code = (element.innerText !== undefined ? element.innerText : element.textContent || '').replace(/\n+$/, '');
          if (code.trim()) push(quote + '```\n' + quote + code.split('\n').join('\n' + quote) + '\n' + quote + '```');
          return;
        }
        case 'blockquote': container(element, quote + '> '); return;
        case 'hr': push(quote + '---'); return;
        case 'table': table(element, quote); return;
        default: container(element, quote);
      }
    }
    function list(element, quote, depth) {
      const ordered = element.localName === 'ol';
      let number = ordered && Number.isFinite(element.start) ? element.start : 1;
      const indent = '  '.repeat(depth);
      let first = depth === 0;
      for (const item of Array.from(element.children || [])) {
        if (item.localName !== 'li' || readSkipped(item)) continue;
        let run = '';
        const nested = [];
        for (const child of childrenOf(item)) {
          if (child.nodeType === 3) { run += child.data; continue; }
          if (child.nodeType !== 1 || readSkipped(child)) continue;
          if (child.localName === 'ul' || child.localName === 'ol') nested.push(child);
          else if (isBlockElement(child)) run += ' ' + inlineOf(child) + ' ';
          else run += inlineElement(child);
        }
        const marker = ordered ? number++ + '. ' : '- ';
        const text = inlineText(run, quote + indent + '   ');
        if (text || nested.length) {
          push(quote + indent + marker + text, { tight: !first });
          first = false;
        }
        for (const sub of nested) list(sub, quote, depth + 1);
      }
    }
    function table(element, quote) {
      const rows = Array.from(element.rows || []).filter((row) => !readSkipped(row));
      if (!rows.length) return;
      const cellsOf = (row) => Array.from(row.cells).filter((cell) => !cell.hidden).flatMap((cell) => {
        const text = inlineText(inlineOf(cell).replace(new RegExp(HARD_BREAK, 'g'), ' '), '').replace(/\|/g, '\\|');
        return Array(Math.max(1, Math.min(cell.colSpan || 1, MAX_COLUMNS))).fill(text);
      });
      const grid = rows.map(cellsOf);
      const width = Math.min(MAX_COLUMNS * 2, grid.reduce((most, cells) => Math.max(most, cells.length), 0));
      if (!width) return;
      const line = (cells) => quote + '| ' + Array.from({ length: width }, (_, index) => cells[index] || '').join(' | ') + ' |';
      const caption = element.caption ? inlineText(inlineOf(element.caption), quote) : '';
      if (caption) push(quote + '*' + caption + '*');
      const head = blocks.length;
      push(line(grid[0]) + '\n' + quote + '|' + ' --- |'.repeat(width), { opens: true });
      for (const cells of grid.slice(1)) push(line(cells), { tight: true, head });
    }
    if (root.localName && /^h[1-6]$|^(p|ul|ol|pre|table|blockquote)$/.test(root.localName)) block(root, '');
    else container(root, '');
    return { blocks, cut };
  }

  function readPage() {
    const root = chooseContent();
    const { blocks, cut } = root ? renderContent(root) : { blocks: [], cut: false };
    return { url: location.href, title: document.title || '', blocks, cut };
  }
