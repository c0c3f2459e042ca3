// focus.js — the document's focus as a location. Which element has focus decides where the
// user's keys land, so a script that moves focus (`focus()` in a timer, a dialog opened late,
// an `autofocus` field) races with the user's typing and with the user's own focus changes.
// `Document[1].activeElement` (docs/trace-format.md) is written by every focus change — the
// user's (a focus or blur dispatch), `focus()`/`blur()`, a dialog or popover that takes the
// focus, the browser's autofocus, a focused element removed — and read by
// `document.activeElement`, `document.hasFocus()`, every `focus()`/`blur()` call (it acts on
// the focus it finds) and every trusted key or text input (its target is the focused element).
// A trusted mouse press writes it too: it focuses what it presses (or clears the focus).

const FOCUS_LOC = 'Document[' + DOC_OID + '].activeElement';
const feRelated = G.FocusEvent ? getterOf(FocusEvent.prototype, 'relatedTarget') : null;
// Input that goes wherever the focus is.
const FOCUS_READERS = objCreate(null);
for (const t of ['keydown', 'keypress', 'keyup', 'beforeinput', 'input', 'compositionstart', 'paste']) {
  FOCUS_READERS[t] = 1;
}
// Wrapped calls that move focus, on the stack: each logs its read and write itself, at the
// call's position, instead of the focus events it fires.
let focusCalls = 0;

/** The element that has focus now (the body when none), read through the native getter. */
function focusedNow() {
  if (docActiveElement === null || DOCUMENT === null) return null;
  try {
    return docActiveElement(DOCUMENT);
  } catch (_) {
    return null;
  }
}

/** What a dispatch of `type` at `target` does to the focus location (record mode). */
function focusDispatch(ev, type, target, trusted) {
  if (!REC || DOCUMENT === null || !trusted) return;
  if (type === 'focus' || type === 'focusin' || type === 'blur' || type === 'focusout') {
    // The window gaining or losing focus does not move the document's focused element.
    if (focusCalls > 0 || target === W || target === DOCUMENT || !isNode(target)) return;
    if (type === 'focus' || type === 'focusin') {
      write(FOCUS_LOC, target);
    } else {
      let next = null;
      try {
        next = feRelated === null ? null : feRelated(ev);
      } catch (_) {
        next = null;
      }
      write(FOCUS_LOC, next);
    }
  } else if (FOCUS_READERS[type] === 1) {
    read(FOCUS_LOC);
  } else if (type === 'mousedown' && isNode(target)) {
    // A press sets the focus — to the control pressed, or to nothing — also when it is
    // where the focus already was (then no focus event says so): what the keys typed next
    // go to is the press's doing.
    write(FOCUS_LOC, target);
  }
}

/**
 * Runs native `f` (a focus-moving method called by page code) as a read of the focus and,
 * when the focused element changed, a write of it, both at the call's position.
 */
function focusCall(self, name, f, args) {
  const p = REC ? callPos(self, name) : undefined;
  if (REC) read(FOCUS_LOC, undefined, false, p);
  if (name === 'focus') focusCauses(self);
  const before = focusedNow();
  focusCalls++;
  depth++;
  try {
    return rApply(f, self, args);
  } finally {
    depth--;
    focusCalls--;
    if (REC) {
      const after = focusedNow();
      if (after !== before) write(FOCUS_LOC, after, p);
    }
  }
}

/**
 * Wraps the natives that move focus synchronously: `focus()`/`blur()` of HTML, SVG and MathML
 * elements, and dialogs and popovers, which focus their `autofocus` element (or restore the
 * previous focus when they close). Their focus events run nested in the caller's action.
 */
function installFocus() {
  if (!W) return;
  const wrap = (proto, name) => {
    const f = proto ? proto[name] : undefined;
    if (typeof f !== 'function' || !hasOwn(proto, name)) return;
    patch(proto, name, function () {
      if (passive()) return rApply(f, this, arguments);
      return focusCall(this, name, f, arguments);
    });
  };
  for (const C of [G.HTMLElement, G.SVGElement, G.MathMLElement]) {
    if (!C) continue;
    wrap(C.prototype, 'focus');
    wrap(C.prototype, 'blur');
  }
  if (G.HTMLElement) {
    for (const n of ['showPopover', 'hidePopover', 'togglePopover']) wrap(HTMLElement.prototype, n);
  }
  if (G.HTMLDialogElement) {
    for (const n of ['show', 'showModal', 'close', 'requestClose']) wrap(HTMLDialogElement.prototype, n);
  }
  if (!REC || !DocP) return;
  // `document.hasFocus()` asks whether the document has the focus.
  const nHasFocus = DocP.hasFocus;
  if (typeof nHasFocus === 'function') {
    patch(DocP, 'hasFocus', function () {
      const r = rApply(nHasFocus, this, arguments);
      if (this === DOCUMENT) read(FOCUS_LOC, undefined, false, callPos(this, 'hasFocus'));
      return r;
    });
  }
}
