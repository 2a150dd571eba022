// File inputs, answered through their own chooser: find one and check it takes the files,
// open its chooser, read what it holds; and frame_of (a child frame by its iframe's
// selector).
  // Every match of a selector in the document and in every open shadow root, in tree order.
  function deepQueryAll(selector) {
    const found = [];
    for (const element of walk(document)) {
      try { if (element.matches(selector)) found.push(element); } catch (error) {
        throw new AgentError('E_BAD_REQUEST', 'invalid selector ' + JSON.stringify(selector) + ': ' + error.message);
      }
    }
    return found;
  }
  // Finds a file input (a ref, or the nth match of a selector) and checks it takes `count`
  // files; the engine then opens its chooser and answers it with the files.
  function fileInput(args) {
    useBase(args.base);
    let element;
    if (typeof args.ref === 'number') element = target(args);
    else {
      const matches = args.pierce ? deepQueryAll(args.selector) : queryAll(args.selector, 0);
      element = matches[args.nth || 0];
      if (!element) {
        throw new AgentError('E_NOT_FOUND', 'no element matches ' + JSON.stringify(args.selector) + (args.nth ? ' at index ' + args.nth : '')
          + ' (' + matches.length + ' matches)', { selector: args.selector, matches: matches.length });
      }
    }
    if (element.localName !== 'input' || element.type !== 'file') {
      throw new AgentError('E_BAD_REQUEST', describe(element) + ' is not a file input (<input type=file>)', { reason: 'not_a_file_input' });
    }
    if (element.disabled) throw new AgentError('E_DISABLED', 'the file input ' + describe(element) + ' is disabled');
    if (args.count > 1 && !element.multiple) {
      throw new AgentError('E_BAD_REQUEST', 'the file input ' + describe(element) + ' takes one file, not ' + args.count + ' (it has no multiple attribute)', { reason: 'not_multiple' });
    }
    return { ref: refFor(element), multiple: element.multiple, accept: element.accept, selector: selectorFor(element), next_ref: refs.next };
  }
  // Opens the input's chooser as a person's click would (this call counts as a user gesture).
  function openFileChooser(args) {
    const element = target(args);
    element.click();
    return { opened: true };
  }
  // The files an input holds now.
  function fileInputState(args) {
    const element = target(args);
    const files = Array.from(element.files || []);
    return { count: files.length, files: files.map((file) => ({ name: file.name, size: file.size })) };
  }
  // A frame of this document, by a selector of its <iframe>.
  function frameOf(args) {
    const [frame] = queryAll(args.selector, 1);
    if (!frame || !['iframe', 'frame'].includes(frame.localName)) {
      throw new AgentError('E_NOT_FOUND', 'no iframe matches ' + JSON.stringify(args.selector), { frame_selector: args.selector });
    }
    return { frame: frameIdFor(frame) };
  }
