// Hands the engine its entry points (`__malo`, hidden from enumeration and frozen) and
// closes the scope prelude.js opened.
  Object.defineProperty(globalThis, '__malo', { value: Object.freeze({ run, send, isLeaving, inputCount }), enumerable: false });
})();
