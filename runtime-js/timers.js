// timers.js — setTimeout/setInterval, requestAnimationFrame, requestIdleCallback.
//
// Each registration forks its callback (arc creator → tick, with the delay for timers); each
// tick is an action that reads `Timer:<id>`; set and clear write it. Timers with the same delay
// fire in registration order (EventRacer's timer graph, restricted to equal delays): a tick
// joins the last tick of an earlier-registered timer with the same delay.

// Wrappers print like the natives they replace (`function fetch() { [native code] }`): some
// libraries test `/\[native code\]/` before trusting an API (and polyfill it otherwise).
const nativeNames = new NativeWeakMap();
function markNative(f, name) {
  wmSet(nativeNames, f, name);
}
function installToString() {
  const FPToString = FP.toString;
  const toString = function toString() {
    const n = wmGet(nativeNames, this);
    if (n !== undefined) return 'function ' + n + '() { [native code] }';
    const src = wmGet(fnSources, this); // instrumented `new Function` code (dynamic.js)
    if (src !== undefined) return src;
    return rApply(FPToString, this, arguments);
  };
  markNative(toString, 'toString');
  defProp(FP, 'toString', { value: toString, writable: true, enumerable: false, configurable: true });
}

/** Replaces `obj[name]` with `f`, keeping the property's attributes; `f` looks native. */
function patch(obj, name, f) {
  const d = getDesc(obj, name);
  if (d === undefined) return false;
  markNative(f, name);
  try {
    defProp(f, 'name', { value: name, configurable: true });
  } catch (_) {
    // fine: the name is cosmetic
  }
  if ('value' in d) {
    defProp(obj, name, { value: f, writable: d.writable, enumerable: d.enumerable, configurable: true });
  } else {
    return false;
  }
  return true;
}

const timerDescs = objCreate(null); // timer id -> desc (live timeouts and intervals)
const issuedTimers = objCreate(null); // every timer id handed out (a clear writes it, fired or not)
const virtualHeld = objCreate(null); // timer id -> hid of its callback held in virtual time
const virtualFrames = objCreate(null); // frame / idle id -> hid (virtual time)
const frameDescs = objCreate(null); // 'r' / 'i' + frame / idle id -> desc, while a repair policy is on
const MAX_DELAY = 2147483647;
function noop() {}

/**
 * Virtual time (controller.js `virtualTime`): asks the decider now instead of when the native
 * timer fires; when it holds, `go` is held at once and true returned.
 */
function holdVirtual(d, go) {
  if (!virtualTime || decider === null || decide(d) !== HOLD) return false;
  d.released = true; // decided: the release runs it
  hold(d, go);
  return true;
}

/**
 * Wraps `cancelAnimationFrame`/`cancelIdleCallback` (native `nCancel`): a callback held in
 * virtual time (`virtualFrames[prefix + id]`) is discarded too.
 */
function patchCancel(name, nCancel, prefix) {
  if (!nCancel) return;
  patch(G, name, function (id) {
    const fd = frameDescs[prefix + id];
    if (fd !== undefined) {
      delete frameDescs[prefix + id];
      if (repairOn && fd.pev !== undefined) repairCancelled(fd.pev); // it will not run: arrived
    }
    const h = virtualFrames[prefix + id];
    if (h !== undefined) {
      delete virtualFrames[prefix + id];
      discardHeld(h);
    }
    return rApply(nCancel, G, [id]);
  });
}

/** A timer id the page can clear, without a native timer behind it. */
function reserveTimerId() {
  const id = rApply(nSetTimeout, G, [noop, MAX_DELAY]);
  rApply(nClearTimeout, G, [id]);
  return id;
}

/** Clearing a timer writes its location whether or not it fired (in another order it would
 * not have): the explorer sees the clear race with the tick. */
function clearTimer(id) {
  if (REC && issuedTimers[id] === 1) write('Timer:' + id, undefined);
  const d = timerDescs[id];
  if (repairOn && d !== undefined && d.pev !== undefined) repairCancelled(d.pev); // it will not run: arrived
  delete timerDescs[id];
  const h = virtualHeld[id];
  if (h !== undefined) {
    delete virtualHeld[id];
    discardHeld(h);
  }
}
const fifoByDelay = objCreate(null); // delay -> {seq, action}

function toDelay(t) {
  const n = +t;
  return n > 0 ? mathFloor(n) : 0;
}

function timerJoin(d) {
  const key = d.delay;
  const last = fifoByDelay[key];
  if (last !== undefined && last.seq < d.seq) d.joins = [last.action];
  return last;
}

function timerFired(d) {
  const key = d.delay;
  const last = fifoByDelay[key];
  if (last === undefined || last.seq < d.seq) fifoByDelay[key] = { seq: d.seq, action: d.action };
}

function toCallable(handler) {
  if (typeof handler === 'function') return handler;
  let code = NativeString(handler);
  // Record mode: string timers are instrumented like any dynamic code (access.js).
  if (REC && typeof api.i === 'function') {
    try {
      code = api.i(code, 'script');
    } catch (_) {
      code = NativeString(handler);
    }
  }
  return function () {
    return (0, nativeEval)(code);
  };
}

/**
 * Whether a timeout set now repeats work: two timer callbacks already lead to the running one
 * (a poll that sets itself again, a slider's next slide, a request sent from a timer whose
 * answer sets the next timer). Such a timeout is an `interval` to the trace and the policies,
 * as a setInterval tick is: a policy waiting for a page's asynchronous initialization to end
 * (`async`, the prelude's q_fork, names `timer` and not `interval`) would otherwise wait for
 * it forever, discarding the user's input (EventRaceCommander's WAITREC on a slider).
 */
function repeats() {
  const p = parentInfo();
  return p.timers !== undefined && p.timers >= 2;
}

function installTimers() {
  if (nSetTimeout) {
    patch(G, 'setTimeout', function (handler, timeout) {
      if (passive()) return rApply(nSetTimeout, G, arguments);
      const fn = toCallable(handler);
      const extra = [];
      for (let i = 2; i < arguments.length; i++) extra[extra.length] = arguments[i];
      const d = forkDesc(1, repeats() ? 'interval' : 'timer', undefined, toDelay(timeout));
      let id = 0;
      if (DET) d.at = vClock;
      const cb = function () {
        delete timerDescs[id];
        delete virtualHeld[id];
        if (DET) advanceClockTo(d.at + d.delay);
        timerJoin(d);
        d.label = 'timer:' + id;
        return runTask(d, tick, G, extra);
      };
      const tick = function () {
        timerFired(d);
        if (REC) read('Timer:' + id);
        return rApply(fn, G, arguments);
      };
      if (virtualTime && decider !== null) {
        id = reserveTimerId();
        if (holdVirtual(d, cb)) virtualHeld[id] = d.hid;
        else id = rApply(nSetTimeout, G, [cb, timeout]);
      } else {
        id = rApply(nSetTimeout, G, [cb, timeout]);
      }
      timerDescs[id] = d;
      issuedTimers[id] = 1;
      if (REC) writeS('Timer:' + id, 'Timer[' + id + ']');
      return id;
    });
    patch(G, 'clearTimeout', function (id) {
      clearTimer(id);
      return rApply(nClearTimeout, G, [id]);
    });
  }
  if (nSetInterval) {
    patch(G, 'setInterval', function (handler, timeout) {
      if (passive()) return rApply(nSetInterval, G, arguments);
      const fn = toCallable(handler);
      const extra = [];
      for (let i = 2; i < arguments.length; i++) extra[extra.length] = arguments[i];
      const reg = forkDesc(1, 'interval', undefined, toDelay(timeout));
      let id = 0;
      let n = 0;
      const tickDesc = function () {
        n++;
        const d = {
          hid: 0, type: 1, kind: 'interval', stable: reg.stable + '/tick#' + n, label: 'interval:' + id,
          from: reg.from, delay: reg.delay, joins: null, url: undefined,
          seq: n === 1 ? reg.seq : nTaskSeq++, parent: reg.parent,
        };
        if (n > 1 && reg.last >= 0) d.joins = [reg.last];
        if (n === 1 && reg.pev !== undefined) d.pev = reg.pev;
        return d;
      };
      const run = function (d) {
        return runTask(d, function () {
          reg.last = d.action;
          if (REC) read('Timer:' + id);
          return rApply(fn, G, arguments);
        }, G, extra);
      };
      const cb = function () {
        if (timerDescs[id] === undefined) return undefined; // cleared while a tick was held
        return run(tickDesc());
      };
      // Virtual time: each tick is held as soon as the previous one ran.
      const armVirtual = function () {
        const d = tickDesc();
        const go = function () {
          delete virtualHeld[id];
          if (timerDescs[id] === undefined) return undefined;
          if (DET) advanceClockTo(vClock + (d.delay || 0));
          try {
            return run(d);
          } finally {
            if (timerDescs[id] !== undefined) armVirtual();
          }
        };
        if (holdVirtual(d, go)) {
          virtualHeld[id] = d.hid;
          return true;
        }
        n--;
        return false;
      };
      reg.last = -1;
      if (virtualTime && decider !== null) {
        id = reserveTimerId();
        timerDescs[id] = reg;
        if (!armVirtual()) {
          delete timerDescs[id];
          id = rApply(nSetInterval, G, [cb, timeout]);
        }
      } else {
        id = rApply(nSetInterval, G, [cb, timeout]);
      }
      timerDescs[id] = reg;
      issuedTimers[id] = 1;
      if (REC) writeS('Timer:' + id, 'Timer[' + id + ']');
      return id;
    });
    patch(G, 'clearInterval', function (id) {
      clearTimer(id);
      return rApply(nClearInterval, G, [id]);
    });
  }
  if (nRaf) {
    patch(G, 'requestAnimationFrame', function (callback) {
      if (passive()) return rApply(nRaf, G, arguments);
      if (typeof callback !== 'function') return rApply(nRaf, G, [callback]);
      const d = forkDesc(1, 'raf', undefined, undefined);
      d.label = 'animation frame';
      // Frames run their callbacks in registration order (queue FIFO, docs/trace-format.md).
      if (REC) d.queue = 'Queue:AnimationFrames';
      if (virtualTime && decider !== null) {
        const id = rApply(nRaf, G, [noop]);
        rApply(nCancelRaf, G, [id]);
        const go = function () {
          delete virtualFrames['r' + id];
          return runTask(d, callback, G, [nPerfNow !== null ? nPerfNow(G.performance) : 0]);
        };
        if (holdVirtual(d, go)) {
          virtualFrames['r' + id] = d.hid;
          return id;
        }
      }
      const fid = rApply(nRaf, G, [function (ts) {
        delete frameDescs['r' + fid];
        return runTask(d, callback, G, [ts]);
      }]);
      if (repairOn) frameDescs['r' + fid] = d;
      return fid;
    });
    patchCancel('cancelAnimationFrame', nCancelRaf, 'r');
  }
  if (nRic) {
    patch(G, 'requestIdleCallback', function (callback, options) {
      if (passive()) return rApply(nRic, G, arguments);
      if (typeof callback !== 'function') return rApply(nRic, G, [callback, options]);
      const d = forkDesc(1, 'idle', undefined, undefined);
      d.label = 'idle callback';
      if (virtualTime && decider !== null) {
        const id = rApply(nRic, G, [noop]);
        if (nCancelRic) rApply(nCancelRic, G, [id]);
        const go = function () {
          delete virtualFrames['i' + id];
          const deadline = { didTimeout: false, timeRemaining: () => 50 };
          return runTask(d, callback, G, [deadline]);
        };
        if (holdVirtual(d, go)) {
          virtualFrames['i' + id] = d.hid;
          return id;
        }
      }
      const fid = rApply(nRic, G, [function (deadline) {
        delete frameDescs['i' + fid];
        return runTask(d, callback, G, [deadline]);
      }, options]);
      if (repairOn) frameDescs['i' + fid] = d;
      return fid;
    });
    patchCancel('cancelIdleCallback', nCancelRic, 'i');
  }
}
