// repair.js — enforcing the compiled policy (docs/runtime-api.md, "Repair"): which operation
// each wrapped callback is, user gestures kept together and in order, postponed events
// released when the rules that held them expire (no polling: re-checked when an event
// arrives, when a time limit comes due, and when the liveness limit passes), the default
// actions of postponed user input, inserted scripts held by the proxy for this document,
// the spinner, the liveness guard, and the figures reported to the proxy.

const rep = {
  postponed: 0,
  discarded: 0,
  delays: [], // ms each released event waited
  incidents: [],
  reported: -1,
};
const waiting = []; // policy-held descs (not user gestures), oldest first
const userQueue = []; // held user gestures: {items: [desc], fate, by, released, at}
let gesture = null; // the open user gesture: {g, fate, at, kind, mouse}
const xhrGroups = new NativeWeakMap(); // xhr -> group of its response events
const loadPevs = new NativeWeakMap(); // img/iframe -> pev of the load its src set forked
const scriptPevs = new NativeWeakMap(); // script element -> pev of its execution
const gated = new NativeWeakMap(); // script element -> {url, n, pev}
const gates = []; // inserted scripts the proxy holds for us: {el, url, n, pev, at, by, done}
let discarding = []; // rule instances that discarded user input and have not expired
let recheckQueued = false;
let wakeTimer = 0;
let wakeAt = Infinity;
let gateToken = '';
let gateNext = 0;
const GATE_PARAM = '__shepherd_hold';
const HTTP_RE = /^https?:/;
const PREVENT = objCreate(null);
for (const t of ['mousedown', 'keydown', 'keypress', 'click', 'dblclick', 'auxclick', 'contextmenu',
  'submit', 'reset', 'beforeinput', 'paste', 'cut', 'copy', 'drop']) {
  PREVENT[t] = 1;
}

/** Starts enforcement when the configuration carries a policy for this page. */
function installRepair() {
  if (!policyLoad()) return;
  repairOn = true;
  if (POL.postponesScripts === true) installGates();
  if (W) nAddEL(W, 'pagehide', () => repairReport(true), true);
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

/** fork(·, v): the page created the callback described by `d`. */
function repairFork(d) {
  const k = forkKind(d.kind);
  if (k === null) return;
  const pev = newPev(k, k, null, d.url, currentPev());
  if (typeof d.delay === 'number') pev.delay = d.delay;
  if (k === 'xhr') pev.state = 4;
  d.pev = pev;
  policyOp('fork', pev);
  recheckSoon();
}

/** fork of the load of an image or iframe whose `src` a script sets. */
function repairForkLoad(el, url) {
  const pev = newPev('event', 'load', el, NativeString(url), currentPev());
  wmSet(loadPevs, el, pev);
  policyOp('fork', pev);
  recheckSoon();
}

/** The action of `d` began: its event has arrived; a held one reports how long it waited. */
function repairBegan(d) {
  const pev = d.pev;
  if (pev === undefined) return;
  policyArrived(pev);
  if (d.heldAt !== undefined) {
    if (rep.delays.length < 2000) rep.delays[rep.delays.length] = dateNow() - d.heldAt;
    d.heldAt = undefined;
    if (d.group !== undefined) d.group.released--;
  }
  recheckSoon();
}

/** The pev a DOM event dispatch is (the fork's for forked loads and XHR responses). */
function eventPev(d) {
  const t = d.evTarget;
  const type = d.evType;
  if (NXMLHttpRequest && t instanceof NXMLHttpRequest) {
    let st = -1;
    try {
      st = nXhrReadyState(t);
    } catch (_) {
      st = -1;
    }
    const m = wmGet(targetMeta, t);
    if (st === 4 && m !== undefined && m.reg !== null && m.reg.pev !== undefined) return m.reg.pev;
    const p = newPev('xhr', type, t, m !== undefined && m.reg !== null ? m.reg.url : '', null);
    p.state = st;
    return p;
  }
  if ((type === 'load' || type === 'error') && isNode(t)) {
    const forked = wmGet(loadPevs, t);
    if (forked !== undefined && !forked.arrived) return forked;
    if (elLocalName(t) === 'script') {
      // A script's load/error event comes right after it ran: its execution has arrived.
      const sp = scriptPevOf(t);
      if (sp !== null) policyArrived(sp);
    }
  }
  const p = newPev('event', type, t, '', d.parent && d.parent.pev !== undefined ? d.parent.pev : null);
  p.user = d.trusted === true && d.type === 2;
  return p;
}

function scriptPevOf(el) {
  let p = wmGet(scriptPevs, el);
  if (p === undefined) {
    if (!elHasAttr(el, 'src')) return null;
    p = newPev('script', 'script', el, scriptSrc(el), null);
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
  if (g !== undefined && d.pev.arrived) return RUN; // later events of a response that ran
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

/** Queues one re-check of everything held (after the current callback and its microtasks). */
function recheckSoon() {
  if (recheckQueued) return;
  recheckQueued = true;
  rApply(nQueueMicrotask, G, [recheck]);
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
      if (res.action === A_DISCARD) {
        g.fate = DISCARD;
        for (let i = 0; i < g.items.length; i++) discardHeld(g.items[i].hid);
        noteDiscard(res.by, g.lead.pev);
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
  // Scripts the proxy holds for this document.
  for (let i = 0; i < gates.length; i++) {
    const gt = gates[i];
    if (gt.done) continue;
    const overdue = now - gt.at >= policyMaxDelay(gt.by);
    const res = overdue ? { action: A_DISPATCH } : policyOp('begin', gt.pev);
    if (res.action === A_DISPATCH) {
      if (overdue) repairIncident(gt.by, gt.pev, now - gt.at, 'held longer than max-delay: released');
      gt.done = true;
      if (gt.by !== null && gt.by !== undefined) {
        rep.postponed++;
        if (rep.delays.length < 2000) rep.delays[rep.delays.length] = now - gt.at;
      }
      gateRelease(gt);
    } else if (gt.by === null || gt.by === undefined) {
      gt.by = res.by;
    }
  }
  let k = 0;
  for (let i = 0; i < gates.length; i++) if (!gates[i].done) gates[k++] = gates[i];
  gates.length = k;
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
  if (insts.length === 0 && waiting.length === 0 && userQueue.length === 0 && gates.length === 0 && discarding.length === 0) {
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
  for (let i = 0; i < gates.length; i++) t = mathMin(t, gates[i].at + policyMaxDelay(gates[i].by));
  for (let i = 0; i < discarding.length; i++) t = mathMin(t, discarding[i].discardAt + policyMaxDelay(discarding[i]));
  // `js` conditions have no event to wait for: while something waits, look every 100 ms.
  if ((waiting.length > 0 || userQueue.length > 0 || gates.length > 0 || discarding.length > 0) && policyHasJs()) t = mathMin(t, now + 100);
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

// ---- user input keeps its effects ------------------------------------------------------------

/**
 * A released copy of held user input was dispatched (`ok`: no listener cancelled it): do
 * what the browser would have done for the original, which we cancelled. A click copy needs
 * nothing (dispatching a click runs activation: links navigate, checkboxes toggle, submit
 * buttons submit); mousedown moves focus; keydown types.
 */
function emulateDefault(orig, type, target, ok) {
  if (!ok) return;
  depth++;
  try {
    if (type === 'mousedown') emulateFocus(orig, target);
    else if (type === 'keydown') emulateKey(orig, target);
    else if (type === 'beforeinput') insertText(target, ieData(orig) || '');
    else if (type === 'submit' && NForm !== null && target instanceof NForm) formSubmit(target);
  } catch (_) {
    // a page that changed the element under us: the event ran, its default is lost
  } finally {
    depth--;
  }
}

const FOCUSABLE = 'input:not([disabled]),select:not([disabled]),textarea:not([disabled]),' +
  'button:not([disabled]),a[href],area[href],iframe,summary,[tabindex],[contenteditable]:not([contenteditable="false"])';

function emulateFocus(ev, target) {
  if (meButton !== null && meButton(ev) !== 0) return;
  if (!isNode(target) || nodeType(target) !== 1) return;
  const el = elClosest(target, FOCUSABLE);
  const active = docActiveElement(DOCUMENT);
  if (el !== null) {
    // focusVisible: false, as for a real click: no focus ring a mouse user would not see.
    if (el !== active) nFocus(el, { preventScroll: true, focusVisible: false });
  } else if (active !== null && active !== docBody(DOCUMENT)) {
    nBlur(active);
  }
}

function emulateKey(ev, target) {
  if (kbCtrl(ev) || kbMeta(ev) || kbAlt(ev)) return; // shortcuts are not replayed
  const key = kbKey(ev);
  if (key.length === 1 || key === 'Enter') {
    const text = key === 'Enter' ? '\r' : key;
    const kp = new NKeyboardEvent('keypress', {
      key, code: kbCode(ev), shiftKey: kbShift(ev), charCode: strCharCode(text, 0), keyCode: strCharCode(text, 0),
      which: strCharCode(text, 0), bubbles: true, cancelable: true, composed: true, view: W,
    });
    if (!nDispatch(target, kp)) return;
    if (key === 'Enter') return enterKey(target);
    insertText(target, key);
  } else if (key === 'Backspace' || key === 'Delete') {
    deleteText(target, key === 'Backspace');
  }
}

function isTextField(el) {
  if (NTextArea !== null && el instanceof NTextArea) return true;
  if (NInput === null || !(el instanceof NInput)) return false;
  const t = inputType(el);
  return t === 'text' || t === 'search' || t === 'url' || t === 'tel' || t === 'email' || t === 'password' || t === 'number';
}

function selection(el) {
  try {
    if (NTextArea !== null && el instanceof NTextArea) return [textAreaSelStart(el), textAreaSelEnd(el)];
    const s = inputSelStart(el);
    return s === null ? null : [s, inputSelEnd(el)];
  } catch (_) {
    return null; // email and number fields have no selection API
  }
}

function setRange(el, text, s, e) {
  if (NTextArea !== null && el instanceof NTextArea) textAreaSetRange(el, text, s, e, 'end');
  else inputSetRange(el, text, s, e, 'end');
}

/** Types `text` where the caret is, with the beforeinput/input events typing fires. */
function insertText(el, text) {
  if (isTextField(el)) {
    const bi = new NInputEvent('beforeinput', { inputType: 'insertText', data: text, bubbles: true, cancelable: true, composed: true });
    if (!nDispatch(el, bi)) return;
    const sel = selection(el);
    if (sel !== null) setRange(el, text, sel[0], sel[1]);
    else inputValueSet(el, inputValue(el) + text);
    nDispatch(el, new NInputEvent('input', { inputType: 'insertText', data: text, bubbles: true, composed: true }));
    noteTyped(el);
  } else if (isNode(el) && elIsContentEditable !== null && elIsContentEditable(el) && docExecCommand !== null) {
    if (docActiveElement(DOCUMENT) !== el) nFocus(el, { preventScroll: true });
    docExecCommand(DOCUMENT, 'insertText', false, text);
  }
}

function deleteText(el, backward) {
  if (!isTextField(el)) {
    if (elIsContentEditable !== null && isNode(el) && elIsContentEditable(el) && docExecCommand !== null) {
      docExecCommand(DOCUMENT, backward ? 'delete' : 'forwardDelete', false);
    }
    return;
  }
  const sel = selection(el);
  if (sel === null) return;
  let s = sel[0];
  let e = sel[1];
  if (s === e) {
    if (backward) s = mathMax(0, s - 1);
    else e = e + 1;
  }
  const kind = backward ? 'deleteContentBackward' : 'deleteContentForward';
  const bi = new NInputEvent('beforeinput', { inputType: kind, bubbles: true, cancelable: true, composed: true });
  if (!nDispatch(el, bi)) return;
  setRange(el, '', s, mathMin(e, (inputValueOrText(el)).length));
  nDispatch(el, new NInputEvent('input', { inputType: kind, bubbles: true, composed: true }));
  noteTyped(el);
}

function inputValueOrText(el) {
  return NTextArea !== null && el instanceof NTextArea ? textAreaValue(el) : inputValue(el);
}

/** Enter: a newline in a text area, implicit submission in a form field. */
function enterKey(el) {
  if (NTextArea !== null && el instanceof NTextArea) return insertText(el, '\n');
  if (NInput === null || !(el instanceof NInput)) return;
  const form = inputForm(el);
  if (form === null) return;
  const button = elQS(form, 'button:not([type]),button[type=submit],input[type=submit],input[type=image]');
  if (button !== null) nClick(button); // what implicit submission does: a click on the default button
  else if (formRequestSubmit !== null) formRequestSubmit(form);
}

// Typing we replayed changes the field's value programmatically, after which the browser
// fires no `change` on blur; the user did change it, so we fire it (unless the browser did).
const typedFields = new NativeWeakMap(); // field -> {changed: bool}
function noteTyped(el) {
  let t = wmGet(typedFields, el);
  if (t === undefined) {
    t = { pending: true };
    wmSet(typedFields, el, t);
    nAddEL(el, 'change', () => {
      t.pending = false;
    }, true);
    nAddEL(el, 'blur', () => {
      if (!t.pending) return;
      t.pending = false;
      nDispatch(el, new NEvent('change', { bubbles: true }));
    }, true);
  }
  t.pending = true;
}

// ---- inserted scripts: held by the proxy for this document ------------------------------------

/** Marks a random token for this document's holds; hides it from `src` and getAttribute. */
function installGates() {
  if (!nGetRandomValues || !G.Uint8Array) return;
  const b = new G.Uint8Array(16);
  nGetRandomValues(nCrypto, b);
  let s = '';
  for (let i = 0; i < b.length; i++) s += strSlice(numToString(b[i] + 256, 16), 1);
  gateToken = s;
  const SP = G.HTMLScriptElement ? HTMLScriptElement.prototype : null;
  if (SP) {
    const d = getDesc(SP, 'src');
    if (d && d.get) {
      const nGet = d.get;
      defProp(SP, 'src', {
        configurable: true, enumerable: d.enumerable, set: getDesc(SP, 'src').set,
        get: function () {
          const g = wmGet(gated, this);
          return g !== undefined ? g.url : rApply(nGet, this, []);
        },
      });
    }
  }
  if (elGetAttrNative) {
    patch(ElP, 'getAttribute', function (name) {
      const g = wmGet(gated, this);
      if (g !== undefined && strToLower(NativeString(name)) === 'src') return g.raw;
      return rApply(elGetAttrNative, this, arguments);
    });
  }
}

/** fork(·, v) for scripts the page inserts (`nodes`: the inserted nodes, not yet connected). */
function repairInsert(nodes) {
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n === null || typeof n !== 'object' || !isNode(n)) continue;
    const t = nodeType(n);
    if (t === 1 && elLocalName(n) === 'script') forkScript(n);
    if ((t === 1 || t === 11) && nodeFirstChild(n) !== null) {
      const inner = t === 1 ? elQSA(n, 'script[src]') : fragQSA !== null ? fragQSA(n, 'script[src]') : null;
      if (inner === null) continue;
      for (let j = 0; j < nlLength(inner); j++) forkScript(nlItem(inner, j));
    }
  }
}

function forkScript(el) {
  if (nodeConnected(el) || !elHasAttr(el, 'src') || wmHas(scriptPevs, el) || !isJsType(el)) return;
  const raw = elGetAttr(el, 'src');
  const url = scriptSrc(el);
  const pev = newPev('script', 'script', el, url, currentPev());
  wmSet(scriptPevs, el, pev);
  nAddEL(el, 'load', () => scriptArrived(pev), false);
  nAddEL(el, 'error', () => scriptArrived(pev), false);
  policyOp('fork', pev);
  if (gateToken !== '' && reExec(HTTP_RE, url) !== null) {
    const n = ++gateNext;
    const hash = strIndexOf(url, '#');
    const base = hash >= 0 ? strSlice(url, 0, hash) : url;
    const frag = hash >= 0 ? strSlice(url, hash) : '';
    const marked = base + (strIndexOf(base, '?') >= 0 ? '&' : '?') + GATE_PARAM + '=' + gateToken + '.' + n + frag;
    wmSet(gated, el, { url, raw, n, pev });
    elSetAttr(el, 'src', marked);
    gates[gates.length] = { el, url, n, pev, at: dateNow(), by: null, done: false };
  }
  recheckSoon();
}

function scriptArrived(pev) {
  policyArrived(pev);
  recheckSoon();
}

/** Tells the proxy to let this document's held script through. */
function gateRelease(gt) {
  if (!nFetch) return;
  const q = '/__shepherd/hold/release?t=' + encodeURIComponent(PAGE_TOKEN) + '&g=' + gateToken + '&n=' + gt.n;
  try {
    promiseThen(rApply(nFetch, G, [q, { method: 'POST', keepalive: true, credentials: 'omit' }]), undefined, () => undefined);
  } catch (_) {
    // the proxy lets it through at its own limit
  }
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
  let want = false;
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
    delays: rep.delays, incidents: rep.incidents,
  };
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
