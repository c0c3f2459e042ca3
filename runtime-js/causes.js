// causes.js — whose a trusted event is: the user's, or the page's. `isTrusted` only says that
// the browser fired an event, not that a user caused it: the browser fires `selectionchange`
// after a script writes a field's value, `select` after `select()`, `scroll` after
// `scrollIntoView()`, `focus` at an `autofocus` element a script inserted. A user event joins
// the chain of user events (events.js: previous user event → next one), and a driver's
// exploration hangs its events off the last real one (races/ fixes.rs): a page-caused event
// taken for the user's orders the page's code before every later user event, an arc the
// browser does not guarantee, and the races between that code and the user disappear. So an
// event the page caused belongs to the action that caused it — a fork from that action, not a
// user event — and only events a user's input caused are user events (docs/runtime-api.md,
// "Runtime: user events").
//
// Direct input (mouse, pointer, keys, touch, text input, drag and drop, clipboard) is the
// user's whenever it is trusted and not fired synchronously by page code (events.js treats
// those as nested). Derived events follow from input or from page code; each is given to the
// most recent cause of its group that the runtime saw: user input, or a page call of an API
// that causes it (the wrappers below). A cause older than CAUSE_MS is no cause: such an event
// (layout moved the scroll position, the window was resized) is the browser's own, neither
// the user's nor forked by anything.

const DIRECT_TYPES = objCreate(null);
for (const t of ['click', 'dblclick', 'auxclick', 'contextmenu', 'mousedown', 'mouseup', 'mousemove',
  'mouseover', 'mouseout', 'mouseenter', 'mouseleave', 'wheel', 'keydown', 'keyup', 'keypress',
  'input', 'beforeinput', 'change', 'submit', 'reset', 'pointerdown', 'pointerup', 'pointermove',
  'pointerover', 'pointerout', 'pointerenter', 'pointerleave', 'pointercancel', 'touchstart',
  'touchend', 'touchmove', 'touchcancel', 'dragstart', 'drag', 'dragend', 'dragenter', 'dragleave',
  'dragover', 'drop', 'compositionstart', 'compositionupdate', 'compositionend', 'paste', 'copy',
  'cut']) {
  DIRECT_TYPES[t] = 1;
}
// Derived types and the group of causes each follows: 1 focus, 2 selection, 3 scroll, 4 none
// (the environment: only the browser resizes a top-level window).
const DERIVED = objCreate(null);
for (const t of ['focus', 'blur', 'focusin', 'focusout']) DERIVED[t] = 1;
for (const t of ['selectionchange', 'select']) DERIVED[t] = 2;
for (const t of ['scroll', 'scrollend']) DERIVED[t] = 3;
DERIVED.resize = 4;

/** How long a cause explains the derived events that follow it (a smooth scroll's frames). */
const CAUSE_MS = 1000;
/** An autofocus the browser has not run within this long was skipped (it runs at the next frame). */
const AUTOFOCUS_MS = 1000;
const AUTOFOCUS_CAP = 8;

let causeSeq = 0;
let inputSeq = -1; // the last direct user input: its sequence number, time and target
let inputAt = 0;
let inputTarget = null;
// The page's last call of a selection or scroll API: {seq, at, from, parent, el} (`el`: the
// element it was called on, or null).
const pageCause = [null, null, null, null, null];
// Elements with `autofocus` inserted recently, oldest first: {el, at, from, parent}. The
// browser focuses one of them at its next rendering update unless something has focus.
const autofocusing = [];

/** A browser-caused event: neither the user's nor forked by an action. */
const BROWSER = { from: -1, parent: null };

/** Whether a trusted, not nested dispatch of `type` comes from a user's input device. */
function isDirectInput(type) {
  return DIRECT_TYPES[type] === 1;
}

/** Whether `type` is a UI event type at all (direct input or derived). */
function isUiType(type) {
  return DIRECT_TYPES[type] === 1 || DERIVED[type] !== undefined;
}

/** A trusted, not nested direct input event is being dispatched at `target`. */
function userInput(target) {
  inputSeq = ++causeSeq;
  inputAt = perfNow();
  inputTarget = target;
}

/**
 * The current action called an API whose effects the browser reports as `group` events, on
 * `el` (an element, or null: the document's selection, the window's scroll).
 */
function pageCaused(group, el) {
  if (!REC && !repairOn) return;
  ensure();
  pageCause[group] = {
    seq: ++causeSeq, at: perfNow(), from: cur, parent: parentInfo(), last: -1,
    el: isNode(el) ? el : null,
  };
}

// Chromium tells input-device focus apart: a focus a click or a key moved has the device's
// capabilities, one `focus()`, `autofocus` or DevTools moved has `null`.
const uiSourceCaps = G.UIEvent ? getterOf(UIEvent.prototype, 'sourceCapabilities') : null;

/** True when `ev` says an input device caused it (Chromium's `sourceCapabilities`). */
function fromDevice(ev) {
  if (uiSourceCaps === null) return false;
  try {
    const c = uiSourceCaps(ev);
    return c !== null && typeof c === 'object';
  } catch (_) {
    return false; // not a UIEvent
  }
}

/**
 * Who caused a trusted, not nested dispatch of derived event `ev` (type `type`) at `target`:
 * `null` for the user, BROWSER for nobody, else `{from, parent}` of the page action that
 * caused it.
 */
function derivedCause(ev, type, target) {
  const group = DERIVED[type];
  const now = perfNow();
  if (group === 1) {
    // The window gaining or losing focus (another window, a popup): the environment's.
    if (target === W || target === DOCUMENT) return BROWSER;
    const af = autofocusCause(ev, type, target, now);
    if (af !== null) return af;
    // Focus moved without a page cause: the user's click or Tab, a driver focusing a field.
    return null;
  }
  if (group === 4) return BROWSER;
  const p = pageCause[group];
  const userRecent = inputSeq >= 0 && now - inputAt < CAUSE_MS;
  if (p !== null && now - p.at < CAUSE_MS) {
    if (!userRecent || p.seq > inputSeq) return p;
    // Input came between the page's call and the event (the browser reports selection and
    // scroll changes a task later), but at another element: an event at the element the page
    // acted on is still the page's — a click on a button selects no text in a field.
    if (p.el !== null && p.el === target && inputTarget !== target) return p;
  }
  return userRecent ? null : BROWSER;
}

/**
 * The browser's autofocus: a focus with no input device behind it, at an element inserted with
 * `autofocus` shortly before, belongs to the action that inserted it. The browser focuses one
 * such element per document and skips it once something has focus.
 */
function autofocusCause(ev, type, target, now) {
  let j = 0;
  for (let i = 0; i < autofocusing.length; i++) {
    const a = autofocusing[i];
    if (now - a.at < AUTOFOCUS_MS) autofocusing[j++] = a;
  }
  autofocusing.length = j;
  if (j === 0 || target === W) return null;
  if (fromDevice(ev)) {
    if (type === 'focus' || type === 'focusin') autofocusing.length = 0; // the user moved focus
    return null;
  }
  let found = null;
  if (type === 'focus' || type === 'focusin') {
    for (let i = 0; i < j; i++) {
      if (autofocusing[i].el === target) {
        found = autofocusing[i];
        break;
      }
    }
    // focus comes first, focusin last: after it no candidate is left to the browser.
    if (type === 'focusin') autofocusing.length = 0;
  }
  if (found !== null) {
    // The focus moved the caret into the field and scrolled it into view: what the browser
    // reports of those is the autofocus's too.
    pageCause[2] = found;
    pageCause[3] = found;
    found.seq = ++causeSeq;
    found.at = now;
  }
  return found;
}

/** An element with `autofocus` was inserted by the current action (dom.js). */
function autofocusInserted(el) {
  if (autofocusing.length >= AUTOFOCUS_CAP) return;
  autofocusing[autofocusing.length] = {
    el, at: perfNow(), seq: ++causeSeq, from: cur, parent: parentInfo(), last: -1, autofocus: true,
  };
}

// ---- the APIs whose effects the browser reports later ----------------------------------------

/** Wraps method `name` of `proto`: calling it marks a page cause of `group` events first. */
function causeMethod(proto, name, group) {
  const f = proto ? proto[name] : undefined;
  if (typeof f !== 'function') return;
  patch(proto, name, function () {
    if (!passive()) pageCaused(group, this);
    return rApply(f, this, arguments);
  });
}

/** Wraps the setter of `name` of `proto` likewise. */
function causeSetter(proto, name, group) {
  if (!proto) return;
  const d = getDesc(proto, name);
  if (d === undefined || typeof d.set !== 'function') return;
  const nSet = d.set;
  defProp(proto, name, {
    configurable: true,
    enumerable: d.enumerable,
    get: d.get,
    set: function (v) {
      if (!passive()) pageCaused(group, this);
      return rApply(nSet, this, [v]);
    },
  });
}

function installCauses() {
  if (!W) return;
  // Selection: a field's value or selection set by script, the document's selection changed.
  for (const C of [G.HTMLInputElement, G.HTMLTextAreaElement]) {
    if (!C) continue;
    const P = C.prototype;
    for (const n of ['value', 'defaultValue', 'selectionStart', 'selectionEnd', 'selectionDirection']) {
      causeSetter(P, n, 2);
    }
    for (const n of ['select', 'setSelectionRange', 'setRangeText']) causeMethod(P, n, 2);
  }
  if (G.Selection) {
    for (const n of ['addRange', 'removeRange', 'removeAllRanges', 'empty', 'collapse', 'setPosition',
      'collapseToStart', 'collapseToEnd', 'extend', 'setBaseAndExtent', 'selectAllChildren',
      'deleteFromDocument', 'modify']) {
      causeMethod(Selection.prototype, n, 2);
    }
  }
  if (DocP) causeMethod(DocP, 'execCommand', 2);
  // Scrolling by script.
  if (ElP) {
    for (const n of ['scrollIntoView', 'scrollIntoViewIfNeeded', 'scroll', 'scrollTo', 'scrollBy']) {
      causeMethod(ElP, n, 3);
    }
    causeSetter(ElP, 'scrollTop', 3);
    causeSetter(ElP, 'scrollLeft', 3);
  }
  for (const n of ['scroll', 'scrollTo', 'scrollBy']) {
    if (typeof W[n] === 'function') causeMethod(W, n, 3);
  }
}

/** focus() on `el` moves the caret into it and scrolls it into view. */
function focusCauses(el) {
  pageCaused(2, el);
  pageCaused(3, el);
}
