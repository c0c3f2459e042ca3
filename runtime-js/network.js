// network.js — XHR, fetch and body reads, MessageChannel ports, WebSocket, and the
// Intersection/Resize/Performance/Mutation observers.
//
// XHR and WebSocket events are DOM events on non-node targets: their actions begin in our own
// listeners (registered on send/construction so an action exists even when the page has no
// handler, as EventRaceCommander's default handlers did) or in the page's wrapped listeners,
// whichever runs first. Each event is forked by the action that sent the request / opened the
// socket and joined to the previous event of the same object (FIFO).
//
// Promise-returning host APIs (fetch, Response body reads) are wrapped so that their settlement
// begins an action: our reaction is the first one registered on the native promise, so it runs
// before the page's continuations, which then belong to that action. Holding a settlement means
// resolving the promise we returned only when the callback is released.

const XHR_TYPES = ['readystatechange', 'loadstart', 'progress', 'abort', 'error', 'load', 'timeout', 'loadend'];
const WS_TYPES = ['open', 'message', 'error', 'close'];
const xhrInfo = new NativeWeakMap(); // xhr -> {method, url, async, hooked}

function noteTargetEvent(ev) {
  enterEvent(ev, evCurrentTarget(ev), false);
}

/** XHR and fetch requests the page started and has not seen end, response bodies being read
 * included (`stats().requests`): a driver that acts on the page learns from the page itself
 * that its input sent a request, before DevTools reports it. */
let netPending = 0;

/** Runs `f` (which starts a request and returns a promise, or throws) counted in netPending
 * until the promise settles. */
function countedRequest(f) {
  netPending++;
  let p;
  try {
    p = f();
  } catch (e) {
    netPending--;
    throw e;
  }
  const done = () => {
    netPending--;
  };
  promiseThen(p, done, done);
  return p;
}

/** Service worker scripts whose registration the page started and has not seen settle: absolute
 * URL -> count (`stats().registering`). The browser fetches the script in its own process, some
 * time after `register()`: a driver waiting for the page's requests learns from the page that
 * one is coming before any request shows it. */
const swRegistering = objCreate(null);

/** The scripts of `swRegistering`, once each. */
function registeringScripts() {
  const list = [];
  for (const u in swRegistering) list[list.length] = u;
  return list;
}

function installServiceWorkerRegister() {
  const SWC = G.ServiceWorkerContainer;
  const P = SWC ? SWC.prototype : null;
  const nRegister = P ? P.register : undefined;
  if (typeof nRegister !== 'function') return;
  patch(P, 'register', function (url) {
    if (passive()) return rApply(nRegister, this, arguments);
    let abs = '';
    try {
      abs = absUrl(NativeString(url));
    } catch (_) {
      abs = '';
    }
    swRegistering[abs] = (swRegistering[abs] || 0) + 1;
    changed();
    const done = () => {
      if (--swRegistering[abs] <= 0) delete swRegistering[abs];
      changed();
    };
    let p;
    try {
      p = rApply(nRegister, this, arguments);
    } catch (e) {
      done();
      throw e;
    }
    promiseThen(p, done, done);
    return p;
  });
}

/** An XHR's request ended (its `loadend`, or `send` threw). */
function xhrEnded(x) {
  const m = metaOf(x);
  if (m.net === true) {
    m.net = false;
    netPending--;
  }
}

function installXhr() {
  if (!XHRP) return;
  const nOpen = XHRP.open;
  const nSend = XHRP.send;
  patch(XHRP, 'open', function (method, url, async) {
    if (passive()) return rApply(nOpen, this, arguments);
    wmSet(xhrInfo, this, {
      method: NativeString(method),
      url: NativeString(url),
      async: arguments.length < 3 || !!async,
    });
    return nested(nOpen, this, arguments); // readystatechange fires synchronously
  });
  patch(XHRP, 'send', function () {
    if (passive()) return rApply(nSend, this, arguments);
    const x = wmGet(xhrInfo, this);
    const url = x ? x.url : '';
    const reg = forkDesc(3, 'xhr', url, undefined, x !== undefined && !x.async);
    reg.kids = objCreate(null);
    const m = metaOf(this);
    m.reg = reg;
    m.from = cur;
    m.last = -1;
    if (x === undefined || !x.hooked) {
      if (x !== undefined) x.hooked = true;
      for (let i = 0; i < XHR_TYPES.length; i++) nAddEL(this, XHR_TYPES[i], noteTargetEvent, false);
      nAddEL(this, 'loadend', xhrLoadEnd, false);
    }
    // Once per request: an open() that ends the last one fires no loadend, and the slot is
    // taken over by this send.
    if (m.net !== true) {
      m.net = true;
      netPending++;
    }
    try {
      return nested(nSend, this, arguments); // loadstart (and sync XHR events) fire inside send
    } catch (e) {
      xhrEnded(this);
      throw e;
    }
  });
}

function xhrLoadEnd() {
  xhrEnded(this);
}

/** Wraps a promise-returning method so its settlement is an action forked by the caller. */
function settleAsAction(p, d) {
  const go = (v, ok) => {
    const d2 = d;
    if (deciding() && d2.released !== true) {
      const r = decide(d2);
      if (r === HOLD) {
        return new NativePromise((resolve, reject) => {
          hold(d2, () => {
            d2.released = true;
            begin(d2);
            if (ok) resolve(v);
            else reject(v);
          });
        });
      }
      if (r === DISCARD) {
        counters.discarded++;
        return new NativePromise(() => {});
      }
    }
    begin(d2);
    if (ok) return v;
    throw v;
  };
  return promiseThen(p, (v) => go(v, true), (e) => go(e, false));
}

function urlOf(input) {
  try {
    if (typeof input === 'string') return input;
    if (NRequest && input instanceof NRequest) return input.url;
    return NativeString(input);
  } catch (_) {
    return '';
  }
}

function installFetch() {
  if (nFetch) {
    patch(G, 'fetch', function (input, init) {
      if (passive()) return rApply(nFetch, this == null ? G : this, arguments);
      const d = forkDesc(3, 'fetch', urlOf(input), undefined);
      d.label = 'fetch ' + d.url;
      const self = this == null ? G : this;
      const args = arguments;
      const p = countedRequest(() => rApply(nFetch, self, args));
      return settleAsAction(p, d);
    });
  }
  const RP = G.Response ? Response.prototype : null;
  if (RP) {
    for (const name of ['text', 'json', 'arrayBuffer', 'blob', 'formData', 'bytes']) {
      const f = RP[name];
      if (typeof f !== 'function') continue;
      patch(RP, name, function () {
        if (passive()) return rApply(f, this, arguments);
        const d = forkDesc(3, 'body', name, undefined);
        const self = this;
        const args = arguments;
        return settleAsAction(
          countedRequest(() => rApply(f, self, args)),
          d,
        );
      });
    }
  }
}

const portPeer = new NativeWeakMap(); // port -> its partner
const portQueue = new NativeWeakMap(); // receiving port -> FIFO of {parent, from}

function installPorts() {
  if (!NMessageChannel || !G.MessagePort) return;
  const MC = function MessageChannel() {
    if (new.target === undefined) return rApply(NMessageChannel, this, arguments);
    const mc = rConstruct(NMessageChannel, [], new.target === MC ? NMessageChannel : new.target);
    wmSet(portPeer, mc.port1, mc.port2);
    wmSet(portPeer, mc.port2, mc.port1);
    return mc;
  };
  MC.prototype = NMessageChannel.prototype;
  defProp(NMessageChannel.prototype, 'constructor', { value: MC, writable: true, configurable: true });
  patch(G, 'MessageChannel', MC);
  patch(MessagePort.prototype, 'postMessage', function () {
    if (passive()) return rApply(portPost, null, [this, arguments[0], arguments[1]]);
    const peer = wmGet(portPeer, this);
    if (peer !== undefined) {
      ensure();
      const q = msgQueue(peer);
      const p = parentInfo();
      q.items[q.items.length] = { stable: childStable(p, 'message', ''), from: cur };
    }
    return rApply(portPost, null, [this, arguments[0], arguments[1]]);
  });
}

/** Drops the consumed front of a FIFO queue (MessageChannel schedulers post millions). */
function compactQueue(q) {
  const items = q.items;
  let j = 0;
  for (let i = q.head; i < items.length; i++) items[j++] = items[i];
  items.length = j;
  q.head = 0;
}

/** The FIFO of messages posted to `target` (a receiving port, a Worker object), created. */
function msgQueue(target) {
  let q = wmGet(portQueue, target);
  if (q === undefined) {
    q = { items: [], head: 0, last: -1, lastFrom: -1 };
    wmSet(portQueue, target, q);
  }
  return q;
}

/**
 * For a message event on a port (or a Worker object): the posting action, its FIFO queue
 * (`Queue:<target>`, read by the delivery) and, when the previous message of the queue was
 * posted by the same action, a join from its delivery. The analysis orders deliveries of posts
 * by different, ordered actions (queue FIFO, docs/trace-format.md).
 */
function portMessageDesc(port, d) {
  const q = wmGet(portQueue, port);
  if (q === undefined || q.head >= q.items.length) return;
  const it = q.items[q.head];
  q.items[q.head++] = undefined;
  if (q.head >= 1024 && q.head * 2 >= q.items.length) compactQueue(q);
  d.stable = it.stable;
  d.from = it.from;
  d.type = 4;
  d.kind = 'message';
  if (q.last >= 0 && q.lastFrom === it.from && it.from >= 0) d.joins = [q.last];
  d.portQueue = q;
  if (REC) d.queue = 'Queue:' + targetLabel(port);
}

function installWebSocket() {
  const NWS = G.WebSocket;
  if (typeof NWS !== 'function') return;
  const WS = function WebSocket(url, protocols) {
    if (new.target === undefined) return rApply(NWS, this, arguments);
    const reg = forkDesc(3, 'websocket', NativeString(url), undefined);
    reg.kids = objCreate(null);
    const ws = rConstruct(NWS, arguments, new.target === WS ? NWS : new.target);
    const m = metaOf(ws);
    m.reg = reg;
    m.from = cur;
    for (let i = 0; i < WS_TYPES.length; i++) nAddEL(ws, WS_TYPES[i], noteTargetEvent, false);
    return ws;
  };
  const statics = ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED'];
  for (let i = 0; i < statics.length; i++) defProp(WS, statics[i], { value: NWS[statics[i]] });
  WS.prototype = NWS.prototype;
  defProp(NWS.prototype, 'constructor', { value: WS, writable: true, configurable: true });
  patch(G, 'WebSocket', WS);
}

/**
 * Wraps an observer constructor whose callbacks are tasks of their own (Intersection/Resize/
 * Performance): each callback is an action forked by the creator and joined to the previous
 * callback. `observe(target)` called by a later action queues the target's first
 * notification: the callback that delivers it (an entry whose `target` is that element) also
 * joins the observing action, so what the observer set up before observing is ordered before.
 */
function wrapObserver(name, kind, entryProto) {
  const N = G[name];
  if (typeof N !== 'function') return;
  const entryTarget = entryProto ? getterOf(entryProto, 'target') : null;
  const regOf = new NativeWeakMap(); // observer -> its registration descriptor
  const Wrapped = function (callback, options) {
    if (new.target === undefined) return rApply(N, this, arguments);
    const reg = forkDesc(4, kind, undefined, undefined);
    reg.kids = objCreate(null);
    reg.pending = null; // target -> the action that observed it, until delivered
    let cb = callback;
    if (typeof callback === 'function') {
      cb = function (entries) {
        const joins = reg.last >= 0 ? [reg.last] : [];
        if (reg.pending !== null) observedBy(reg, entries, entryTarget, joins);
        const d = {
          hid: 0, type: 4, kind, stable: childStable(reg, 'callback', ''), label: kind,
          from: reg.from, delay: undefined, joins: joins.length > 0 ? joins : null, url: undefined,
          seq: nTaskSeq++, parent: reg,
        };
        return runTask(d, function () {
          reg.last = d.action;
          return rApply(callback, this, arguments);
        }, this, arguments);
      };
    }
    reg.last = -1;
    const obs = rConstruct(N, [cb, options], new.target === Wrapped ? N : new.target);
    wmSet(regOf, obs, reg);
    return obs;
  };
  defProp(Wrapped, 'name', { value: name });
  Wrapped.prototype = N.prototype;
  defProp(N.prototype, 'constructor', { value: Wrapped, writable: true, configurable: true });
  patch(G, name, Wrapped);
  const nObserve = N.prototype.observe;
  if (entryTarget === null || typeof nObserve !== 'function') return;
  if (!REC) return; // nothing to order in repair mode: observe stays native
  patch(N.prototype, 'observe', function (target) {
    const reg = wmGet(regOf, this);
    if (reg !== undefined && target !== null && typeof target === 'object') {
      ensure();
      if (cur !== reg.from) {
        if (reg.pending === null) reg.pending = new NativeWeakMap();
        wmSet(reg.pending, target, cur);
      }
    }
    return rApply(nObserve, this, arguments);
  });
}

/** Adds to `joins` the actions that observed the targets `entries` deliver for the first time. */
function observedBy(reg, entries, entryTarget, joins) {
  if (!isArray(entries)) return;
  for (let i = 0; i < entries.length; i++) {
    let t;
    try {
      t = entryTarget(entries[i]);
    } catch (_) {
      continue;
    }
    const a = wmGet(reg.pending, t);
    if (a === undefined) continue;
    wmDelete(reg.pending, t);
    let dup = false;
    for (let j = 0; j < joins.length; j++) dup = dup || joins[j] === a;
    if (!dup) joins[joins.length] = a;
  }
}

// Set by the parser's mutation delivery (dom.js) for the rest of that delivery: the parse
// action that made the mutations the page's observers are about to see.
let parseTail = -1;
function clearParseTail() {
  parseTail = -1;
}

/**
 * MutationObserver callbacks are microtasks of the turn that made the mutations: inside an
 * open action they are part of it. With none open, the mutations were the parser's (our own
 * observer has just begun and ended that parse action): the callback is an action forked by
 * the observer's creator and chained after the parse chunk, like the next chunk would be.
 */
function wrapMutationObserver() {
  const N = NMutationObserver;
  if (typeof N !== 'function') return;
  const Wrapped = function MutationObserver(callback) {
    if (new.target === undefined) return rApply(N, this, arguments);
    const nt = new.target === Wrapped ? N : new.target;
    if (typeof callback !== 'function' || passive()) return rConstruct(N, arguments, nt);
    const reg = forkDesc(4, 'observer:mutation', undefined, undefined);
    reg.kids = objCreate(null);
    const cb = function () {
      if (cur >= 0) return nested(callback, this, arguments);
      const after = parseTail;
      const d = {
        hid: 0, type: 4, kind: 'observer:mutation', stable: childStable(reg, 'callback', ''),
        label: 'observer:mutation', from: reg.from, delay: undefined,
        joins: after >= 0 ? [after] : null, url: undefined, seq: nTaskSeq++, parent: reg,
      };
      return runTask(d, function () {
        if (after >= 0 && lastChain === after) lastChain = d.action;
        return rApply(callback, this, arguments);
      }, this, arguments);
    };
    return rConstruct(N, [cb], nt);
  };
  defProp(Wrapped, 'length', { value: 1, configurable: true });
  Wrapped.prototype = N.prototype;
  defProp(N.prototype, 'constructor', { value: Wrapped, writable: true, configurable: true });
  patch(G, 'MutationObserver', Wrapped);
}

function installObservers() {
  wrapObserver('IntersectionObserver', 'observer:intersection',
    G.IntersectionObserverEntry ? IntersectionObserverEntry.prototype : null);
  wrapObserver('ResizeObserver', 'observer:resize',
    G.ResizeObserverEntry ? ResizeObserverEntry.prototype : null);
  wrapObserver('PerformanceObserver', 'observer:performance', null);
  wrapMutationObserver();
}
