// promises.js — reactions to promises (then/catch/finally callbacks) and queueMicrotask.
//
// A reaction runs as a microtask right after the code that settled its promise (or queued
// it). When that code ran in an action of ours, the reaction is part of that action's turn.
// Promises the host settles in a task the controller does not wrap (`img.decode()`,
// `document.fonts.ready`, `caches.match`, `navigator.permissions.query`, …) run their
// reactions with no action open: such a reaction begins a `continuation` action forked by the
// action that registered it (called `then`), which is what made it run. `await` does not call
// `then`; its continuations are attributed the same way by `T.await1` (controller.js).
// Record and replay only: repair mode has nothing to attribute.

/** `f` wrapped to begin a continuation of action `from` when it runs outside any action. */
function reaction(f, from, parent) {
  if (typeof f !== 'function') return f;
  return function () {
    if (cur < 0) beginContinuation(from, parent);
    return rApply(f, this, arguments);
  };
}

function installPromises() {
  if (!REC) return;
  const PP = NativePromise.prototype;
  const nThen = PP.then;
  patch(PP, 'then', function then(onFulfilled, onRejected) {
    if (cur < 0) return rApply(nThen, this, arguments);
    return rApply(nThen, this, [reaction(onFulfilled, cur, info), reaction(onRejected, cur, info)]);
  });
  if (typeof nQueueMicrotask === 'function') {
    patch(G, 'queueMicrotask', function queueMicrotask(callback) {
      if (cur < 0 || typeof callback !== 'function') return rApply(nQueueMicrotask, G, arguments);
      return rApply(nQueueMicrotask, G, [reaction(callback, cur, info)]);
    });
  }
}
