// events.js — DOM event dispatch: capture listeners at the root, addEventListener/on* wrapping
// (including handleEvent objects), listener-list locations, holding and redispatching events.
//
// Every dispatch that travels through the window (and, for load/error/abort, which do not reach
// the window from elements, through the document) is seen first by our capture listeners: they
// were registered before any page script. The first one to see a fresh event begins its action,
// reads the listener list of every node on the event path (a dispatch with no listener still
// reads the list) and the target's NodeTree entry, and asks the decider. Listeners on targets
// outside the document (XHR, WebSocket, MessagePort, detached nodes) are seen through their
// wrappers, which begin the action when the root did not.

const NET_TYPES = objCreate(null);
for (const t of ['load', 'error', 'abort', 'readystatechange', 'progress', 'loadstart', 'loadend',
  'timeout', 'open', 'close']) {
  NET_TYPES[t] = 1;
}

const evState = new NativeWeakMap(); // held event -> {desc, calls}
const released = new NativeWeakSet(); // copies we dispatch when a held event is released
const releasedDesc = new NativeWeakMap();
const targetMeta = new NativeWeakMap(); // target -> {by: creator info, from, last, reg}
const origOf = new NativeWeakMap(); // wrapper -> page function
let lastUser = -1;
let dclAction = -1;
const loadPreds = []; // actions window `load` waits for
const selfPosts = []; // window.postMessage(…) to this window, FIFO
let selfPostHead = 0;
let lastSelfMessage = -1;
let lastSelfFrom = -1;

function metaOf(t) {
  let m = wmGet(targetMeta, t);
  if (m === undefined) {
    m = { by: null, from: -1, last: -1, reg: null };
    wmSet(targetMeta, t, m);
  }
  return m;
}

/** A stable path for an event target: `#id` anchored where possible, else tag:index steps. */
function targetPath(t) {
  if (t === W) return 'window';
  if (t === DOCUMENT) return 'document';
  if (!isNode(t)) return className(t);
  let s = '';
  let n = t;
  for (let steps = 0; n !== null && n !== DOCUMENT && steps < 16; steps++) {
    if (nodeType(n) === 1) {
      const id = elId(n);
      if (id) return '#' + id + s;
      let i = 0;
      for (let p = elPrevSibling(n); p !== null; p = elPrevSibling(p)) i++;
      s = '>' + elLocalName(n) + ':' + i + s;
    } else {
      s = '>' + nodeName(n) + s;
    }
    n = nodeParent(n);
  }
  return s;
}

function typeCode(type, target, user) {
  if (user) return 2;
  if (type === 'message' || type === 'messageerror') return target === W ? 4 : (isNode(target) ? 0 : 3);
  if (NET_TYPES[type] === 1 && target !== W && target !== DOCUMENT) return 3;
  return 0;
}

/** Builds the descriptor of a fresh dispatch of `ev` at `target`. */
/** The target's own meta, else (for nodes inserted as part of a subtree) its ancestor's. */
function creatorMeta(target) {
  let m = wmGet(targetMeta, target);
  if (m !== undefined || !isNode(target)) return m;
  let n = nodeParent(target);
  for (let i = 0; n !== null && i < 32; i++) {
    m = wmGet(targetMeta, n);
    if (m !== undefined && m.by !== null) return { by: m.by, from: -1, last: -1, reg: null };
    n = nodeParent(n);
  }
  return undefined;
}

function eventDesc(ev, type, target, trusted) {
  // Whose event this is (causes.js): the user's, the page's (forked by the action that caused
  // it), or nobody's.
  let user = false;
  let cause = null;
  if (trusted && isUiType(type)) {
    if (isDirectInput(type)) {
      user = true;
      userInput(target);
    } else {
      cause = derivedCause(ev, type, target);
      user = cause === null;
    }
  }
  let selfPost = false;
  const m = creatorMeta(target);
  let parent = ROOT;
  let from = -1;
  let joins = null;
  if (m !== undefined) {
    if (m.reg !== null) {
      parent = m.reg;
      from = m.from;
      if (m.last >= 0) joins = [m.last];
    } else if (m.by !== null) {
      parent = m.by;
      from = m.by.id;
    }
  }
  if (user) {
    parent = ROOT;
    if (lastUser >= 0) joins = [lastUser];
  } else if (cause !== null && cause !== BROWSER) {
    // The page's: forked by its cause, after the events the same cause fired before (the
    // browser fires them in order: focus, focusin, selectionchange…).
    parent = cause.parent;
    from = cause.from;
    joins = cause.last !== undefined && cause.last >= 0 ? [cause.last] : null;
  } else if (type === 'DOMContentLoaded' && target === DOCUMENT) {
    joins = dclPreds();
  } else if (type === 'load' && target === W) {
    joins = [];
    if (dclAction >= 0) joins[0] = dclAction;
    for (let i = 0; i < loadPreds.length; i++) joins[joins.length] = loadPreds[i];
  } else if (type === 'message' && target === W && meSource !== null && meSource(ev) === W &&
    selfPostHead < selfPosts.length) {
    const p = selfPosts[selfPostHead];
    selfPosts[selfPostHead++] = undefined;
    if (selfPostHead >= 1024 && selfPostHead * 2 >= selfPosts.length) {
      let j = 0;
      for (let i = selfPostHead; i < selfPosts.length; i++) selfPosts[j++] = selfPosts[i];
      selfPosts.length = j;
      selfPostHead = 0;
    }
    parent = p.parent;
    from = p.from;
    // Posted by the same action: delivered in that order. Posts by different actions are
    // ordered by the analysis only when the posting actions are (queue FIFO, races/).
    if (lastSelfMessage >= 0 && lastSelfFrom === from) joins = [lastSelfMessage];
    selfPost = true;
  }
  if (type === 'load' && !user && isNode(target)) {
    // A script element's load event fires after the script ran.
    const sa = scriptAction(target);
    if (sa >= 0) {
      if (joins === null) joins = [sa];
      else joins[joins.length] = sa;
    }
  }
  const kind = 'event:' + type;
  const d = {
    cause: cause !== null && cause !== BROWSER ? cause : undefined,
    queue: selfPost ? 'Queue:' + targetLabel(W) : undefined,
    hid: 0,
    type: typeCode(type, target, user),
    kind,
    // Named by target where the parent's own ordinal says little: the document's, the user's,
    // and the parser's (a replay delivers the document in other pieces, so `parse#k` differs
    // between executions and two images of one piece would be told apart by order alone).
    stable: childStable(parent, kind, parent === ROOT || user || parent.kind === 'parse' ? targetPath(target) : ''),
    label: REC ? 'fire:' + type + ' @ ' + targetLabel(target) : '',
    from,
    delay: undefined,
    joins,
    url: undefined,
    seq: nTaskSeq++,
    parent,
    portQueue: null,
  };
  if (type === 'message' || type === 'messageerror') {
    if (DEDICATED && target === G) parentMessageDesc(d);
    else if (!isNode(target) && target !== W) portMessageDesc(target, d);
  }
  return d;
}

/** Reads what a dispatch reads: the target's existence and the listener lists on the path. */
function dispatchReads(ev, type, target, fromRoot) {
  if (isNode(target)) readEntry(treeEntry(target));
  if (fromRoot) {
    let path;
    try {
      path = evComposedPath(ev);
    } catch (_) {
      path = [target];
    }
    for (let i = 0; i < path.length; i++) read(targetLabel(path[i]) + '.' + type);
  } else {
    read(targetLabel(target) + '.' + type);
  }
}

/**
 * A trusted `input`/`change` event means the user changed a form field: the dispatch writes
 * the field's value location (the names instrumented code's `.value`/`.checked`/`.selectedIndex`
 * accesses log, T.objEntry), so a script that sets the field races with the user's typing.
 */
function fieldWrites(ev, type) {
  if (type !== 'input' && type !== 'change') return;
  const el = evTarget(ev);
  if (el === null || typeof el !== 'object') return;
  try {
    if (NInput !== null && el instanceof NInput) {
      const t = inputType(el);
      // Checking a radio unchecks the rest of its group: those writes first, so a race with a
      // script that set one of them is the one reported first.
      if (t === 'radio' && inputChecked(el)) radioGroupWrites(el, undefined);
      if (t === 'checkbox' || t === 'radio') writeEntry(objEntry(el, 'checked'), inputChecked(el));
      else writeEntry(objEntry(el, 'value'), inputValue(el));
    } else if (NTextArea !== null && el instanceof NTextArea) {
      writeEntry(objEntry(el, 'value'), textAreaValue(el));
    } else if (NSelect !== null && el instanceof NSelect) {
      writeEntry(objEntry(el, 'selectedIndex'), selectIndex(el));
      writeEntry(objEntry(el, 'value'), selectValue(el));
    }
  } catch (_) {
    // a detached or exotic target: nothing to log
  }
}

/** Bookkeeping after the action of a fresh dispatch began. */
function dispatchBegan(d, ev, type, target) {
  info.ev = ev;
  if (d.cause !== undefined) {
    d.cause.last = d.action;
    if (d.cause.autofocus === true) markScope('autofocus');
  }
  if (d.type === 2) {
    lastUser = d.action;
    // Which key: what a tool needs to press it again (the explorer replays user events).
    if (kbKey !== null && (type === 'keydown' || type === 'keyup' || type === 'keypress')) {
      try {
        markScope('key:' + kbKey(ev));
      } catch (_) {
        // not a KeyboardEvent after all
      }
    }
  }
  const m = wmGet(targetMeta, target);
  if (m !== undefined && m.reg !== null) m.last = d.action;
  if (d.portQueue) {
    d.portQueue.last = d.action;
    d.portQueue.lastFrom = d.from;
  }
  if (type === 'DOMContentLoaded' && target === DOCUMENT) dclAction = d.action;
  else if (type === 'message' && target === W && d.kind === 'event:message' && d.from >= 0) {
    lastSelfMessage = d.action;
    lastSelfFrom = d.from;
  } else if (type === 'storage' && REC) storageEventWrites(ev);
  else if ((type === 'load' || type === 'error') && target !== W && isNode(target)) loadPreds[loadPreds.length] = d.action;
  if (type === 'pagehide' || type === 'unload') exitSoon();
}

// ---- javascript: URLs ------------------------------------------------------------------------
// Following a `javascript:` link (a click on `a`/`area`, by the user, by Enter or by `click()`)
// queues a task that runs the URL's code after the click's dispatch. That code registers like
// an inline script (`T.scriptStart` with F = 1, no current script) with nothing open: the
// clicks seen since are matched in order, so its action is forked by the click that ran it
// instead of being a `task` nothing orders.

const JS_URL_RE = /^[\x00-\x20]*j[\t\n\r]*a[\t\n\r]*v[\t\n\r]*a[\t\n\r]*s[\t\n\r]*c[\t\n\r]*r[\t\n\r]*i[\t\n\r]*p[\t\n\r]*t[\t\n\r]*:/i;
const JS_URL_MAX = 16;
const jsUrlClicks = []; // {ev, from, parent}: clicks on javascript: links, oldest first
const evDefaultPrevented = getterOf(EP, 'defaultPrevented');

/** A click is about to activate `target`: remember it when it follows a javascript: link. */
function jsUrlClick(ev, type, target) {
  if (type !== 'click' || cur < 0 || elClosest === null || elGetAttr === null) return;
  if (!isNode(target) || nodeType(target) !== 1) return;
  let link;
  try {
    link = elClosest(target, 'a[href], area[href]');
  } catch (_) {
    return;
  }
  if (link === null) return;
  const href = elGetAttr(link, 'href');
  if (href === null || reExec(JS_URL_RE, href) === null) return;
  if (jsUrlClicks.length >= JS_URL_MAX) jsUrlNext();
  jsUrlClicks[jsUrlClicks.length] = { ev, from: cur, parent: parentInfo() };
}

/** Removes and returns the oldest waiting click (a short list: shifting is cheap). */
function jsUrlNext() {
  const c = jsUrlClicks[0];
  for (let i = 1; i < jsUrlClicks.length; i++) jsUrlClicks[i - 1] = jsUrlClicks[i];
  jsUrlClicks.length--;
  return c;
}

/**
 * Code with no URL of its own starts with nothing open and no current script: when a click on
 * a javascript: link is waiting (and was not cancelled), this is that link's code. Begins its
 * action, forked by the click; false when no such click waits.
 */
function jsUrlBegin() {
  while (jsUrlClicks.length > 0) {
    const c = jsUrlNext();
    if (evDefaultPrevented(c.ev)) continue;
    begin({
      type: 0, kind: 'javascript-url', stable: childStable(c.parent, 'javascript-url'),
      label: REC ? 'javascript: URL' : '', from: c.from, delay: undefined, joins: null,
    });
    return true;
  }
  return false;
}

/**
 * Called for every listener invocation we see (root capture or a wrapper). Returns true when
 * the page's listener may run now, false when the dispatch is held or discarded.
 */
function enterEvent(ev, target, fromRoot) {
  if (info !== null && info.ev === ev) return true;
  if (ev === leftAlone && evTrusted(ev)) return true; // repair.js, repairLeavesAlone
  const st = wmGet(evState, ev);
  if (st !== undefined) return false;
  const type = evType(ev);
  if (wsHas(released, ev)) {
    const d = wmGet(releasedDesc, ev);
    d.released = true;
    begin(d);
    dispatchBegan(d, ev, type, target);
    if (REC) {
      dispatchReads(ev, type, target, fromRoot);
      if (d.type === 2) fieldWrites(ev, type); // the held original was the user's
      focusDispatch(ev, type, target, d.type === 2);
    }
    if (REC) jsUrlClick(ev, type, target);
    return true;
  }
  if (type === 'error' && target === G && NErrorEvent && ev instanceof NErrorEvent) {
    reportError(ev);
    return true;
  }
  const trusted = evTrusted(ev);
  // Synchronous dispatches: from our wrappers' natives (depth), from page code (untrusted), or
  // trusted events a native fires while a classic script is running (XHR open/send, focus).
  if (depth > 0 || !trusted || (info !== null && DOCUMENT !== null && docCurrentScript(DOCUMENT) !== null)) {
    // Page code dispatched it synchronously: part of the current action.
    ensure();
    if (REC) {
      dispatchReads(ev, type, target, fromRoot);
      focusDispatch(ev, type, target, trusted);
      jsUrlClick(ev, type, target);
    }
    if (fromRoot) popupDispatch(ev, type, target);
    return true;
  }
  if (repairOn && !REC && decider === null && repairLeavesAlone(ev, type, target)) {
    if (fromRoot) popupDispatch(ev, type, target);
    return true;
  }
  const d = eventDesc(ev, type, target, trusted);
  if (deciding()) {
    d.evType = type;
    d.evTarget = target;
    d.trusted = trusted;
    const r = decide(d);
    if (r === HOLD) {
      if (fromRoot) {
        evStopImmediate(ev);
        if (d.rep === true) {
          // Held by the policy: cancel only the defaults replayed at release (repair.js);
          // cancelling pointerdown or touchstart would suppress the mouse events and click
          // that follow, which the policy holds in turn.
          if (PREVENT[type] === 1) evPreventDefault(ev);
          d.emulate = d.type === 2;
        } else {
          evPreventDefault(ev);
        }
        hold(d, () => redispatch(ev, type, target, d));
      } else {
        const calls = [];
        wmSet(evState, ev, { desc: d, calls });
        const run = () => runHeldCalls(d, ev, type, target, calls);
        const group = d.rep === true ? null : doneGroup(type, target);
        if (group === null) {
          hold(d, run);
        } else if (type === 'readystatechange') {
          hold(d, () => {
            group.open = false;
            try {
              run();
            } finally {
              runTails(group.tails, 0);
            }
          });
        } else {
          group.tails[group.tails.length] = run;
        }
      }
      return false;
    }
    if (r === DISCARD) {
      counters.discarded++;
      if (fromRoot) {
        evStopImmediate(ev);
        evPreventDefault(ev);
      } else {
        wmSet(evState, ev, { desc: d, calls: null });
      }
      return false;
    }
  }
  begin(d);
  dispatchBegan(d, ev, type, target);
  if (REC) {
    dispatchReads(ev, type, target, fromRoot);
    if (trusted) fieldWrites(ev, type);
    focusDispatch(ev, type, target, trusted);
    jsUrlClick(ev, type, target);
  }
  if (fromRoot) popupDispatch(ev, type, target);
  if (type === 'unhandledrejection' && NPromiseRejectionEvent && ev instanceof NPromiseRejectionEvent) {
    reportRejection(ev);
  }
  return true;
}

// What an XHR fires when its response has ended (the DONE `readystatechange`, then `progress`,
// `load`/`error`/`abort`/`timeout` and `loadend`) the browser fires in one task (XMLHttpRequest,
// "handle response end-of-body"): nothing can run between them. Held, they are one held
// callback (the DONE `readystatechange`'s, when the page listens to it), so a decider cannot put
// another event between them, which no browser does.
// (The explorer's recorded order, `Site::recorded_order`, lists the same events as its tail.)
const DONE_TAIL = objCreate(null);
for (const t of ['progress', 'load', 'error', 'abort', 'timeout', 'loadend']) DONE_TAIL[t] = 1;
const doneGroups = new NativeWeakMap(); // XHR -> {open, tails} while its DONE event is held

/**
 * The group a held XHR event belongs to: a new one for the DONE `readystatechange` (its head),
 * the open group of its XHR for what follows it in the same task, else null.
 */
function doneGroup(type, target) {
  if (xhrState(target) !== 4) return null;
  if (type === 'readystatechange') {
    const g = { open: true, tails: [] };
    wmSet(doneGroups, target, g);
    return g;
  }
  if (DONE_TAIL[type] !== 1) return null;
  const g = wmGet(doneGroups, target);
  return g === undefined || !g.open ? null : g;
}

/**
 * Runs the held events of a group after its head, each in a task of its own right after the
 * previous one: the browser checks for microtasks after each event's listeners (a promise the
 * `load` handler resolves settles before `loadend`), and a task boundary is such a check. The
 * next task is counted as soon as this one ends, so a tool never sees the group half run.
 */
function runTails(tails, i) {
  if (i >= tails.length) return;
  runSoon(() => {
    try {
      tails[i]();
    } finally {
      runTails(tails, i + 1);
    }
  });
}

function redispatch(ev, type, target, d) {
  let copy;
  try {
    copy = rConstruct(getProto(ev).constructor, [type, ev]);
  } catch (_) {
    copy = new NEvent(type, ev);
  }
  wsAdd(released, copy);
  wmSet(releasedDesc, copy, d);
  const ok = nDispatch(target, copy);
  if (d.emulate === true) emulateDefault(ev, type, target, ok);
}

function runHeldCalls(d, ev, type, target, calls) {
  d.released = true;
  begin(d);
  dispatchBegan(d, ev, type, target);
  if (REC) dispatchReads(ev, type, target, false);
  for (let i = 0; i < calls.length; i++) {
    const c = calls[i];
    try {
      callListener(c.listener, c.self, ev);
    } catch (e) {
      reportThrown(e);
    }
  }
}

function reportError(ev) {
  let msg = '';
  let pos = '';
  try {
    msg = NativeString(ev.message);
    if (ev.filename) pos = ev.filename + ':' + ev.lineno + ':' + ev.colno;
    // Thrown inside the runtime (instrumented code reading a property of `undefined` reads it
    // in `__shepherd.r`): the page's position is the first frame of the stack outside it.
    if (strIndexOf(pos, RUNTIME_DIR) >= 0) pos = pageFrame(ev.error, pos);
    // In inline code: placed in the code's own terms (access.js), which reports map back.
    if (typeof T.inlinePos === 'function') pos = T.inlinePos(pos);
  } catch (_) {
    msg = 'error';
  }
  // A read of an undeclared global throws before any hook sees its value (EventRacer's logger
  // missed exactly this read in Fig. 1's onload handler): the error names the variable, so the
  // failed read is logged here, with the value `undefined`, before the exception.
  const m = reExec(UNDEFINED_RE, msg);
  if (m !== null) read('Global.' + m[1], undefined, true);
  exception(msg, pos);
}

const UNDEFINED_RE = /^(?:Uncaught )?ReferenceError: ([A-Za-z_$][\w$]*) is not defined$/;

// Where the proxy serves the runtime from.
const RUNTIME_DIR = '/__shepherd/';
// `    at f (https://a.test/app.js:3:7)` or `    at https://a.test/app.js:3:7`: the position.
const FRAME_POS_RE = /\(?([a-z][a-z0-9+.-]*:[^\s()]*:\d+:\d+)\)?$/;

/** The first frame of error `e`'s stack that is not the runtime's, else `fallback`. */
function pageFrame(e, fallback) {
  let stack = '';
  try {
    if (e !== null && typeof e === 'object') stack = NativeString(e.stack);
  } catch (_) {
    return fallback;
  }
  const lines = strSplit(stack, '\n');
  for (let i = 1; i < lines.length; i++) {
    const m = reExec(FRAME_POS_RE, lines[i]);
    if (m !== null && strIndexOf(m[1], RUNTIME_DIR) < 0) return m[1];
  }
  return fallback;
}

function reportRejection(ev) {
  let r;
  try {
    r = ev.reason;
  } catch (_) {
    r = undefined;
  }
  exception('Unhandled rejection: ' + rejectionText(r), '');
}

function rejectionText(r) {
  try {
    if (r instanceof NativeError) return NativeString(r.name) + ': ' + NativeString(r.message);
  } catch (_) {
    // fall through to the summary
  }
  return summary(r);
}

function reportThrown(e) {
  exception(rejectionText(e), '');
}

function capOf(options) {
  if (typeof options === 'boolean') return options;
  if (options !== null && typeof options === 'object') return !!options.capture;
  return false;
}

const listenerWrappers = new NativeWeakMap(); // page listener -> {type|phase: wrapper}

function callListener(listener, self, ev) {
  depth++;
  try {
    if (typeof listener === 'function') return rApply(listener, self, [ev]);
    const h = listener.handleEvent;
    return rApply(h, listener, [ev]);
  } finally {
    depth--;
    if (exitArmed) flushAtExit(); // the page may be gone after this pagehide/unload listener
  }
}

function wrapListener(listener, type, capture) {
  let m = wmGet(listenerWrappers, listener);
  if (m === undefined) {
    m = objCreate(null);
    wmSet(listenerWrappers, listener, m);
  }
  const key = (capture ? 'c|' : 'b|') + type;
  let w = m[key];
  if (w !== undefined) return w;
  w = function (ev) {
    const self = this;
    // Repair mode once the policy has nothing left to hold or add: the listener runs as if it
    // had never been wrapped (no event description, no action), as listeners registered
    // after that point do.
    if (passive()) return callListener(listener, self, ev);
    if (!enterEvent(ev, self === undefined ? G : self, false)) {
      const st = wmGet(evState, ev);
      if (st !== undefined && st.calls !== null) st.calls[st.calls.length] = { listener, self };
      return undefined;
    }
    return callListener(listener, self, ev);
  };
  wmSet(origOf, w, listener);
  m[key] = w;
  return w;
}

function installListeners() {
  patch(ETP, 'addEventListener', function (type, listener, options) {
    const self = this == null ? G : this;
    if (passive()) return nAddEL(self, type, listener, options);
    if (listener === null || (typeof listener !== 'function' && typeof listener !== 'object')) {
      return nAddEL(self, type, listener, options);
    }
    const t = NativeString(type);
    if (REC) write(targetLabel(self) + '.' + t, listener, callPos(self, 'addEventListener'));
    const r = nAddEL(self, t, wrapListener(listener, t, capOf(options)), options);
    if (t === 'navigate') keepNavigateLast(self);
    return r;
  });
  patch(ETP, 'removeEventListener', function (type, listener, options) {
    const self = this == null ? G : this;
    if (listener === null || (typeof listener !== 'function' && typeof listener !== 'object')) {
      return nRemoveEL(self, type, listener, options);
    }
    const t = NativeString(type);
    const m = wmGet(listenerWrappers, listener);
    const w = m === undefined ? undefined : m[(capOf(options) ? 'c|' : 'b|') + t];
    if (REC) write(targetLabel(self) + '.' + t, undefined, callPos(self, 'removeEventListener'));
    return nRemoveEL(self, t, w === undefined ? listener : w, options);
  });
  patch(ETP, 'dispatchEvent', function (event) {
    const self = this == null ? G : this;
    if (passive()) return nDispatch(self, event);
    depth++;
    try {
      return nDispatch(self, event);
    } finally {
      depth--;
    }
  });
  // Natives that run listeners synchronously (untrusted clicks; focus moves: focus.js).
  const HEP = G.HTMLElement ? HTMLElement.prototype : null;
  for (const name of ['click']) {
    const f = HEP ? HEP[name] : undefined;
    if (typeof f !== 'function') continue;
    patch(HEP, name, function () {
      if (passive()) return rApply(f, this, arguments);
      depth++;
      try {
        return rApply(f, this, arguments);
      } finally {
        depth--;
      }
    });
  }
}

/** Wraps the `on<type>` accessors of `obj`: the page sees its own function, we run a wrapper. */
function wrapHandlerProps(obj) {
  const names = ownNames(obj);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (name.length < 3 || strCharCode(name, 0) !== 111 || strCharCode(name, 1) !== 110) continue;
    const d = getDesc(obj, name);
    if (d === undefined || !d.configurable || typeof d.set !== 'function' || typeof d.get !== 'function') continue;
    const type = strSlice(name, 2);
    const nGet = d.get;
    const nSet = d.set;
    HANDLER_NAMES[name] = 1;
    defProp(obj, name, {
      configurable: true,
      enumerable: d.enumerable,
      get: function () {
        const w = rApply(nGet, this, []);
        if (typeof w !== 'function') return w;
        const o = wmGet(origOf, w);
        return o === undefined ? w : o;
      },
      set: function (v) {
        const self = this == null ? G : this;
        if (passive()) return rApply(nSet, self, [v]);
        let w = v;
        if (typeof v === 'function') {
          w = function () {
            const ev = arguments[0];
            if (NEvent && ev instanceof NEvent && !enterEvent(ev, self, false)) {
              const st = wmGet(evState, ev);
              if (st !== undefined && st.calls !== null) st.calls[st.calls.length] = { listener: v, self: this };
              return undefined;
            }
            try {
              return nested(v, this, arguments);
            } finally {
              if (exitArmed) flushAtExit();
            }
          };
          wmSet(origOf, w, v);
        }
        if (REC) deferWrite(locOf(targetLabel(self) + '.' + type), v);
        const r = rApply(nSet, self, [w]);
        if (type === 'navigate') keepNavigateLast(self);
        return r;
      },
    });
  }
}

/** NO_HANDLER_GLOBALS (interfaces.js) as a lookup table. */
function noHandlerGlobals() {
  const t = objCreate(null);
  const lines = strSplit(NO_HANDLER_GLOBALS, '\n');
  for (let i = 0; i < lines.length; i++) {
    const names = strSplit(lines[i], ' ');
    for (let j = 0; j < names.length; j++) if (names[j] !== '') t[names[j]] = 1;
  }
  return t;
}

function installHandlerProps() {
  const seen = new NativeWeakSet();
  const visit = (p) => {
    if (p === null || typeof p !== 'object' || wsHas(seen, p)) return;
    wsAdd(seen, p);
    wrapHandlerProps(p);
  };
  visit(G); // the window or worker global: its own `on*` members ([Global] interface)
  // Reading a global builds its interface object: only those that may own handlers are read.
  const skip = noHandlerGlobals();
  const names = ownNames(G);
  for (let i = 0; i < names.length; i++) {
    if (skip[names[i]] === 1) continue;
    let v;
    try {
      const d = getDesc(G, names[i]);
      v = d && 'value' in d ? d.value : undefined;
    } catch (_) {
      v = undefined;
    }
    if (typeof v !== 'function') continue;
    const p = v.prototype;
    if (p !== null && typeof p === 'object' && (p === ETP || p instanceof EventTarget)) visit(p);
  }
}

/** All event types worth a root capture listener: every `on*` name plus a few without one. */
// Listening to these has side effects (sensors start, back/forward cache is disabled).
const NOT_ROOT = objCreate(null);
for (const t of ['devicemotion', 'deviceorientation', 'deviceorientationabsolute', 'unload',
  'beforeunload', 'pointerrawupdate']) {
  NOT_ROOT[t] = 1;
}

function rootTypes() {
  const types = objCreate(null);
  const add = (obj) => {
    if (!obj) return;
    const names = ownNames(obj);
    for (let i = 0; i < names.length; i++) {
      const n = names[i];
      if (strCharCode(n, 0) === 111 && strCharCode(n, 1) === 110 && n.length > 2) types[strSlice(n, 2)] = 1;
    }
  };
  add(W);
  add(G.Window ? Window.prototype : null);
  add(G.HTMLElement ? HTMLElement.prototype : null);
  add(DocP);
  add(ElP);
  for (const t of ['DOMContentLoaded', 'focusin', 'focusout', 'pagehide', 'pageshow', 'visibilitychange', 'readystatechange', 'message', 'hashchange', 'popstate',
    'transitionend', 'animationend', 'load', 'error', 'abort', 'selectionchange', 'compositionstart',
    'compositionend', 'compositionupdate']) {
    types[t] = 1;
  }
  return types;
}

function rootListener(ev) {
  if (passive()) return;
  let t = evTarget(ev);
  if (t === OWN_SCRIPT && t !== null) return;
  // Window-level events (load, pageshow, pagehide, unload) are fired at the window with the
  // document as their target: the dispatch's target for us is the window.
  if (t === DOCUMENT && evPhase(ev) === 2 && evCurrentTarget(ev) === W) t = W;
  enterEvent(ev, t, true);
}

function installRoot() {
  if (!W) return;
  const types = rootTypes();
  for (const t in types) if (NOT_ROOT[t] !== 1) nAddEL(W, t, rootListener, true);
  if (DOCUMENT) {
    for (const t of ['load', 'error', 'abort']) nAddEL(DOCUMENT, t, rootListener, true);
  }
}

function installPostMessage() {
  if (!W || typeof W.postMessage !== 'function') return;
  const nPost = W.postMessage;
  patch(W, 'postMessage', function (message) {
    const self = this == null ? G : this;
    if (passive()) return rApply(nPost, self, arguments);
    if (self === W) {
      ensure();
      selfPosts[selfPosts.length] = { parent: parentInfo(), from: cur };
    }
    return rApply(nPost, self, arguments);
  });
}
