// repair.js — enforcing the compiled policy (docs/runtime-api.md, "Repair"): which operation
// each wrapped callback is, when events arrive (and what counts as arrived without running),
// user gestures kept together and in order, postponed events released when the rules that
// held them expire (no polling: re-checked when an event arrives, when a time limit comes
// due, and when the liveness limit passes), the spinner, the liveness guard, and the figures
// reported to the proxy. What the proxy holds for this document is gates.js's, the default
// actions of postponed input are input.js's.

const rep = {
  postponed: 0,
  discarded: 0,
  delays: [], // ms each released event waited
  incidents: [],
  reported: -1,
  leftAlone: 0, // trusted events no rule can name, left without an action (repairLeavesAlone)
};
const waiting = []; // policy-held descs (not user gestures), oldest first
const userQueue = []; // held user gestures: {items: [desc], fate, by, released, at}
let gesture = null; // the open user gesture: {g, fate, at, kind, mouse}
const xhrGroups = new NativeWeakMap(); // xhr -> group of its response events
const loadPevs = new NativeWeakMap(); // img/iframe -> pev of its load (forked by the parser or a src set)
const scriptPevs = new NativeWeakMap(); // script element -> pev of its execution
const unnamedScripts = new NativeWeakMap(); // parser script no rule can name -> 1 (no pev)
// Whether an element's event has been forked (its removal then counts as its arrival): until
// one has, what leaves the document is nobody's business (gates.js, repairMutations).
let elementPevs = false;
let discarding = []; // rule instances that discarded user input and have not expired
let recheckQueued = false;
let wakeTimer = 0;
let wakeAt = Infinity;
let spinnerUntil = 0; // a discard at replay (input.js) shows the spinner this long
const PREVENT = objCreate(null);
for (const t of ['mousedown', 'keydown', 'keypress', 'click', 'dblclick', 'auxclick', 'contextmenu',
  'submit', 'reset', 'beforeinput', 'paste', 'cut', 'copy', 'drop']) {
  PREVENT[t] = 1;
}

/** Starts enforcement when the configuration carries a policy for this page. */
function installRepair() {
  if (!policyLoad()) return;
  repairOn = true;
  installGates();
  installInputGuard();
  installCancels();
  if (W) nAddEL(W, 'pagehide', () => repairReport(true), true);
}

/**
 * What ends an event without running it: aborting a request (its events fire inside
 * abort(), nested in the caller's action, so they never begin one of their own).
 */
function installCancels() {
  if (!XHRP || typeof XHRP.abort !== 'function') return;
  const nAbort = XHRP.abort;
  patch(XHRP, 'abort', function () {
    try {
      return rApply(nAbort, this, arguments);
    } finally {
      if (repairOn) {
        const m = wmGet(targetMeta, this);
        if (m !== undefined && m.reg !== null && m.reg.pev !== undefined) repairCancelled(m.reg.pev);
      }
    }
  });
}

/** `pev` will not run (cleared, aborted, its element removed): it counts as arrived. */
function repairCancelled(pev) {
  if (pev === undefined || pev === null || pev.arrived) return;
  policyCancelled(pev);
  gateCancelled(pev);
  recheckSoon();
}

/** `pev`, forked, is the execution or the load of element `el`: kept in `map` (scriptPevs, loadPevs). */
function keepElementPev(map, el, pev) {
  wmSet(map, el, pev);
  elementPevs = true;
}

/** What a desc of a forked callback is to the policy (null: nothing it can name). */
function forkKind(kind) {
  switch (kind) {
    case 'timer': case 'interval': case 'raf': case 'idle': case 'xhr': return kind;
    case 'fetch': case 'body': return 'fetch';
    default: return null;
  }
}

function currentPev() {
  return info !== null && info.pev !== undefined ? info.pev : null;
}

/** `u` resolved against the document (a request's URL as the page wrote it), or `u`. */
function absUrl(u) {
  if (typeof u !== 'string' || u === '' || NURL === null) return u || '';
  try {
    return new NURL(u, DOCUMENT !== null && nodeBaseURI !== null ? nodeBaseURI(DOCUMENT) : pageHref()).href;
  } catch (_) {
    return u;
  }
}

/** fork(·, v): the page created the callback described by `d`. */
function repairFork(d) {
  const k = forkKind(d.kind);
  if (k === null) return;
  const pev = newPev(k, k, null, k === 'xhr' || d.kind === 'fetch' ? absUrl(d.url) : d.url, currentPev());
  if (typeof d.delay === 'number') pev.delay = d.delay;
  if (k === 'xhr') pev.state = 4;
  d.pev = pev;
  policyOp('fork', pev);
  recheckSoon();
}

/** fork of the load of an image or iframe whose `src` a script sets. */
function repairForkLoad(el, url) {
  const pev = newPev('event', 'load', el, NativeString(url), currentPev());
  pev.res = elLocalName(el);
  if (pev.res === 'img') raisePriority(el);
  keepElementPev(loadPevs, el, pev);
  policyOp('fork', pev);
  watchDocument(); // its removal counts as its arrival
  recheckSoon();
}

/**
 * The action of `d` began: its event is arriving (it arrives once its turn is over, and the
 * events before it have now); a held one reports how long it waited.
 */
function repairBegan(d) {
  const pev = d.pev;
  if (pev === undefined) {
    policyArriving(null);
    return;
  }
  if (pev.kind === 'event' && pev.type === 'DOMContentLoaded' && pev.target === DOCUMENT) parserScriptsRan();
  if (d.group !== undefined && !d.group.user && d.evTarget !== undefined) {
    // A held XHR response's events were described before any of them ran: each follows the
    // one that ran before it (the same request's FIFO), not the last one before the hold.
    const m = wmGet(targetMeta, d.evTarget);
    if (m !== undefined && m.reg !== null && m.last >= 0) d.joins = [m.last];
  }
  policyArriving(pev);
  if (d.heldAt !== undefined) {
    if (rep.delays.length < 2000) rep.delays[rep.delays.length] = dateNow() - d.heldAt;
    d.heldAt = undefined;
    if (d.group !== undefined) d.group.released--;
  }
  recheckSoon();
}

// Events that keep their action whatever the policy says: the ones whose begin the runtime
// itself needs (`parsed` and `loaded` hold once the document's DOMContentLoaded and the
// window's load have run; pagehide ends the page's report), the FIFO queues of messages, and
// rejections the runtime reports.
const REPAIR_KEEPS = objCreate(null);
for (const t of ['message', 'messageerror', 'pagehide', 'unload', 'unhandledrejection', 'rejectionhandled']) {
  REPAIR_KEEPS[t] = 1;
}

/**
 * Whether a trusted dispatch of `type` at `target` is nothing the policy can name or wait for,
 * so that it needs no action of its own: not user input a `user` term names, not a type a
 * rule names, not the arrival of anything forked (an XHR's response, a load whose `src` a
 * script set, a script the policy watches), not on another target a request, a socket or a
 * port registered, and not in a chain of timer callbacks (timers.js counts them through the
 * events between). Such events are most of a page's load (the parser's scripts' and style
 * sheets' loads, `readystatechange`, `pageshow`, the autofocus, a request's progress) and
 * of its indirect input (pointer moves, scrolling, focus moves), and describing, deciding and
 * beginning each cost ≈ 90 µs of the main thread. What the page's listeners then fork opens
 * an action of its own (ensure()), which is what the event would have been to the policy:
 * nothing it can name.
 */
function repairIgnores(type, target) {
  if (REPAIR_KEEPS[type] === 1 || policyMayNameType(type)) return false;
  let m;
  if (target === DOCUMENT) {
    if (type === 'DOMContentLoaded') return false;
  } else if (target === W) {
    if (type === 'load') return false;
  } else if (!isNode(target)) {
    // An XHR's events before its response is done: not its arrival (that is readyState 4).
    const st = xhrState(target);
    if (st < 0 || st === 4 || policyMayNameXhrState()) return false;
    m = wmGet(targetMeta, target);
    return m === undefined || m.reg === null || !(m.reg.timers > 0);
  } else if (type === 'load' || type === 'error' || type === 'abort') {
    syncParser();
    if (wmHas(loadPevs, target) || wmHas(scriptPevs, target)) return false;
    if (elLocalName(target) === 'script' && !wmHas(unnamedScripts, target)) return false;
  }
  m = creatorMeta(target);
  return m === undefined || (m.reg === null && (m.by === null || !(m.by.timers > 0)));
}

// The last trusted dispatch left alone: the page's own listeners for it, wrapped, run at once.
let leftAlone = null;

/**
 * Leaves the dispatch of `ev` alone when the policy cannot name it (repairIgnores): its
 * listeners run outside any action, as in passive mode (the open one ends, as begin() would
 * end it). False when it must be described and decided.
 */
function repairLeavesAlone(ev, type, target) {
  if (!repairIgnores(type, target)) return false;
  // Input the policy does not name still tells later focus and scroll events from the page's.
  if (isDirectInput(type)) userInput(target);
  leftAlone = ev;
  rep.leftAlone++;
  if (cur >= 0) end();
  return true;
}

/** The pev a DOM event dispatch is (the fork's for forked loads and XHR responses). */
function eventPev(d) {
  const t = d.evTarget;
  const type = d.evType;
  if (NXMLHttpRequest && t instanceof NXMLHttpRequest) {
    const st = xhrState(t);
    const m = wmGet(targetMeta, t);
    if (st === 4 && m !== undefined && m.reg !== null && m.reg.pev !== undefined) return m.reg.pev;
    const p = newPev('xhr', type, t, m !== undefined && m.reg !== null ? absUrl(m.reg.url) : '', null);
    p.state = st;
    return p;
  }
  if ((type === 'load' || type === 'error') && isNode(t)) {
    const forked = wmGet(loadPevs, t);
    if (forked !== undefined && !forked.arrived) return forked;
    if (elLocalName(t) === 'script') {
      // A script's load/error event comes right after it ran: its execution has arrived.
      const sp = scriptPevOf(t);
      if (sp !== null) scriptArrived(sp);
    }
  }
  const p = newPev('event', type, t, '', d.parent && d.parent.pev !== undefined ? d.parent.pev : null);
  p.user = d.trusted === true && d.type === 2;
  return p;
}

function scriptPevOf(el) {
  syncParser();
  let p = wmGet(scriptPevs, el);
  if (p === undefined) {
    if (!elHasAttr(el, 'src') || wmHas(unnamedScripts, el)) return null;
    p = newPev('script', 'script', el, scriptSrc(el), null);
    p.how = scriptLoading(el, false);
    wmSet(scriptPevs, el, p);
  }
  return p;
}

/**
 * begin(u) of the callback described by `d`: 'run', 'hold' or 'discard'. Sets `d.rep` when
 * the policy holds it (hold() then calls repairHeld).
 */
function repairDecide(d) {
  let r;
  if (d.evType !== undefined) {
    if (d.pev === undefined) d.pev = eventPev(d);
    const pev = d.pev;
    if (pev.kind === 'event' && pev.user && USER_SET[pev.type] === 1) r = userDecision(d);
    else if (pev.kind === 'xhr') r = xhrDecision(d);
    else r = soloDecision(d);
  } else {
    if (d.pev === undefined) d.pev = newPev(d.kind, d.kind, null, d.url, null);
    r = soloDecision(d);
  }
  return r;
}

function asResult(action) {
  return action === A_DISCARD ? DISCARD : action === A_POSTPONE ? HOLD : RUN;
}

function soloDecision(d) {
  const res = policyOp('begin', d.pev);
  if (res.action === A_DISCARD) {
    if (d.pev.kind === 'event' && (d.pev.user || d.trusted)) {
      noteDiscard(res.by, d.pev);
      return DISCARD;
    }
    // The checker lets only user input be discarded; anything else is postponed.
  }
  if (res.action >= A_POSTPONE) {
    d.rep = true;
    d.repBy = res.by;
    return HOLD;
  }
  return RUN;
}

function newGroup(by, user) {
  return { items: [], fate: HOLD, by, released: 0, at: dateNow(), user };
}

function groupBusy(g) {
  return g.fate === HOLD || g.released > 0;
}

/** Whether user event `type` starts a new gesture (else it belongs to the open one). */
function startsGesture(type, now) {
  const open = gesture !== null && now - gesture.at < 5000;
  switch (type) {
    case 'pointerdown': case 'keydown': case 'touchstart': return true;
    case 'mousedown':
      if (open && gesture.kind === 'pointer' && !gesture.mouse) {
        gesture.mouse = true;
        return false;
      }
      return true;
    case 'beforeinput': case 'paste': case 'drop': case 'compositionstart': return !(open && now - gesture.at < 1000);
    default: return !open;
  }
}

/** User input: one decision per gesture, gestures in order (a held one holds later ones). */
function userDecision(d) {
  const type = d.evType;
  const now = dateNow();
  if (type === 'keydown') d.keyEv = keydownNow(d.evTarget);
  if (startsGesture(type, now)) {
    const res = policyOp('begin', d.pev);
    const kind = type === 'pointerdown' || type === 'mousedown' || type === 'touchstart' ? 'pointer' : 'key';
    gesture = { g: null, fate: RUN, at: now, kind, mouse: type === 'mousedown', lead: d.pev };
    if (res.action === A_DISCARD) {
      gesture.fate = DISCARD;
      noteDiscard(res.by, d.pev);
      return DISCARD;
    }
    if (res.action === A_POSTPONE || userQueue.length > 0) {
      const g = newGroup(res.action === A_POSTPONE ? res.by : userQueue[userQueue.length - 1].by, true);
      g.lead = d;
      userQueue[userQueue.length] = g;
      gesture.g = g;
      gesture.fate = HOLD;
      d.rep = true;
      d.group = g;
      d.repBy = g.by;
      return HOLD;
    }
    return RUN;
  }
  gesture.at = now;
  const g = gesture.g;
  if (gesture.fate === DISCARD || (g !== null && g.fate === DISCARD)) {
    rep.discarded++;
    return DISCARD;
  }
  if (g !== null && groupBusy(g)) {
    d.rep = true;
    d.group = g;
    d.repBy = g.by;
    return HOLD;
  }
  // The gesture's first event ran. A rule about this later event alone (`postpone click`,
  // not `user`, which the first event matched too) still holds it, and the rest behind it.
  const res = policyOp('begin', d.pev);
  if (res.action === A_DISPATCH || res.by === null || (gesture.lead && predMatches(res.by.r.pred, gesture.lead, res.by.env))) return RUN;
  if (res.action === A_DISCARD) {
    gesture.fate = DISCARD;
    noteDiscard(res.by, d.pev);
    return DISCARD;
  }
  const ng = newGroup(res.by, true);
  ng.lead = d;
  userQueue[userQueue.length] = ng;
  gesture.g = ng;
  d.rep = true;
  d.group = ng;
  d.repBy = res.by;
  return HOLD;
}

/** An XHR's events: the response (readyState 4) decides for the events that follow it. */
function xhrDecision(d) {
  const x = d.evTarget;
  let g = wmGet(xhrGroups, x);
  if (g !== undefined && groupBusy(g)) {
    d.rep = true;
    d.group = g;
    d.repBy = g.by;
    return HOLD;
  }
  if (g !== undefined && (d.pev.began || d.pev.arrived)) return RUN; // later events of a response that ran
  const res = policyOp('begin', d.pev);
  if (res.action >= A_POSTPONE) {
    g = newGroup(res.by, false);
    g.lead = d;
    wmSet(xhrGroups, x, g);
    d.rep = true;
    d.group = g;
    d.repBy = res.by;
    return HOLD;
  }
  if (d.pev.state === 4) wmSet(xhrGroups, x, { items: [], fate: RUN, by: null, released: 0, at: 0 });
  return RUN;
}

function noteDiscard(by, pev) {
  rep.discarded++;
  if (by !== null && by !== undefined) {
    if (by.discardAt === 0) by.discardAt = dateNow();
    let known = false;
    for (let i = 0; i < discarding.length; i++) if (discarding[i] === by) known = true;
    if (!known) discarding[discarding.length] = by;
  }
  if (pev.kind === 'event' && pev.user && policySpinner(by)) spinnerShow();
  recheckSoon();
  reportSoon();
}

/** hold() registered `d` (its hid is set): keep it where recheck() finds it. */
function repairHeld(d) {
  d.heldAt = dateNow();
  rep.postponed++;
  const g = d.group;
  if (g !== undefined) {
    g.items[g.items.length] = d;
    if (g.fate === RUN) releaseItem(g, d); // appended to a group being released: after the others
    if (g.user && policySpinner(g.by)) spinnerShow();
    if (!g.user && g.lead === d) waiting[waiting.length] = d; // an XHR response: re-decided alone
  } else {
    waiting[waiting.length] = d;
  }
  recheckSoon();
  reportSoon();
}

function releaseItem(g, d) {
  if (g !== null) g.released++;
  if (!release(d.hid) && g !== null) g.released--;
}

/**
 * Queues one re-check of everything held (after the current callback and its microtasks).
 * With nothing held a re-check can only find the policy done (the wrappers go passive), which
 * need not happen before the turn ends: the task that ends the turn (policy.js, queueArrival)
 * re-checks then, so a page that loads with nothing to hold pays one task per turn, not also a
 * microtask per operation.
 */
function recheckSoon() {
  if (recheckQueued) return;
  if (!repairHolds()) {
    queueArrival();
    return;
  }
  recheckQueued = true;
  rApply(nQueueMicrotask, G, [recheck]);
}

/** Whether anything is held, discarded by a live rule, or shown as waiting. */
function repairHolds() {
  return waiting.length > 0 || userQueue.length > 0 || discarding.length > 0 || spinnerUntil > 0 ||
    spinnerHost !== null || gatesPending();
}

/**
 * Re-emits what the policy holds (EventRaceCommander's postpone: the held event is decided
 * again): user gestures in order (only the first is considered), XHR responses per request,
 * everything else on its own; inserted scripts are let through by the proxy when their begin
 * is dispatched. Anything held longer than its policy's max-delay runs now (an incident).
 */
function recheck() {
  recheckQueued = false;
  const now = dateNow();
  // User gestures, oldest first.
  while (userQueue.length > 0) {
    const g = userQueue[0];
    if (g.fate === HOLD) {
      const overdue = now - g.at >= policyMaxDelay(g.by);
      const res = overdue ? { action: A_DISPATCH, by: g.by } : policyOp('begin', g.lead.pev);
      if (overdue) repairIncident(g.by, g.lead.pev, now - g.at, 'held longer than max-delay: released');
      if (res.action === A_POSTPONE) break;
      if (res.action === A_DISCARD || !gestureReplayable(g.lead)) {
        // A gesture whose effects cannot be replayed faithfully is discarded visibly, so
        // the user repeats it, rather than replayed wrongly (input.js).
        g.fate = DISCARD;
        for (let i = 0; i < g.items.length; i++) discardHeld(g.items[i].hid);
        if (res.action !== A_DISCARD) spinnerUntil = now + 1500;
        noteDiscard(res.action === A_DISCARD ? res.by : null, g.lead.pev);
      } else {
        g.fate = RUN;
        for (let i = 0; i < g.items.length; i++) releaseItem(g, g.items[i]);
      }
    }
    if (g.released > 0) break; // its events still have to run before the next gesture
    userQueue.shift();
  }
  // Everything else: each held callback and XHR response on its own.
  let j = 0;
  for (let i = 0; i < waiting.length; i++) {
    const d = waiting[i];
    if (held[d.hid] === undefined) continue; // released or discarded elsewhere
    if (!recheckOne(d, now)) waiting[j++] = d;
  }
  waiting.length = j;
  // What the proxy holds for this document (gates.js).
  recheckGates(now);
  // Rules that discard user input stop after max-delay too.
  let m = 0;
  for (let i = 0; i < discarding.length; i++) {
    const x = discarding[i];
    if (x.dead || instExpired(x, now)) continue;
    if (now - x.discardAt >= policyMaxDelay(x)) {
      x.dead = true;
      repairIncident(x, null, now - x.discardAt, 'discarded user input for longer than max-delay: rule stopped');
      continue;
    }
    discarding[m++] = x;
  }
  discarding.length = m;
  policyCompact(now);
  spinnerUpdate();
  scheduleWake(now);
  if (insts.length === 0 && waiting.length === 0 && userQueue.length === 0 && !gatesPending() && discarding.length === 0 &&
    arriving.length === 0 && spinnerUntil <= now) {
    // Nothing can be held or added any more: the wrappers go back to calling the natives.
    repairOn = false;
    reportSoon();
  }
}

/** One held callback: released, discarded, or still waiting (false). */
function recheckOne(d, now) {
  const g = d.group;
  if (g !== undefined && g.lead !== d) return false; // follows its group's first event
  const overdue = now - d.heldAt >= policyMaxDelay(d.repBy);
  const res = overdue ? { action: A_DISPATCH, by: d.repBy } : policyOp('begin', d.pev);
  if (res.action === A_POSTPONE) return false;
  if (overdue) repairIncident(d.repBy, d.pev, now - d.heldAt, 'held longer than max-delay: released');
  if (g !== undefined) {
    g.fate = RUN;
    for (let i = 0; i < g.items.length; i++) releaseItem(g, g.items[i]);
    return true;
  }
  if (res.action === A_DISCARD && d.pev.user) {
    discardHeld(d.hid);
    noteDiscard(res.by, d.pev);
  } else {
    release(d.hid);
  }
  return true;
}

/** A native timer at the next moment something comes due (a time limit or a max-delay). */
function scheduleWake(now) {
  let t = policyNextDue();
  for (let i = 0; i < userQueue.length; i++) if (userQueue[i].fate === HOLD) t = mathMin(t, userQueue[i].at + policyMaxDelay(userQueue[i].by));
  for (let i = 0; i < waiting.length; i++) t = mathMin(t, waiting[i].heldAt + policyMaxDelay(waiting[i].repBy));
  t = mathMin(t, gatesNextDue());
  if (spinnerUntil > now) t = mathMin(t, spinnerUntil);
  for (let i = 0; i < discarding.length; i++) t = mathMin(t, discarding[i].discardAt + policyMaxDelay(discarding[i]));
  // `js` conditions have no event to wait for: while something waits, look every 100 ms.
  if ((waiting.length > 0 || userQueue.length > 0 || gatesPending() || discarding.length > 0) && policyHasJs()) t = mathMin(t, now + 100);
  if (t === Infinity) return;
  if (wakeTimer !== 0 && t >= wakeAt) return;
  if (wakeTimer !== 0) rApply(nClearTimeout, G, [wakeTimer]);
  wakeAt = t;
  wakeTimer = rApply(nSetTimeout, G, [() => {
    wakeTimer = 0;
    wakeAt = Infinity;
    recheck();
  }, mathMax(0, t - now)]);
}

// ---- spinner ----------------------------------------------------------------------------------

let spinnerHost = null;
let bodyBusy = null; // the body we marked aria-busy and its previous value

/** An accessible overlay: fixed (no layout shift), click-through, announced politely. */
function spinnerShow() {
  if (spinnerHost !== null || DOCUMENT === null || docCreateElement === null) return;
  const root = docDocumentElement(DOCUMENT);
  if (root === null) return;
  const host = docCreateElement(DOCUMENT, 'shepherd-busy');
  elSetAttr(host, 'style', 'all:initial;position:fixed;inset:0;z-index:2147483647;pointer-events:none;display:block;');
  elSetAttr(host, 'role', 'status');
  elSetAttr(host, 'aria-live', 'polite');
  elSetAttr(host, 'aria-label', 'The page is still loading. Your input will be applied when it is ready.');
  try {
    const shadow = elAttachShadow(host, { mode: 'closed' });
    shadowInnerSet(shadow, '<style>:host{contain:strict}div{position:absolute;inset:0;background:rgba(255,255,255,.55)}' +
      'i{position:absolute;left:50%;top:50%;width:40px;height:40px;margin:-20px;border:4px solid #999;' +
      'border-top-color:#333;border-radius:50%;animation:r .8s linear infinite}' +
      '@keyframes r{to{transform:rotate(360deg)}}@media (prefers-reduced-motion:reduce){i{animation:none}}</style>' +
      '<div part="veil"><i></i></div>');
  } catch (_) {
    // no shadow DOM: the host alone still announces
  }
  elAppend(root, host);
  spinnerHost = host;
  const body = docBody(DOCUMENT);
  if (body !== null) {
    bodyBusy = { el: body, prev: elGetAttr(body, 'aria-busy') };
    elSetAttr(body, 'aria-busy', 'true');
  }
}

function spinnerHide() {
  if (spinnerHost === null) return;
  elRemove(spinnerHost);
  spinnerHost = null;
  if (bodyBusy !== null) {
    if (bodyBusy.prev === null) elRemoveAttr(bodyBusy.el, 'aria-busy');
    else elSetAttr(bodyBusy.el, 'aria-busy', bodyBusy.prev);
    bodyBusy = null;
  }
}

function spinnerUpdate() {
  let want = spinnerUntil > dateNow();
  for (let i = 0; i < userQueue.length && !want; i++) want = userQueue[i].fate === HOLD && policySpinner(userQueue[i].by);
  for (let i = 0; i < discarding.length && !want; i++) want = policySpinner(discarding[i]);
  if (want) spinnerShow();
  else spinnerHide();
}

// ---- incidents and figures ----------------------------------------------------------------------

/** Short text naming an event: kind, type, target, URL. */
function describePev(pev) {
  if (pev === null || pev === undefined) return '';
  let s = pev.kind === 'event' || pev.kind === 'xhr' ? pev.type : pev.kind;
  if (pev.target !== null && pev.target !== undefined && pev.kind !== 'xhr') {
    try {
      s += ' @ ' + targetPath(pev.target);
    } catch (_) {
      // a target we cannot name
    }
  }
  if (pev.url) s += ' ' + pev.url;
  return s;
}

/** Something waited longer than the liveness limit (or rules ran away): report it. */
function repairIncident(x, pev, delay, what) {
  if (rep.incidents.length >= 100) return;
  const p = x !== null && x !== undefined ? polList[x.p] : null;
  rep.incidents[rep.incidents.length] = {
    policy: p ? p.name : '', rule: x ? x.r.id : '', text: x ? x.r.text : '', event: describePev(pev),
    delayMs: delay, what,
  };
  reportNow(false);
}

let reportTimer = 0;
function reportSoon() {
  if (reportTimer !== 0) return;
  reportTimer = rApply(nSetTimeout, G, [() => {
    reportTimer = 0;
    reportNow(false);
  }, 1000]);
}

function repairFigures() {
  return {
    page: pageHref(), doc: DOC, policies: polNames(), postponed: rep.postponed, discarded: rep.discarded,
    delays: rep.delays, incidents: rep.incidents, forked: forksSeen, leftAlone: rep.leftAlone,
  };
}

/** How many user gestures and callbacks the policy holds or has released but not yet run. */
function repairPending() {
  return userQueue.length + waiting.length;
}

function polNames() {
  const out = [];
  for (let i = 0; i < polList.length; i++) out[out.length] = polList[i].name;
  return out;
}

/** Sends this document's figures (cumulative; the proxy keeps the latest per document). */
function reportNow(final) {
  const version = rep.postponed + rep.discarded * 7919 + rep.incidents.length * 104729 + rep.delays.length;
  if (version === rep.reported || polList.length === 0 || version === 0) return;
  rep.reported = version;
  const url = '/__shepherd/repair?t=' + encodeURIComponent(PAGE_TOKEN) + '&doc=' + encodeURIComponent(DOC);
  const body = jsonStr(repairFigures());
  try {
    if (final && nSendBeacon !== null) nSendBeacon(navigatorObj, url, body);
    else if (nFetch) promiseThen(rApply(nFetch, G, [url, { method: 'POST', body, keepalive: true, credentials: 'omit' }]), undefined, () => undefined);
  } catch (_) {
    // figures are best effort
  }
}

function repairReport(final) {
  if (polList.length > 0) reportNow(final);
}
