// The live view's page: shows the session's frames and sends the person's input. The
// server decides everything (what a watch-only viewer may do included); this page only
// scales the picture and names what the person did.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const frame = $('frame');
  const keys = $('keys');
  const address = $('address');
  const tabs = $('tabs');
  let state = { control: false, width: 0, height: 0, tabs: [], tab: '' };
  let scale = 1;
  let frames = 0;
  let ended = false;
  let shownUrl = null;
  const down = new Set();

  const socket = new WebSocket(`ws://${location.host}${location.pathname.replace(/\/$/, '')}/ws`);
  socket.binaryType = 'blob';
  const send = (message) => { if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message)); };
  const bits = (event) => (event.shiftKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.altKey ? 4 : 0) | (event.metaKey ? 8 : 0);

  const notice = (title, text) => {
    $('notice-title').textContent = title;
    $('notice-text').textContent = text;
    $('notice').hidden = false;
    document.body.dataset.ended = title;
  };

  // The picture fills the stage at the page's aspect ratio; the server sends frames of
  // that size in device pixels (never larger than the page's own).
  let sentSize = '';
  const layout = () => {
    if (!state.width || !state.height) return;
    const stage = $('stage');
    scale = Math.min(stage.clientWidth / state.width, stage.clientHeight / state.height);
    frame.style.width = `${Math.floor(state.width * scale)}px`;
    frame.style.height = `${Math.floor(state.height * scale)}px`;
    const ratio = window.devicePixelRatio || 1;
    const size = { t: 'size', w: Math.round(state.width * scale * ratio), h: Math.round(state.height * scale * ratio) };
    const key = `${size.w}x${size.h}`;
    if (key !== sentSize) { sentSize = key; send(size); }
  };
  window.addEventListener('resize', layout);

  const showState = () => {
    const control = state.control;
    for (const id of ['back', 'forward', 'reload', 'done']) $(id).disabled = !control;
    address.disabled = !control;
    tabs.disabled = !control;
    $('mode').hidden = control;
    document.body.dataset.control = String(control);
    document.body.dataset.pageWidth = String(state.width);
    tabs.replaceChildren(...state.tabs.map((tab) => {
      const option = document.createElement('option');
      option.value = tab.tab;
      option.textContent = tab.title || tab.url;
      option.selected = tab.tab === state.tab;
      return option;
    }));
    const current = state.tabs.find((tab) => tab.tab === state.tab);
    if (current && current.url !== shownUrl && document.activeElement !== address) {
      address.value = current.url;
      shownUrl = current.url;
      address.classList.remove('invalid');
    }
    if (current) document.title = `${current.title || current.url} \u2014 malo-browser live view`;
    layout();
  };

  // Each frame is decoded off the page's thread and drawn whole, in the order the frames
  // came: the picture never shows a half-loaded or blank frame, and no frame is kept once
  // drawn. `data-frames` counts the frames drawn.
  const picture = frame.getContext('2d', { alpha: false });
  let received = 0;
  let drawn = 0;
  socket.addEventListener('message', (event) => {
    if (typeof event.data !== 'string') {
      const number = ++received;
      createImageBitmap(event.data).then((bitmap) => {
        // Decodes may finish out of order: a frame older than the one drawn is dropped.
        if (number > drawn) {
          drawn = number;
          if (frame.width !== bitmap.width || frame.height !== bitmap.height) {
            frame.width = bitmap.width;
            frame.height = bitmap.height;
          }
          picture.drawImage(bitmap, 0, 0);
          frames += 1;
          document.body.dataset.frames = String(frames);
        }
        bitmap.close();
      }, () => {});
      return;
    }
    const message = JSON.parse(event.data);
    if (message.t === 'state') {
      state = message;
      showState();
    } else if (message.t === 'ended') {
      ended = true;
      notice('Handed back', message.says);
    }
  });
  socket.addEventListener('close', () => {
    if (!ended) notice('Disconnected', 'The connection to the session was lost. Reload this page to reconnect.');
  });
  socket.addEventListener('open', () => { document.body.dataset.connected = 'true'; layout(); });

  // The pointer, in the page's CSS pixels. (A watch-only view sends it too: the server
  // drops it, which is where the rule is kept.)
  const at = (event) => {
    const box = frame.getBoundingClientRect();
    return { x: (event.clientX - box.left) / scale, y: (event.clientY - box.top) / scale };
  };
  let pendingMove = null;
  frame.addEventListener('pointermove', (event) => {
    const first = pendingMove === null;
    pendingMove = { t: 'move', ...at(event), m: bits(event) };
    if (first) requestAnimationFrame(() => { send(pendingMove); pendingMove = null; });
  });
  frame.addEventListener('pointerdown', (event) => {
    event.preventDefault();
    keys.focus({ preventScroll: true });
    frame.setPointerCapture(event.pointerId);
    if (pendingMove) { send(pendingMove); pendingMove = null; }
    send({ t: 'down', ...at(event), b: event.button, m: bits(event) });
  });
  frame.addEventListener('pointerup', (event) => {
    event.preventDefault();
    send({ t: 'up', ...at(event), b: event.button, m: bits(event) });
  });
  frame.addEventListener('contextmenu', (event) => event.preventDefault());
  frame.addEventListener('wheel', (event) => {
    event.preventDefault();
    const unit = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? state.height : 1;
    send({ t: 'wheel', ...at(event), dx: event.deltaX * unit, dy: event.deltaY * unit });
  }, { passive: false });

  // Keys: named keys and characters as keys; what an input method or a dead key composes,
  // and pastes from the person's clipboard, as text.
  keys.addEventListener('keydown', (event) => {
    if (event.isComposing || ['Dead', 'Process', 'Unidentified'].includes(event.key)) return;
    const paste = (event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'v';
    if (paste) return;
    event.preventDefault();
    // AltGr types its character: the character is what counts, not Control+Alt.
    const altGraph = event.key.length === 1 && event.ctrlKey && event.altKey;
    down.add(event.code || event.key);
    send({ t: 'key', d: true, key: event.key, code: event.code, loc: event.location, m: altGraph ? 0 : bits(event) });
  });
  keys.addEventListener('keyup', (event) => {
    if (!down.delete(event.code || event.key)) return;
    event.preventDefault();
    send({ t: 'key', d: false, key: event.key, code: event.code, loc: event.location, m: bits(event) });
  });
  const typeText = (text) => { if (text) send({ t: 'text', s: text }); keys.value = ''; };
  keys.addEventListener('compositionend', (event) => typeText(event.data));
  keys.addEventListener('input', (event) => { if (!event.isComposing) typeText(keys.value); });
  keys.addEventListener('paste', (event) => {
    event.preventDefault();
    typeText(event.clipboardData ? event.clipboardData.getData('text/plain') : '');
  });

  // The toolbar.
  for (const id of ['back', 'forward', 'reload']) $(id).addEventListener('click', () => send({ t: 'nav', a: id }));
  $('done').addEventListener('click', () => send({ t: 'done' }));
  tabs.addEventListener('change', () => send({ t: 'tab', id: tabs.value }));
  address.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    const url = address.value.trim();
    const ok = /^https?:\/\/[^\s/@]+(\/|$|\?|#)/i.test(url) && !/^https?:\/\/[^/]*@/i.test(url);
    address.classList.toggle('invalid', !ok);
    if (ok) { send({ t: 'go', url }); address.blur(); keys.focus({ preventScroll: true }); }
  });
  address.addEventListener('blur', () => { shownUrl = null; showState(); });
})();
