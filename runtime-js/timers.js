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

function installTimers() {
  if (nSetTimeout) {
    patch(G, 'setTimeout', function (handler, timeout) {
      if (passive()) return rApply(nSetTimeout, G, arguments);
      const fn = toCallable(handler);
      const extra = [];
      for (let i = 2; i < arguments.length; i++) extra[extra.length] = arguments[i];
      const d = forkDesc(1, 'timer', undefined, toDelay(timeout));
      let id = 0;
      if (DET) d.at = vClock;
      const cb = function () {
        delete timerDescs[id];
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
      id = rApply(nSetTimeout, G, [cb, timeout]);
      timerDescs[id] = d;
      if (REC) writeS('Timer:' + id, 'Timer[' + id + ']');
      return id;
    });
    patch(G, 'clearTimeout', function (id) {
      if (REC && timerDescs[id] !== undefined) write('Timer:' + id, undefined);
      delete timerDescs[id];
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
      const cb = function () {
        if (timerDescs[id] === undefined) return undefined; // cleared while a tick was held
        n++;
        const d = {
          hid: 0, type: 1, kind: 'interval', stable: reg.stable + '/tick#' + n, label: 'interval:' + id,
          from: reg.from, delay: reg.delay, joins: null, url: undefined,
          seq: n === 1 ? reg.seq : nTaskSeq++, parent: reg.parent,
        };
        if (n > 1 && reg.last >= 0) d.joins = [reg.last];
        if (n === 1 && reg.pev !== undefined) d.pev = reg.pev;
        return runTask(d, function () {
          reg.last = d.action;
          if (REC) read('Timer:' + id);
          return rApply(fn, G, arguments);
        }, G, extra);
      };
      id = rApply(nSetInterval, G, [cb, timeout]);
      reg.last = -1;
      timerDescs[id] = reg;
      if (REC) writeS('Timer:' + id, 'Timer[' + id + ']');
      return id;
    });
    patch(G, 'clearInterval', function (id) {
      if (REC && timerDescs[id] !== undefined) write('Timer:' + id, undefined);
      delete timerDescs[id];
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
      return rApply(nRaf, G, [function (ts) {
        return runTask(d, callback, G, [ts]);
      }]);
    });
  }
  if (nRic) {
    patch(G, 'requestIdleCallback', function (callback, options) {
      if (passive()) return rApply(nRic, G, arguments);
      if (typeof callback !== 'function') return rApply(nRic, G, [callback, options]);
      const d = forkDesc(1, 'idle', undefined, undefined);
      d.label = 'idle callback';
      return rApply(nRic, G, [function (deadline) {
        return runTask(d, callback, G, [deadline]);
      }, options]);
    });
  }
}
