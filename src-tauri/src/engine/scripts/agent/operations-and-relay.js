// The operations table and the relay: the names Rust calls the operations by, running one
// (an answer or a promise of one), and relaying an operation down the frame tree to a
// child frame's agent, whose answer goes to Rust through the private message handler.
  // Every operation Rust may call (engine/agent.rs lists the same names, and a test holds it).
  const operations = { login_form: loginForm, login_state: loginState, snapshot, locate, frame_box: frameBox, frame_hit: frameHit,
    read_page: readPage, element_read: elementRead,
    focus, fill, set_value: setValue, select, scroll_by: scrollBy, extract, probe, html5_drag: html5Drag,
    file_input: fileInput, open_file_chooser: openFileChooser, file_input_state: fileInputState, frame_of: frameOf, ax_tree: axTree, find };

  function handle(op, args) {
    const operation = operations[op];
    if (!operation) throw new AgentError('E_INTERNAL', 'unknown agent operation ' + op);
    return operation(args || {});
  }
  // An operation's answer, or a promise of it for the few that wait for a frame.
  function run(op, args) {
    const failed = (error) => ({ ok: false, error: { code: error.code || 'E_SCRIPT_ERROR', message: String(error.message || error), details: error.details || {} } });
    try {
      const result = handle(op, args);
      if (result && typeof result.then === 'function') return result.then((value) => ({ ok: true, result: value }), failed);
      return { ok: true, result };
    } catch (error) {
      return failed(error);
    }
  }

  // ---- relay down the frame tree ------------------------------------------------------------
  function post(message) {
    try { window.webkit.messageHandlers.malo.postMessage(JSON.stringify(message)); } catch (error) { /* no handler: engine gone */ }
  }
  function send(path, op, args, id) {
    const [first, ...rest] = path;
    const iframe = frameFor(first);
    if (!iframe || !iframe.contentWindow) {
      return { ok: false, error: { code: 'E_STALE_REF', message: 'the frame is gone; take a new snapshot', details: {} } };
    }
    iframe.contentWindow.postMessage({ malo: SECRET, path: rest, op, args, id }, '*');
    return { ok: true, sent: true };
  }
  window.addEventListener('message', (event) => {
    const data = event.data;
    if (!data || typeof data !== 'object' || data.malo !== SECRET) return;
    event.stopImmediatePropagation();
    if (event.source !== window.parent || window.parent === window) return;
    if (data.path && data.path.length) {
      const forwarded = send(data.path, data.op, data.args, data.id);
      if (!forwarded.ok) post({ id: data.id, ...forwarded });
      return;
    }
    Promise.resolve(run(data.op, data.args)).then((answer) => post({ id: data.id, ...answer }));
  }, true);
