// input.js — what postponed user input does when it is replayed (docs/runtime-api.md,
// "Repair"): the default actions of the original, which holding cancelled (typing at the
// caret, type-ahead and arrow keys in a `<select>`, Space and arrow keys on checkboxes,
// radios and buttons, Enter submitting a form); which input cannot be replayed faithfully
// (the gesture is then discarded visibly, so the user repeats it); and the field the user is
// typing in, kept when a page script moves focus meanwhile.

// ---- the field the user types in -------------------------------------------------------------

/** How long after the user's last key in a field a script's focus move counts as a race. */
const GUARD_MS = 2000;
let userField = null; // the editable element the user's last key went to
let userKeyAt = 0;
let scriptFocus = null; // {el, at}: the last focus move a page script made
let pointerAt = 0; // the user's last pointer or touch press
let keyEv = null; // the trusted keydown being dispatched now (read by repairDecide)
const redirected = new NativeWeakMap(); // keydown -> the field it was typed into instead of its target

/**
 * Watches the user's typing and the page's focus() calls, with native capture listeners
 * registered before any page script: they stay after the policy goes quiet (a timer that
 * steals focus after parsing is exactly the race), and cost a few comparisons per key.
 */
function installInputGuard() {
  if (!W || !DOCUMENT) return;
  nAddEL(W, 'keydown', guardKeydown, true);
  const pressed = (ev) => {
    if (evTrusted(ev)) pointerAt = dateNow();
  };
  for (const t of ['mousedown', 'pointerdown', 'touchstart']) nAddEL(W, t, pressed, true);
  if (HEP0 && typeof HEP0.focus === 'function') {
    const nf = HEP0.focus;
    patch(HEP0, 'focus', function () {
      const before = docActiveElement(DOCUMENT);
      const r = rApply(nf, this, arguments);
      if (this !== before && docActiveElement(DOCUMENT) === this) scriptFocus = { el: this, at: dateNow() };
      return r;
    });
  }
}

/** Whether typing edits `el` (a text field, a text area, editable content). */
function isEditable(el) {
  if (!isNode(el) || nodeType(el) !== 1) return false;
  if (isTextField(el)) return true;
  try {
    return elIsContentEditable !== null && elIsContentEditable(el);
  } catch (_) {
    return false;
  }
}

function guardKeydown(ev) {
  if (!evTrusted(ev)) return;
  keyEv = ev;
  const t = evTarget(ev);
  const now = dateNow();
  const f = userField;
  // A script moved focus away from the field the user was typing in, while the user was
  // typing and without the user pointing anywhere: the key goes to the user's field (moving
  // focus in keydown sends the character to the newly focused element).
  if (scriptFocus !== null && f !== null && t === scriptFocus.el && t !== f &&
    scriptFocus.at >= userKeyAt && scriptFocus.at - userKeyAt < GUARD_MS && now - userKeyAt < 2 * GUARD_MS &&
    pointerAt < userKeyAt && nodeConnected(f) && !elHasAttr(f, 'disabled')) {
    scriptFocus = null;
    nFocus(f, { preventScroll: true, focusVisible: false });
    if (docActiveElement(DOCUMENT) === f) {
      wmSet(redirected, ev, f);
      userKeyAt = now;
      return;
    }
  }
  if (isEditable(t)) {
    userField = t;
    userKeyAt = now;
  }
}

/** The trusted keydown being dispatched at `target` now, or null. */
function keydownNow(target) {
  return keyEv !== null && evTarget(keyEv) === target ? keyEv : null;
}

// ---- which held input can be replayed ---------------------------------------------------------

const CARET_KEYS = objCreate(null);
for (const k of ['ArrowLeft', 'ArrowRight', 'Home', 'End']) CARET_KEYS[k] = 1;
const LIST_KEYS = objCreate(null);
for (const k of ['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']) LIST_KEYS[k] = 1;
// Keys without a default action worth replaying.
const INERT_KEYS = objCreate(null);
for (const k of ['Escape', 'Shift', 'Control', 'Alt', 'Meta', 'CapsLock', 'NumLock', 'ScrollLock', 'Dead',
  'Unidentified', 'F1', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8', 'F9', 'F10', 'F11', 'F12', 'ContextMenu']) INERT_KEYS[k] = 1;

/**
 * Whether the gesture led by held event `d` can be replayed with all its effects: a key we
 * re-create, a press that focuses or clicks. A shortcut, Tab (focus navigation), a key that
 * opens a `<select>`'s list, scrolls the page or moves the caret between lines, and a press
 * on a `<select>` (which opens its list) cannot be.
 */
function gestureReplayable(d) {
  const type = d.evType;
  const target = d.evTarget;
  if (type === 'mousedown' || type === 'pointerdown' || type === 'touchstart') {
    return !(NSelect !== null && target instanceof NSelect);
  }
  if (type !== 'keydown') return true;
  const ev = d.keyEv;
  if (ev === undefined || ev === null || kbKey === null) return true;
  return keyReplayable(ev, target);
}

function keyReplayable(ev, target) {
  const key = kbKey(ev);
  if (INERT_KEYS[key] === 1) return true;
  if (kbCtrl(ev) || kbMeta(ev) || kbAlt(ev)) return false;
  const el = wmGet(redirected, ev) || target;
  if (NSelect !== null && el instanceof NSelect) return key.length === 1 ? key !== ' ' : LIST_KEYS[key] === 1;
  if (isEditable(el)) {
    if (key.length === 1 || key === 'Enter' || key === 'Backspace' || key === 'Delete') return true;
    return CARET_KEYS[key] === 1 && !kbShift(ev) && isTextField(el);
  }
  if (toggles(el)) return key === ' ' || key === 'Enter' || (isRadio(el) && LIST_KEYS[key] === 1 && strIndexOf(key, 'Page') !== 0);
  if (key === 'Enter') return true;
  // A character or Backspace with nothing editable focused does nothing; Space, arrows and
  // the page keys scroll the page, Tab moves focus: not re-created.
  return key.length === 1 ? key !== ' ' : key === 'Backspace' || key === 'Delete';
}

// ---- replaying the default actions -----------------------------------------------------------

/**
 * A released copy of held user input was dispatched (`ok`: no listener cancelled it): do
 * what the browser would have done for the original, which we cancelled. A click copy needs
 * nothing (dispatching a click runs activation: links navigate, checkboxes toggle, submit
 * buttons submit); mousedown moves focus; keydown types, chooses, toggles or submits, in the
 * field the user typed into.
 */
function emulateDefault(orig, type, target, ok) {
  if (!ok) return;
  depth++;
  try {
    if (type === 'mousedown') emulateFocus(orig, target);
    else if (type === 'keydown') emulateKey(orig, wmGet(redirected, orig) || target);
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
  if (kbCtrl(ev) || kbMeta(ev) || kbAlt(ev)) return; // shortcuts are not replayed (discarded)
  const key = kbKey(ev);
  if (NSelect !== null && target instanceof NSelect) return selectKey(target, key);
  if (toggles(target) && !isEditable(target)) return toggleKey(target, key);
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
  } else if (CARET_KEYS[key] === 1 && isTextField(target)) {
    moveCaret(target, key);
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

/** ArrowLeft/ArrowRight/Home/End in a one-line text field: the caret moves (no selection). */
function moveCaret(el, key) {
  const sel = selection(el);
  if (sel === null) return;
  const len = inputValueOrText(el).length;
  let at = sel[0];
  if (key === 'ArrowLeft') at = sel[0] === sel[1] ? mathMax(0, at - 1) : sel[0];
  else if (key === 'ArrowRight') at = sel[0] === sel[1] ? mathMin(len, sel[1] + 1) : sel[1];
  else if (key === 'Home') at = 0;
  else at = len;
  setRange(el, '', at, at);
}

// Fields whose value blocks implicit submission when a form has no submit button and more
// than one of them (HTML's implicit submission).
const BLOCKS_SUBMIT = objCreate(null);
for (const t of ['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month', 'week', 'time',
  'datetime-local', 'number']) BLOCKS_SUBMIT[t] = 1;

/** Enter: a newline in a text area, implicit submission in a form field, activation elsewhere. */
function enterKey(el) {
  if (NTextArea !== null && el instanceof NTextArea) return insertText(el, '\n');
  if (isNode(el) && nodeType(el) === 1 && elClosest(el, 'a[href],area[href],button,summary') === el) {
    nClick(el);
    return;
  }
  if (NInput === null || !(el instanceof NInput)) return;
  const form = inputForm(el);
  if (form !== null) implicitSubmit(form);
}

/**
 * HTML's implicit submission: the form's default button is clicked; with none, the form is
 * submitted only when one field at most blocks implicit submission.
 */
function implicitSubmit(form) {
  const button = elQS(form, 'button:not([type]),button[type=submit],input[type=submit],input[type=image]');
  if (button !== null) {
    if (!elHasAttr(button, 'disabled')) nClick(button);
    return;
  }
  const fields = elQSA(form, 'input');
  let blocking = 0;
  for (let i = 0; i < nlLength(fields); i++) if (BLOCKS_SUBMIT[inputType(nlItem(fields, i))] === 1) blocking++;
  if (blocking <= 1 && formRequestSubmit !== null) formRequestSubmit(form);
}

// ---- checkboxes, radios, buttons ------------------------------------------------------------

function isRadio(el) {
  return NInput !== null && el instanceof NInput && inputType(el) === 'radio';
}

/** Elements Space (or Enter) activates: checkboxes, radios, buttons. */
function toggles(el) {
  if (!isNode(el) || nodeType(el) !== 1) return false;
  if (NInput !== null && el instanceof NInput) {
    const t = inputType(el);
    return t === 'checkbox' || t === 'radio' || t === 'button' || t === 'submit' || t === 'reset' || t === 'image';
  }
  return elLocalName(el) === 'button';
}

/**
 * Space clicks (a checkbox toggles, a radio is chosen, a button runs), as the browser does on
 * its keyup; arrow keys choose the next or previous radio of the group; Enter submits a
 * checkbox's or radio's form and clicks a button.
 */
function toggleKey(el, key) {
  if (key === ' ') {
    nClick(el);
    return;
  }
  if (key === 'Enter') {
    if (NInput !== null && el instanceof NInput && (inputType(el) === 'checkbox' || inputType(el) === 'radio')) {
      const form = inputForm(el);
      if (form !== null) implicitSubmit(form);
    } else {
      nClick(el);
    }
    return;
  }
  if (!isRadio(el)) return;
  const group = radioGroup(el);
  let at = -1;
  for (let i = 0; i < group.length; i++) if (group[i] === el) at = i;
  if (at < 0 || group.length < 2) return;
  const back = key === 'ArrowUp' || key === 'ArrowLeft';
  const next = key === 'Home' ? group[0] : key === 'End' ? group[group.length - 1] :
    group[(at + (back ? group.length - 1 : 1)) % group.length];
  if (next === el) return;
  nFocus(next, { preventScroll: true });
  nClick(next);
}

/** The enabled radios of `el`'s group (same name, same form owner), in document order. */
function radioGroup(el) {
  const out = [];
  const name = inputName !== null ? inputName(el) : '';
  if (!name) return [el];
  const form = inputForm(el);
  const list = form !== null ? elQSA(form, 'input') : docQSA(DOCUMENT, 'input');
  for (let i = 0; i < nlLength(list); i++) {
    const x = nlItem(list, i);
    if (isRadio(x) && inputName(x) === name && inputForm(x) === form && !elHasAttr(x, 'disabled')) out[out.length] = x;
  }
  return out;
}

// ---- <select>: type-ahead and arrow keys ------------------------------------------------------

const SelP = NSelect !== null ? NSelect.prototype : null;
const selOptions = SelP ? getterOf(SelP, 'options') : null;
const selIndexSet = SelP ? setterOf(SelP, 'selectedIndex') : null;
const OptP = G.HTMLOptionElement ? HTMLOptionElement.prototype : null;
const optText = OptP ? getterOf(OptP, 'text') : null;
const optDisabled = OptP ? getterOf(OptP, 'disabled') : null;
const collLength = G.HTMLCollection ? getterOf(HTMLCollection.prototype, 'length') : null;
const collItem = G.HTMLCollection ? uncurry(HTMLCollection.prototype.item) : null;
let typeahead = { el: null, text: '', at: 0 };

/**
 * A key on a closed `<select>`, as Chromium handles it: characters search the options' text
 * (type-ahead: keys within a second extend the search), arrow, Home, End and page keys move
 * to another enabled option; a change fires `input` and `change`.
 */
function selectKey(sel, key) {
  if (selOptions === null || selIndexSet === null || optText === null || collLength === null) return;
  const opts = selOptions(sel);
  const n = collLength(opts);
  const enabled = (i) => !optDisabled(collItem(opts, i));
  const from = selectIndex(sel);
  let to = -1;
  if (key.length === 1) {
    const now = dateNow();
    const more = typeahead.el === sel && now - typeahead.at < 1000;
    typeahead = { el: sel, text: (more ? typeahead.text : '') + strToLower(key), at: now };
    const text = typeahead.text;
    // A fresh search starts after the current option; a longer one may stay on it.
    const start = text.length === 1 ? from + 1 : mathMax(from, 0);
    for (let k = 0; k < n && to < 0; k++) {
      const i = (start + k) % n;
      if (enabled(i) && strIndexOf(strToLower(trimmed(optText(collItem(opts, i)))), text) === 0) to = i;
    }
  } else if (key === 'ArrowDown' || key === 'ArrowRight' || key === 'PageDown') {
    for (let i = from + 1; i < n && to < 0; i++) if (enabled(i)) to = i;
  } else if (key === 'ArrowUp' || key === 'ArrowLeft' || key === 'PageUp') {
    for (let i = from - 1; i >= 0 && to < 0; i--) if (enabled(i)) to = i;
  } else if (key === 'Home') {
    for (let i = 0; i < n && to < 0; i++) if (enabled(i)) to = i;
  } else if (key === 'End') {
    for (let i = n - 1; i >= 0 && to < 0; i--) if (enabled(i)) to = i;
  }
  if (to < 0 || to === from) return;
  selIndexSet(sel, to);
  nDispatch(sel, new NEvent('input', { bubbles: true, composed: true }));
  nDispatch(sel, new NEvent('change', { bubbles: true }));
}

function trimmed(s) {
  let a = 0;
  let b = s.length;
  while (a < b && strCharCode(s, a) <= 32) a++;
  while (b > a && strCharCode(s, b - 1) <= 32) b--;
  return strSlice(s, a, b);
}

// Typing we replayed changes the field's value programmatically, after which the browser
// fires no `change` on blur; the user did change it, so we fire it (unless the browser did).
const typedFields = new NativeWeakMap(); // field -> {pending: bool}
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
