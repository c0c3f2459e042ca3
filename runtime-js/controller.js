// controller.js — event actions, happens-before arcs, object numbers, value summaries, the `T`
// object used by access.js, and the one mechanism that runs, holds, discards or schedules every
// callback the runtime wraps.
//
// Actions. An action is one turn of the event loop: it begins when the browser enters a callback
// we wrapped (timer, listener, XHR/fetch settlement, observer, ...) or when our access hooks see
// code with no open action (a script the parser runs, a host task we do not wrap). Microtasks
// that run after the callback belong to the same turn, so an action is not ended when the
// callback returns: it is ended (1) by a marker message posted on a private MessageChannel when
// the action begins — that task runs after the current task and all its microtasks — or (2) when
// the next action begins, whichever comes first. In repair mode no marker is posted (nothing is
// traced; policies only need the order of beginnings).
//
// Nesting. Callbacks the page triggers synchronously (dispatchEvent, click(), focus(), sync XHR)
// run inside the current action: `depth` counts wrapped calls on the stack and untrusted events
// always come from page code, so both mean "nested".
//
// Identity. Every action has a dense trace id (execution order) and a stable id built from its
// creator's stable id, its kind, an optional URL/target path and its ordinal among the creator's
// children of that kind and path: `doc/timer#2/xhr@/api/items#1/load#1`.
//
// Control. Every wrapped callback goes through `runTask(desc, fn, self, args)`. When a decider is
// installed (`__shepherd.control(secret).policy(f)`), `f(desc)` answers 'run', 'hold' or
// 'discard'. Held callbacks are kept with their descriptor and run later, each in a task of its
// own, by `release(hid)`; `follow([stable ids])` holds everything and releases callbacks in the
// given order. DOM events are held by stopping them at the window capture listener and
// dispatching a copy on release (events.js); promise settlements by delaying the promise we
// return (network.js).

const MARKERS = REC;
const ROOT = { id: -1, stable: 'doc', kids: objCreate(null) };

let cur = -1; // dense id of the open action, -1 when none
let nOps = 0; // operations (r, w, e, x, !) the open action has logged: where a late one goes
let info = null; // the open action: {id, stable, kids, script, ev, scoped (open scopes), kind, label, pos}
let nextAction = 0;
let depth = 0;
// A location's entry: {l: its name, s: its string number (-1 until first logged), r, w: the
// actions that last logged a read and a write of it, o: the record of the object whose field
// it is (objEntry) or null, and what is kept to be logged late ("Accesses logged late",
// below)}. An action logs the first read and the first write of each location:
// comparing with `cur` needs no set to clear at every action, and a name's number is looked
// up once, not at every action. `locs` holds the entries of names built as strings (read(),
// write(), the wrappers) by name; an object's fields have theirs in the object's record
// (objEntry), shared with `locs` where a wrapper builds the same name.
const locs = objCreate(null);
let nTaskSeq = 0; // registration order of forked callbacks (timer FIFO)
const counters = { actions: 0, held: 0, discarded: 0, exceptions: 0 };

// ---- object numbers and location names ------------------------------------------------------

// Object -> {n: its number, c: the class part of its names (undefined until first needed),
// k: the entries of its fields by key, null until first needed, t: the entry of a node's
// existence (`NodeTree:<n>`, treeEntry), a: the one action that has touched its fields
// (NO_ACTION before the first, SHARED once a second has)}. An
// instrumented access of a key already named builds no string and looks nothing up in a
// table that grows with the page; the entries go with their object.
const oids = new NativeWeakMap();
let nextOid = 0;
const NO_ACTION = -1;
const SHARED = -2;
// Whether the fields of an object one action alone has touched are logged late ("Accesses
// logged late", below). Workers log as they go: their records are relayed into the page's
// actions (workers.js).
const LATE = REC && !WORKER_SCOPE;
/** The record of object `o`, allocated on first sight. */
function orec(o) {
  let r = wmGet(oids, o);
  if (r === undefined) {
    r = { n: nextOid++, c: undefined, k: null, t: null, a: LATE ? NO_ACTION : SHARED };
    wmSet(oids, o, r);
  }
  return r;
}
/** Per-document object number (docs/trace-format.md), allocated on first sight. */
function oid(o) {
  return orec(o).n;
}
if (W) oid(W); // Window[0]
const DOCUMENT = G.document || null;
const DOC_OID = DOCUMENT ? oid(DOCUMENT) : -1; // Document[1]
// The runtime's wrappers also name the document's fields as strings (`Document[1].cookie`):
// its accesses are logged as they happen.
if (DOCUMENT) orec(DOCUMENT).a = SHARED;
const OWN_SCRIPT = DOCUMENT && docCurrentScript ? docCurrentScript(DOCUMENT) : null;

function isNode(o) {
  return NodeP !== null && o !== null && (typeof o === 'object' || typeof o === 'function') &&
    inherits(o, NNode);
}

/** `Window`, `Document`, `BUTTON`, `XMLHttpRequest`, ...: the class part of a target label. */
function targetClass(t) {
  if (t === W) return 'Window';
  if (t === DOCUMENT) return 'Document';
  if (isNode(t)) {
    try {
      return nodeName(t);
    } catch (_) {
      return 'Node';
    }
  }
  return className(t);
}

function className(o) {
  return objClass(o);
}

/**
 * `DOMNode`, `Array` (arrays only) or the class name of object `o`, whose record is `r`:
 * computed at first need (objClass walks the prototype chain), then the same for the life of
 * the object.
 */
function classOf(o, r) {
  let c = r.c;
  if (c === undefined) {
    let array = false;
    try {
      array = isArray(o);
    } catch (_) {
      array = false; // a revoked Proxy
    }
    c = array ? 'Array' : isNode(o) ? 'DOMNode' : objClass(o);
    // `Array[n]` names arrays only (their cells are `$[i]`), not an object tagged 'Array'.
    if (!array && c === 'Array') c = 'Object';
    r.c = c;
  }
  return c;
}

/** `BUTTON[7]`: the label of an event target in scope labels and listener-list locations. */
function targetLabel(t) {
  const n = oid(t);
  if (described[n] !== 1 && t !== W && isNode(t)) nameNode(t, n);
  return targetClass(t) + '[' + n + ']';
}

// `on<type>` properties of event targets that the runtime wraps (events.js fills this): a
// page's `el.onclick = f` is a write of the listener list `BUTTON[7].click`, the location every
// dispatch reads, not a property of its own.
const HANDLER_NAMES = objCreate(null);
// Properties whose write replaces a node's children: the node's child list (dom.js).
const CHILD_PROPS = objCreate(null);
CHILD_PROPS.innerHTML = 1;
CHILD_PROPS.textContent = 1;
CHILD_PROPS.innerText = 1;

/** The child list location of node `n` (written by every change of its children). */
function childLoc(n) {
  return 'DOMNode[' + oid(n) + '].childList';
}

/** The entry (`locs`) of location name `loc`. */
function locOf(loc) {
  let e = locs[loc];
  if (e === undefined) {
    e = newEntry(loc, null, NAMED);
    locs[loc] = e;
  }
  return e;
}

/** A location entry (see `locs`): named `loc`, or a field of the object whose record is `o`. */
function newEntry(loc, o, form) {
  return {
    l: loc, s: -1, r: -1, w: -1, o, f: form,
    // What is kept to be logged late: the read's place (nOps then, -1 when none), `lv`'s
    // bits (READ_VALUE: 0 no value logged, 1 undefined, 2 null; WRITE_SUMMARISED: `wv` is
    // the summary already; WRITE_FIRST: the write came first when both go at one place) and
    // position; the write's place, value and position.
    lr: -1, lv: 0, lp: undefined, lw: -1, wv: undefined, wp: undefined,
  };
}

// `f` of an entry: NAMED when `l` is its name; a field's entry keeps its key in `l` and the
// form of its name until first logged (fieldName): most fields never are.
const NAMED = -1;
const FIELD = 0; // `Object[3].key`
const CELL = 1; // `Array[4]$[0]`
const LENGTH = 2; // `Array[4]$LEN`
const TREE = 3; // `NodeTree:5`
const READ_VALUE = 3;
const WRITE_SUMMARISED = 4;
const WRITE_FIRST = 8;

/** The string number of the name of entry `e`, defined in the trace on first use. */
function entrySid(e) {
  const s = e.s;
  if (s >= 0) return s;
  const o = e.o;
  if (o === null) return (e.s = sid(e.l));
  if (e.f !== NAMED) {
    e.l = fieldName(o, e.f, e.l);
    e.f = NAMED;
  }
  // A field's name is new by construction (its object's number is).
  return (e.s = defineStr(e.l));
}

/** The name of field `key` of the object whose record is `r`, in form `f`. */
function fieldName(r, f, key) {
  if (f === TREE) return 'NodeTree:' + r.n;
  if (f === LENGTH) return 'Array[' + r.n + ']$LEN';
  if (f === CELL) return 'Array[' + r.n + ']$[' + NativeString(key) + ']';
  return r.c + '[' + r.n + '].' + NativeString(key);
}

// Scope instance -> its record, shaped like an object's (`n`: the instance's number, `c`:
// `Scope`), so a captured variable's entry is found without building its name, and the
// variables of an activation that one action alone touched are logged late like an object's
// fields ("Accesses logged late"). Instances are numbered densely by `__shepherd.s()`.
const scopeRecs = [];

/** The entry of variable `name` of scope instance `s` (`Scope[<s>].<name>`). */
function scopeEntry(s, name) {
  let r = scopeRecs[s];
  if (r === undefined) {
    r = { n: s, c: 'Scope', k: null, t: null, a: LATE ? NO_ACTION : SHARED };
    scopeRecs[s] = r;
  }
  const e = keptEntry(r, name);
  return e !== undefined ? e : keepEntry(r, name, newEntry(name, r, FIELD));
}

/**
 * The entry of node `node`'s existence (`NodeTree:<n>`: written by the action that creates or
 * inserts it, read by its events and, for a script, its execution). Kept in the node's record
 * like a field, so a node no second action touches is never logged ("Accesses logged late").
 */
function treeEntry(node) {
  const r = orec(node);
  let e = r.t;
  if (e === null) {
    e = newEntry(null, r, TREE);
    r.t = e;
  }
  return e;
}

/** The entry record `r` (an object's or a scope's) keeps for `key`, or undefined. */
function keptEntry(r, key) {
  const ks = r.k;
  return ks === null ? undefined : ks[key];
}

/** Keeps entry `e` for `key` in record `r`; returns `e`. */
function keepEntry(r, key, e) {
  let ks = r.k;
  if (ks === null) {
    ks = objCreate(null);
    r.k = ks;
  }
  ks[key] = e;
  return e;
}

// Global name -> the entry of `Global.<name>`, for the same reason as the objects' `k`.
const globalLocs = objCreate(null);

/** The entry of global `name` (a property of the global object, or a global binding). */
function globalEntry(name) {
  const e = globalLocs[name];
  return e !== undefined ? e : (globalLocs[name] = locOf('Global.' + NativeString(name)));
}

/** The entry of property `key` of `obj` (its name: docs/trace-format.md, "Location names"). */
function objEntry(obj, key) {
  if (obj === G || obj === W) return globalEntry(key);
  const r = orec(obj);
  const e = keptEntry(r, key);
  return e !== undefined ? e : keepEntry(r, key, nameEntry(obj, r, key));
}

// The entry objEntry() keeps for `key` of `obj`. Everything its name depends on is fixed once
// the object is first named: its number and class, and the wrapped `on<type>` names (filled
// at load, before any page script runs). The names the runtime's wrappers also build as
// strings (a target's listener list, a node's child list, the focused element) share their
// entry through `locs`; the others only objEntry() makes, and they stay out of `locs`: a page
// that makes many objects pays one table insert less for each of their fields.
function nameEntry(obj, r, key) {
  if (obj === DOCUMENT && key === 'activeElement') return locOf(FOCUS_LOC); // focus.js
  if (typeof key === 'string' && HANDLER_NAMES[key] === 1 && NEventTarget !== null &&
    obj instanceof NEventTarget) {
    return locOf(targetLabel(obj) + '.' + strSlice(key, 2));
  }
  const n = r.n;
  const c = classOf(obj, r);
  if (c === 'Array') {
    return newEntry(key, r, key === 'length' ? LENGTH : CELL);
  }
  if (c === 'DOMNode') {
    if (described[n] !== 1) nameNode(obj, n);
    if (typeof key === 'string' && CHILD_PROPS[key] === 1) return locOf(childLoc(obj));
  }
  return newEntry(key, r, FIELD);
}

// ---- Accesses logged late ------------------------------------------------------------------------
//
// A race needs two actions that access one location. The fields of an object that one action
// alone has touched cannot race yet, so their reads and writes are not logged when they
// happen: each entry keeps its action's first read and first write (what the records would
// have said, and where: the number of operations the action had logged). The first access
// by another action logs them (`["R",A,I,…]`, `["W",A,I,…]`: docs/trace-format.md,
// "Late operations"), and from then on the object's accesses are logged as they happen. An
// object no second action touches costs no record at all: most objects a page makes (parsed
// responses, arrays built and read in one handler, elements filled before insertion) are
// used by the action that made them only. The captured variables of an activation (a scope
// instance, `scopeEntry`) and a node's existence (`treeEntry`: most nodes a script inserts
// are replaced before anything else touches them) are logged late the same way. A second action that touches the
// object only through the browser (a native method, the DOM) logs nothing, now as before.

/**
 * Whether the current access of a field of the object whose record is `o` is to be logged
 * late: the object is the current action's alone. An access by a second action logs what
 * the first kept and makes the object shared.
 */
function alone(o) {
  const a = o.a;
  if (a === cur) return true;
  if (a === SHARED) return false;
  if (a === NO_ACTION) {
    o.a = cur;
    return true;
  }
  share(o, a);
  return false;
}

/** Logs the accesses action `a` kept for the fields of the object whose record is `o`. */
function share(o, a) {
  o.a = SHARED;
  if (o.t !== null) shareEntry(o, a, o.t);
  const ks = o.k;
  if (ks !== null) {
    const keys = ownKeys(ks);
    for (let i = 0; i < keys.length; i++) shareEntry(o, a, ks[keys[i]]);
  }
  spill();
}

/** Logs what entry `e` of the object whose record is `o` kept for action `a`. */
function shareEntry(o, a, e) {
  if (e.o !== o) return; // a name the wrappers build too (`locs`)
  const lr = e.lr;
  const lw = e.lw;
  if (lr < 0 && lw < 0) return;
  e.lr = -1;
  e.lw = -1;
  const l = entrySid(e);
  if (lw >= 0 && (lr < 0 || lw < lr || (lw === lr && (e.lv & WRITE_FIRST) !== 0))) {
    lateWrite(e, l, a, lw);
    if (lr >= 0) lateRead(e, l, a, lr);
  } else {
    lateRead(e, l, a, lr);
    if (lw >= 0) lateWrite(e, l, a, lw);
  }
  e.wv = undefined;
}

function lateRead(e, l, a, at) {
  const rv = e.lv & READ_VALUE;
  const v = rv === 0 ? -1 : sid(rv === 2 ? 'null' : 'undefined');
  const ps = e.lp === undefined ? -1 : posSid(e.lp);
  const head = '["R",' + a + ',' + at + ',' + l;
  if (ps >= 0) out += head + ',' + (v >= 0 ? v : 'null') + ',' + ps + ']\n';
  else if (v >= 0) out += head + ',' + v + ']\n';
  else out += head + ']\n';
}

function lateWrite(e, l, a, at) {
  const v = sid((e.lv & WRITE_SUMMARISED) !== 0 ? e.wv : summary(e.wv));
  const ps = e.wp === undefined ? -1 : posSid(e.wp);
  out += '["W",' + a + ',' + at + ',' + l + ',' + v + (ps >= 0 ? ',' + ps : '') + ']\n';
}

/** Short value summary (docs/trace-format.md, "Value summaries"). */
function summary(v) {
  switch (typeof v) {
    case 'undefined':
      return 'undefined';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      return NativeString(v);
    case 'bigint':
      return NativeString(v) + 'n';
    case 'string':
      if (v.length <= 40) return jsonStr(v);
      return strSlice(jsonStr(strSlice(v, 0, 40)), 0, -1) + '\u2026"';
    case 'symbol':
      return 'Symbol';
    case 'function': {
      const name = fnName(v);
      return 'Function[' + oid(v) + ']' + (name ? ':' + name : '');
    }
    default: {
      if (v === null) return 'null';
      const r = orec(v);
      return classOf(v, r) + '[' + r.n + ']';
    }
  }
}

// ---- actions ------------------------------------------------------------------------------------

/** Stable id of the next child of `parent` with this kind (and URL/target path). */
function childStable(parent, kind, path) {
  const key = path === undefined || path === '' ? kind : kind + '@' + path;
  const kids = parent.kids;
  const n = (kids[key] || 0) + 1;
  kids[key] = n;
  let base = parent.stable;
  if (base.length > 160) base = '~' + hash32(base);
  return base + '/' + key + '#' + n;
}

function hash32(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= strCharCode(s, i);
    h = (h * 0x01000193) >>> 0;
  }
  return numToString(h, 16);
}

/** The action that new forks hang from: the open action, or the document root. */
function parentInfo() {
  return info !== null ? info : ROOT;
}

/**
 * A descriptor for a callback forked by the current action: what decide() sees and what
 * begin() writes. `type` is EventRacer's action type code. `inside`: its callbacks run inside
 * the forking call (a synchronous XHR's events), so it is no event a repair policy can order
 * or wait for: nothing of it would ever arrive.
 */
function forkDesc(type, kind, path, delay, inside) {
  ensure();
  const p = parentInfo();
  const d = {
    hid: 0,
    type,
    kind,
    stable: childStable(p, kind, path),
    label: '',
    from: cur,
    delay,
    joins: null,
    url: path,
    seq: nTaskSeq++,
    parent: p,
    // Timer callbacks that led to the forking action (its events count from it: an XHR's).
    timers: p.timers !== undefined ? p.timers : 0,
  };
  if (repairOn && inside !== true) repairFork(d);
  return d;
}

/**
 * Repair mode with no policy installed: wrappers call the natives straight away (nothing to
 * trace, nothing to decide), which keeps the overhead near zero. A policy is installed by the
 * script the proxy injects right after the runtime, before any page script.
 */
function passive() {
  return !REC && decider === null && !repairOn;
}

/** Whether callbacks are decided on (a decider installed, or a repair policy enforced). */
function deciding() {
  return decider !== null || repairOn;
}

/** Begins action `d` (ending the open one): writes `b`, its arcs and its scope. */
function begin(d) {
  if (pendLoc !== null) flushPend();
  if (cur >= 0) end();
  const id = nextAction++;
  counters.actions++;
  cur = id;
  changed();
  const up = d.parent !== null && d.parent !== undefined && d.parent.timers > 0 ? d.parent.timers : 0;
  info = {
    id, stable: d.stable, kids: objCreate(null), script: null, ev: null, scoped: 0, kind: d.kind,
    label: d.label, pos: !!d.pos, pev: d.pev,
    // Timer callbacks in the chain of forks that led here, this one included (timers.js).
    timers: up + (d.kind === 'timer' || d.kind === 'interval' ? 1 : 0),
  };
  d.action = id;
  if (repairOn || d.heldAt !== undefined) repairBegan(d);
  if (REC) {
    const k = sid(d.kind);
    const st = sid(d.stable);
    out += '["b",' + id + ',' + d.type + ',' + k + ',' + st + ']\n';
    nOps = 0;
    const from = d.from;
    if (from >= 0 && from < id) {
      out += '["a",' + from + ',' + id + ',"f"' + (d.delay !== undefined && d.type === 1 ? ',' + d.delay : '') + ']\n';
    }
    const js = d.joins;
    if (js !== null) {
      for (let i = 0; i < js.length; i++) {
        const j = js[i];
        if (j >= 0 && j < id && j !== from) out += '["a",' + j + ',' + id + ',"j"]\n';
      }
    }
    // A worker's delivery from its creator or parent: resolved by the page (workers.js).
    if (d.wq !== undefined) out += '["F",' + jsonStr(d.wq) + ']\n';
    if (autoExplore && d.type === 2) markScope('auto:explore');
    if (d.label) {
      const lb = sid(d.label);
      const ps = d.pos ? ',' + sid(d.pos) : ''; // the script's own position (script actions)
      out += '["e",' + lb + ps + ']\n';
      nOps++;
      info.scoped = 1;
    }
    if (d.queue !== undefined) {
      // A delivery from a FIFO queue (EM-DPOR's queue order, docs/trace-format.md).
      const qe = locOf(d.queue);
      const q = entrySid(qe);
      out += '["r",' + q + ']\n';
      nOps++;
      qe.r = id;
    }
  }
  if (MARKERS) marker(id);
  return info;
}

/**
 * An empty scope in the open action: a mark for tools (`auto:explore`, the key of a key event)
 * that the analysis reads as a label and ignores otherwise.
 */
function markScope(label) {
  if (!REC || cur < 0) return;
  const s = sid(label); // sid() may append a definition to `out` first
  out += '["e",' + s + ']\n["x"]\n';
  nOps += 2;
}

/** Ends the open action. */
function end() {
  if (cur < 0) return;
  if (pendLoc !== null) flushPend();
  if (REC) {
    if (pendingNodes.length > 0) describePending(false);
    for (let i = 0; i < info.scoped; i++) out += '["x"]\n';
    out += '["n",' + cur + ']\n';
  }
  cur = -1;
  info = null;
  changed();
  maybeFlush(FORWARD);
}

// End-of-turn marker: runs after the task that began the action and all its microtasks. A
// `user-blocking` scheduler task runs before the browser's ordinary tasks that were already
// queued (a host task settling a promise, a posted message), so what they run is not taken
// for a part of the action that has just finished; a MessageChannel message where the
// scheduler API is missing.
let markerPort = null;
const schedulerObj = G.scheduler;
const nPostTask = schedulerObj && typeof schedulerObj.postTask === 'function' ? uncurry(schedulerObj.postTask) : null;
const MARKER_TASK = { priority: 'user-blocking' };
if (MARKERS && nPostTask === null) {
  const mc = new NMessageChannel();
  markerPort = mc.port2;
  const dataGet = getterOf(MessageEvent.prototype, 'data');
  portOnMessageSet(mc.port1, (e) => {
    if (cur === dataGet(e)) end();
  });
}

/** Arranges for action `id` to end after its turn. */
function marker(id) {
  if (nPostTask !== null) {
    nPostTask(schedulerObj, () => {
      if (cur === id) end();
    }, MARKER_TASK);
  } else {
    portPost(markerPort, id);
  }
}

// A new script can only start on an empty stack, after a microtask checkpoint: checking
// currentScript once per synchronous run (until our queued microtask clears the flag) is
// enough, and keeps instrumented code's hot path free of DOM getter calls.
let scriptChecked = false;
function clearScriptChecked() {
  scriptChecked = false;
}

/** Makes sure code that is running now belongs to an action (see "Actions" above). */
function ensure() {
  if (depth === 0 && !scriptChecked && docCurrentScript !== null && DOCUMENT !== null) {
    scriptChecked = true;
    rApply(nQueueMicrotask, G, [clearScriptChecked]);
    const cs = docCurrentScript(DOCUMENT);
    if (cs !== null && cs !== OWN_SCRIPT && (info === null || info.script !== cs)) {
      beginScript(cs);
      return;
    }
  }
  if (cur < 0) {
    begin({ type: 0, kind: 'task', stable: childStable(ROOT, 'task'), label: '', from: -1, delay: undefined, joins: null });
  }
}

// ---- access logging (T.read / T.write) --------------------------------------------------------

/**
 * Logs the first read of `loc` by the current action; the value only when undefined/null.
 * `p` is the instrumented code's position number (access.js): decoded, through `T.pos`, only
 * for the record written, as `["r",L,V|null,P]`.
 */
function read(loc, value, hasValue, p) {
  if (REC) readEntry(locOf(loc), value, hasValue, p);
}

/** read() of the location whose entry is `e` (objEntry, globalEntry). */
function readEntry(e, value, hasValue, p) {
  if (!REC) return;
  if (pendLoc !== null) flushPend();
  ensure();
  if (e.r === cur) return;
  e.r = cur;
  const o = e.o;
  if (o !== null && alone(o)) {
    e.lr = nOps;
    e.lv = (e.lv & ~READ_VALUE) | (hasValue && (value === undefined || value === null) ? (value === null ? 2 : 1) : 0);
    e.lp = p;
    return;
  }
  const l = entrySid(e);
  const v = hasValue && (value === undefined || value === null) ? sid(value === null ? 'null' : 'undefined') : -1;
  const ps = p === undefined ? -1 : posSid(p);
  if (ps >= 0) out += '["r",' + l + ',' + (v >= 0 ? v : 'null') + ',' + ps + ']\n';
  else if (v >= 0) out += '["r",' + l + ',' + v + ']\n';
  else out += '["r",' + l + ']\n';
  nOps++;
  spill();
}

/** Logs the first write of `loc` by the current action with a summary of `value`. */
function write(loc, value, p) {
  if (REC) writeEntry(locOf(loc), value, p);
}

/** write() of the location whose entry is `e` (objEntry, globalEntry). */
function writeEntry(e, value, p) {
  if (!REC) return;
  if (pendLoc !== null) {
    if (pendLoc === e) {
      // The instrumented code's own log of the setter's write, with its position.
      pendLoc = null;
      ensure();
      emitWrite(e, value, p);
      afterPend(p);
      return;
    }
    flushPend();
  }
  ensure();
  emitWrite(e, value, p);
}

function emitWrite(e, value, p) {
  if (e.w === cur) return;
  e.w = cur;
  const o = e.o;
  if (o !== null && alone(o)) {
    e.lw = nOps;
    // An object (and a long text) is summarised now: its summary names the number and class
    // it has now, and the entry keeps no reference to what the page may drop. Short
    // primitives are kept as they are (no text made for a write that may never be logged).
    const t = typeof value;
    const now = (t === 'object' && value !== null) || t === 'function' || (t === 'string' && value.length > 40);
    e.wv = now ? summary(value) : value;
    e.lv = (e.lv & READ_VALUE) | (now ? WRITE_SUMMARISED : 0) | (e.lr !== nOps ? WRITE_FIRST : 0);
    e.wp = p;
    return;
  }
  const l = entrySid(e);
  const v = sid(summary(value));
  const ps = p === undefined ? -1 : posSid(p);
  out += '["w",' + l + ',' + v + (ps >= 0 ? ',' + ps : '') + ']\n';
  nOps++;
  spill();
}

// A write a wrapped setter made (`el.onclick = f`, `el.innerHTML = s`): instrumented code logs
// the same location right after the native assignment returns, with its source position, so
// the setter's write waits for the next record and is dropped when that record is this write.
// `after(p)`, when given, logs what the write implies once the write itself is in the trace
// (at position `p`, the instrumented caller's, when it logged the write).
let pendLoc = null; // the entry of the location written
let pendVal;
let pendAfter = null;

/**
 * Logs a write of the location whose entry is `e` (locOf, objEntry) by a wrapped setter,
 * unless the instrumented caller logs it next.
 */
function deferWrite(e, value, after) {
  if (!REC) return;
  if (pendLoc !== null) flushPend();
  ensure();
  pendLoc = e;
  pendVal = value;
  pendAfter = after === undefined ? null : after;
}

function flushPend() {
  const l = pendLoc;
  const v = pendVal;
  pendLoc = null;
  pendVal = undefined;
  if (cur >= 0) emitWrite(l, v, undefined);
  afterPend(undefined);
}

/** Runs the pending write's `after(p)`, `p` the position its write was logged with. */
function afterPend(p) {
  const f = pendAfter;
  pendAfter = null;
  if (f !== null) f(p);
}

/**
 * The position of the instrumented call `self.name(…)` running now, or undefined: wrappers of
 * natives log their accesses at the call's position rather than at the script's. access.js
 * records the receiver, key and position of the last CALL_RING `__shepherd.b` calls (the
 * arguments of a call may make calls of their own after its `b`).
 */
function callPos(self, name) {
  const c = T.calls;
  for (let n = 0, i = c.i; n < CALL_RING; n++, i = (i + CALL_RING - 1) % CALL_RING) {
    if (c.o[i] === self && c.k[i] === name) {
      c.o[i] = null;
      return c.p[i];
    }
  }
  return undefined;
}
const CALL_RING = 4;

/** String number of the position text of `p` (`url:line:col`), -1 when unknown. */
function posSid(p) {
  const f = T.pos;
  if (typeof f !== 'function') return -1;
  const s = f(p);
  return typeof s === 'string' ? sid(s) : -1;
}

/** Like write(), with the value summary already computed (`Timer[3]`, `DOMTimer[…]`). */
function writeS(loc, text) {
  if (!REC) return;
  if (pendLoc !== null) flushPend();
  ensure();
  const e = locOf(loc);
  if (e.w === cur) return;
  e.w = cur;
  const l = entrySid(e);
  const v = sid(text);
  out += '["w",' + l + ',' + v + ']\n';
  nOps++;
}

/** Logs an exception that escaped to the event loop. */
function exception(message, pos) {
  counters.exceptions++;
  if (!REC) return;
  if (pendLoc !== null) flushPend();
  ensure();
  const m = sid(NativeString(message));
  const p = pos ? ',' + sid(pos) : '';
  out += '["!",' + m + p + ']\n';
  nOps++;
}

// ---- the run / hold / discard mechanism ---------------------------------------------------------

const RUN = 'run';
const HOLD = 'hold';
const DISCARD = 'discard';
let decider = null; // (desc) => 'run' | 'hold' | 'discard'
// A compiled repair policy is enforced (repair.js); false again once nothing is left to do.
let repairOn = false;
// Set while a driver fires random user events: those actions get an `auto:explore` scope so the
// analysis does not treat the driver's arbitrary order as an ordering the page relies on.
let autoExplore = false;
// Set by the explorer: callbacks the decider holds are held when registered, not when their
// native timer or frame fires (timers.js), so every enabled event is known without waiting.
let virtualTime = false;
let nextHid = 1;
const held = objCreate(null); // hid -> {desc, go}
// When what `stats()` reports as the page's state (actions, the open one, held callbacks) last
// changed, on the native clock: a tool polling for a quiet page learns how long it has been
// quiet from one poll instead of two polls `idle` apart.
let lastChange = perfNow();

function perfNow() {
  return nPerfNow !== null && perfObj ? nPerfNow(perfObj) : 0;
}

function changed() {
  lastChange = perfNow();
}
let heldCount = 0;
let schedule = null; // stable ids to release in this order (follow mode)
let schedPos = 0;

/**
 * Asks the repair policy, then the installed decider, about `d`. What the policy postpones or
 * discards stays the policy's: the decider (the explorer) sees the event only once the policy
 * lets it go (`go` in runTask asks it then), so exploring under a policy explores the orders
 * the policy allows. Errors in either never break the page.
 */
function decide(d) {
  let r = RUN;
  if (repairOn && d.released !== true) {
    try {
      r = repairDecide(d);
    } catch (e) {
      r = RUN;
    }
  }
  if (r !== RUN) return r;
  return askDecider(d);
}

/** The explorer's decider (`control.explorerMode()`). */
function explorerDecides(d) {
  return d.user || d.kind === 'event:pagereveal' || d.kind === 'event:progress' ? RUN : HOLD;
}

/** The installed decider's answer for `d` (RUN when none); a HOLD is the decider's own. */
function askDecider(d) {
  if (decider === null) return RUN;
  let x = RUN;
  try {
    x = decider(publicDesc(d));
  } catch (e) {
    x = RUN;
  }
  if (x === HOLD) d.rep = false; // held for the decider: the policy does not release it
  return x === HOLD || x === DISCARD ? x : RUN;
}

function publicDesc(d) {
  return {
    hid: d.hid,
    type: d.type,
    kind: d.kind,
    stable: d.stable,
    label: d.label,
    from: d.from,
    delay: d.delay,
    url: d.url,
    user: d.type === 2,
  };
}

/** Keeps `go` (which runs the held callback as a fresh action) until released or discarded. */
function hold(d, go) {
  d.hid = nextHid++;
  held[d.hid] = { desc: d, go: d.rep === true ? () => policyLetGo(d, go) : go };
  heldCount++;
  counters.held++;
  changed();
  if (d.rep === true) repairHeld(d);
  if (schedule !== null) rApply(nQueueMicrotask, G, [advanceSchedule]);
  return d.hid;
}

/**
 * The policy lets `d` go. An installed decider (the explorer under a policy) decides now, and
 * may hold it again (as its own) or discard it; with none, it runs.
 */
function policyLetGo(d, go) {
  const x = askDecider(d);
  if (x === HOLD) {
    hold(d, go);
  } else if (x === DISCARD) {
    counters.discarded++;
  } else {
    go();
  }
}

/**
 * Released callbacks whose task has not ended yet. A tool waiting for a released callback's
 * effects learns from this that it has run, however late the task came: one that changed
 * nothing it can see (a load with no listener left) looks the same before and after.
 */
let releasing = 0;

/** Runs held callback `hid` in a task of its own. False when no such callback is held. */
function release(hid) {
  const h = held[hid];
  if (h === undefined) return false;
  delete held[hid];
  heldCount--;
  runSoon(h.go);
  return true;
}

/** Runs `go` in a task of its own, counted in `releasing` until that task's callback ends. */
function runSoon(go) {
  releasing++;
  changed();
  rApply(nSetTimeout, G, [
    () => {
      try {
        go();
      } finally {
        releasing--;
        changed();
      }
    },
    0,
  ]);
}

function discardHeld(hid) {
  const h = held[hid];
  if (h === undefined) return false;
  delete held[hid];
  heldCount--;
  changed();
  counters.discarded++;
  return true;
}

function advanceSchedule() {
  if (schedule === null) return;
  while (schedPos < schedule.length) {
    const want = schedule[schedPos];
    let found = 0;
    for (const k in held) {
      if (held[k].desc.stable === want) {
        found = +k;
        break;
      }
    }
    if (found === 0) return;
    schedPos++;
    release(found);
    return; // the next one is released once this one has run (it re-enters via afterRun)
  }
}

/**
 * Runs `fn` as the action described by `d`, or holds/discards it per the decider.
 * Returns the callback's result when it ran synchronously.
 */
function runTask(d, fn, self, args) {
  if (deciding() && d.released !== true) {
    const r = decide(d);
    if (r === HOLD) {
      hold(d, () => {
        d.released = true;
        execute(d, fn, self, args);
      });
      return undefined;
    }
    if (r === DISCARD) {
      counters.discarded++;
      return undefined;
    }
  }
  return execute(d, fn, self, args);
}

function execute(d, fn, self, args) {
  begin(d);
  depth++;
  try {
    return rApply(fn, self, args);
  } finally {
    depth--;
    if (schedule !== null) rApply(nQueueMicrotask, G, [advanceSchedule]);
  }
}

/** Calls a page function nested in the current action (wrapped natives that run page code). */
function nested(fn, self, args) {
  depth++;
  try {
    return rApply(fn, self, args);
  } finally {
    depth--;
  }
}

// ---- the control surface -------------------------------------------------------------------------

/**
 * `shape` of each held callback's descriptor that the caller may release, oldest first. What
 * the repair policy postpones is not the caller's to release: it is listed once the policy
 * lets it go (and the decider holds it).
 */
function listHeld(shape) {
  const list = [];
  for (const k in held) if (held[k].desc.rep !== true) list[list.length] = shape(held[k].desc);
  return list;
}

const control = freeze({
  /** Installs the decider (`null` removes it and runs everything). */
  policy(f) {
    decider = typeof f === 'function' ? f : null;
    return true;
  },
  /**
   * Stops navigations away from the page (true) or lets them go (false); each stopped one is a
   * `navigation` action forked by its cause (navigation.js).
   */
  blockNavigations(on) {
    blockingNav = !!on;
    return true;
  },
  /**
   * Records what a tool exercising the page reached: `[{path, offered, done}]`, controls by
   * stable path with their gestures (comma-separated names), as the trace's `c` records
   * (coverage.js). Returns how many controls of this document were recorded.
   */
  coverage(list) {
    return recordCoverage(list);
  },
  /** The navigations stopped so far: `{url, kind, blocked, stable, cause}`, oldest first. */
  navigations() {
    const list = [];
    for (let i = 0; i < blockedNavs.length; i++) {
      const n = blockedNavs[i];
      list[i] = { url: n.url, kind: n.kind, blocked: n.blocked, stable: n.stable, cause: n.cause };
    }
    return list;
  },
  /** Marks the user events that follow as auto-explored (true) or real (false). */
  explore(on) {
    autoExplore = !!on;
    return true;
  },
  /**
   * Virtual time: timeouts, interval ticks, animation frames and idle callbacks that the decider
   * holds are held as soon as they are registered (their delay is virtual), and clearing them
   * discards them (they leave `pending()`).
   */
  virtualTime(on) {
    virtualTime = !!on;
    return true;
  },
  /**
   * Hands the page to the explorer: every callback is held (the user's own input runs, and so
   * do `pagereveal`, which the browser fires when it first renders, and network `progress`
   * events, which it throttles: both come whenever the browser decides, and pages rarely read
   * anything in them), with virtual time and navigations stopped. With `CONFIG.explorer` the
   * top-level document starts this way (boot.js).
   */
  explorerMode() {
    decider = explorerDecides;
    virtualTime = true;
    blockingNav = true;
    return true;
  },
  /** Holds every callback (true) or runs everything again (false; held ones stay held). */
  holdAll(on) {
    decider = on ? () => HOLD : null;
    return true;
  },
  /**
   * What a driver polls for, in one object: the document, the action count, the open action,
   * the held callbacks as `[hid, stable, kind]`, milliseconds unchanged, released callbacks
   * still to run and service workers registering. Built from the runtime's own lists: a driver
   * that listed `pending()` with `map` in the page's world used whatever `Array.prototype.map`
   * the page had put there, and could be shown fewer held callbacks than there are.
   */
  observe() {
    return {
      doc: DOC,
      actions: counters.actions,
      open: cur,
      held: listHeld((d) => [d.hid, d.stable, d.kind]),
      unchanged: perfNow() - lastChange,
      releasing,
      registering: registeringScripts(),
    };
  },
  /** Descriptors of the held callbacks, oldest first. */
  pending() {
    return listHeld(publicDesc);
  },
  release,
  discard: discardHeld,
  /** Releases the held callback with this stable id. */
  releaseStable(stable) {
    for (const k in held) if (held[k].desc.stable === stable) return release(+k);
    return false;
  },
  /** Follows a schedule: holds everything and releases callbacks in this stable-id order. */
  follow(list) {
    schedule = [];
    for (let i = 0; i < list.length; i++) schedule[i] = NativeString(list[i]);
    schedPos = 0;
    decider = () => HOLD;
    advanceSchedule();
    return true;
  },
  /** Where the schedule stands. */
  scheduleState() {
    return { position: schedPos, length: schedule === null ? 0 : schedule.length };
  },
  /** Figures for tests and tools. */
  stats() {
    return {
      actions: counters.actions,
      open: cur,
      held: heldCount,
      /** Milliseconds since `actions`, `open`, the held callbacks or `releasing` last changed. */
      unchangedMs: perfNow() - lastChange,
      /** Released callbacks whose task has not ended. */
      releasing,
      /** Service worker scripts whose `register()` has not settled (network.js). */
      registering: registeringScripts(),
      heldTotal: counters.held,
      discarded: counters.discarded,
      exceptions: counters.exceptions,
      strings: nStr,
      bufferChars: bufferedChars(),
      /** Flat pieces the buffer was taken out as in the middle of an action (trace.js, spill). */
      bufferPieces: spilled.length,
      pendingChars,
      droppedBatches,
      doc: DOC,
      mode: CONFIG.mode,
      postponed: rep.postponed,
      policyDiscarded: rep.discarded,
      /** Gestures and callbacks the policy holds, or released and still to run. */
      policyPending: repairPending(),
      /** XHR and fetch requests (and bodies being read) started and not ended. */
      requests: netPending,
      incidents: rep.incidents.length,
      repairActive: repairOn,
    };
  },
  /** The repair policy's figures for this document (postponed, discarded, delays, incidents). */
  repair() {
    return repairFigures();
  },
  /** Ends the open action and uploads everything; resolves when delivered. */
  flush() {
    beginNavigations();
    if (REC) describePending(true);
    end();
    return flushAndWait();
  },
  /** The stable id of the open action ('' when none). */
  current() {
    return info === null ? '' : info.stable;
  },
});

/** The object installed as the global `__shepherd` (access.js adds the instrumented-code API). */
const api = objCreate(null);
defProp(api, 'control', {
  value: function control_(secret) {
    return isOperator(secret) ? control : null;
  },
});
defProp(api, 'doc', { value: DOC, enumerable: true });
defProp(api, 'mode', { value: CONFIG.mode, enumerable: true });

/**
 * Instruments dynamic code through the proxy (synchronous XHR, docs/runtime-api.md): the
 * instrumented text, or null on any failure (the original then runs uninstrumented).
 */
function instrumentSync(src, kind) {
  if (!REC || !NXMLHttpRequest || nXhrOpen === null) return null;
  try {
    const x = new NXMLHttpRequest();
    const base = CONFIG.instrument || '/__shepherd/instrument';
    nXhrOpen(x, 'POST', base + '?t=' + encodeURIComponent(PAGE_TOKEN) + '&kind=' +
      encodeURIComponent(NativeString(kind)), false);
    nXhrSend(x, NativeString(src));
    return nXhrStatus(x) === 200 ? nXhrText(x) : null;
  } catch (_) {
    return null;
  }
}

/** Token for `await`: the action the suspension happens in. */
function await0() {
  return cur >= 0 ? cur : undefined;
}

/**
 * An `await` continuation resumes. Inside an open action it is one of that turn's microtasks;
 * with no open action the host resolved the promise in a task we do not see, so the
 * continuation is an action of its own, forked by the action that awaited.
 */
function await1(token) {
  if (cur >= 0 || typeof token !== 'number') return;
  beginContinuation(token, ROOT);
}

/** Begins a `continuation` action forked by action `from` (a child of `parent` for its id). */
function beginContinuation(from, parent) {
  begin({
    hid: 0, type: 4, kind: 'continuation', stable: childStable(parent, 'continuation', ''), label: '',
    from, delay: undefined, joins: null, url: undefined, seq: nTaskSeq++, parent,
  });
}

/** What access.js builds on (docs/runtime-api.md). */
const T = {
  read,
  write,
  readEntry,
  writeEntry,
  oid,
  objEntry,
  globalEntry,
  scopeEntry,
  locOf,
  summary,
  exception,
  ensure,
  scriptStart,
  instrument: instrumentSync,
  await0,
  await1,
  dynImport,
  recording: REC,
  api,
  // The last `__shepherd.b` calls: receivers, keys, positions, newest at `i` (access.js
  // writes, callPos reads).
  calls: { o: [null, null, null, null], k: ['', '', '', ''], p: [0, 0, 0, 0], i: 0 },
};
