// malo's page agent, first section: it opens the agent's one scope, which the sections of
// this folder share (engine/agent.rs assembles them, in the order AGENT_SECTIONS lists,
// into the one script the engine installs; export.js closes it).
//
// The agent is installed by the engine as a user script in every frame (cross-origin
// ones too), at document start, in the isolated script world "malo": it sees the DOM but
// not the page's globals, so a page that overrides DOM methods or JSON cannot affect it,
// and the page cannot see or call it.
//
// The main frame is driven with `__malo.run(op, args)` (evaluated from Rust). A child
// frame is reached by relaying the operation down the frame tree with postMessage; our
// capturing listener is registered before any page script, stops the event, and only obeys
// messages that come from the parent window and carry the session's secret. Results of
// relayed operations go straight to Rust through the world's private message handler, so
// a parent page never sees a cross-origin child's data.
(() => {
  'use strict';
  if (globalThis.__malo) return;
  const SECRET = '__MALO_SECRET__';
  // Caps of single strings and nested lists in snapshots (docs/API.md lists them).
  const NAME_CHARS = 80;
  const VALUE_CHARS = 200;
  const CELL_CHARS = 40;
  const MAX_OPTIONS = 50;
  const MAX_COLUMNS = 20;
