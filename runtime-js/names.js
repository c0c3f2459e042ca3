// names.js — one description per DOM node that a location or scope label names
// (`["d",N,T,P,I,C]`, docs/trace-format.md "Node descriptions"), so reports can say
// `input#coupon.value` where the trace says `DOMNode[19].value`.
//
// When. A node is described the first time objEntry() or targetLabel() name it, not when it gets
// its number: the parser numbers every element it inserts (node existence), and only the few
// that accesses, listeners and events touch need a name. A node in the document is described at
// once (a click handler that removes its own list item still gets the item's place in the list).
// A node not yet in the document waits: at the end of each action the waiting nodes that have
// been inserted are described (script-made elements usually are by the end of the action that
// made them; a template filled now may be inserted when a response arrives); after WAIT_ACTIONS
// action ends, or when more than PENDING_CAP wait, or at page exit, a node is described as it
// is (no selector when still detached). A node that moves later keeps the name of where it was
// first described; its number keeps it apart from the node now in that place.
//
// Cost. A walk up at most PATH_STEPS ancestors, counting at most SIBLING_SCAN element siblings
// each way per step, through the native getters saved in prelude.js: no page code runs (no
// getter the page redefined), and each node is described once per trace.

const PATH_STEPS = 6;
const SIBLING_SCAN = 128;
/** Longest id or class list written (ids longer than this are not used in selectors). */
const NAME_CHARS = 48;
/** Most classes kept. */
const MAX_CLASSES = 3;
const PENDING_CAP = 256;
const WAIT_ACTIONS = 32;

const described = objCreate(null); // object number -> 1 once described or waiting
const pendingNodes = []; // [node, number, action ends waited, node, number, ...]

/** Describes node `node` (object number `n`) once: now or at the end of the action. */
function nameNode(node, n) {
  if (!REC || described[n] === 1) return;
  described[n] = 1;
  let inDoc = false;
  try {
    inDoc = nodeConnected(node);
  } catch (_) {
    inDoc = false;
  }
  if (inDoc || pendingNodes.length >= PENDING_CAP * 3) {
    describeNode(node, n);
  } else {
    pendingNodes[pendingNodes.length] = node;
    pendingNodes[pendingNodes.length] = n;
    pendingNodes[pendingNodes.length] = 0;
  }
}

/**
 * At the end of an action: describes the waiting nodes now in the document, and those that
 * waited WAIT_ACTIONS action ends; `all` (page exit) describes every one.
 */
function describePending(all) {
  const p = pendingNodes;
  let j = 0;
  for (let i = 0; i + 2 < p.length; i += 3) {
    const node = p[i];
    let inDoc = false;
    try {
      inDoc = nodeConnected(node);
    } catch (_) {
      inDoc = false;
    }
    if (all || inDoc || p[i + 2] >= WAIT_ACTIONS) {
      describeNode(node, p[i + 1]);
    } else {
      p[j] = node;
      p[j + 1] = p[i + 1];
      p[j + 2] = p[i + 2] + 1;
      j += 3;
    }
  }
  p.length = j;
}

/** Writes the `d` record of `node`; a DOM that throws (a node from a torn-down frame) gets a bare one. */
function describeNode(node, n) {
  let tag = '#node';
  let path = null;
  let id = '';
  let cls = '';
  try {
    const t = nodeType(node);
    if (t === 1) {
      tag = elLocalName(node);
      id = elId(node);
      cls = classList(node);
      if (nodeConnected(node)) path = cssPath(node);
    } else {
      tag = strToLower(nodeName(node));
      const p = nodeParent(node);
      if ((t === 3 || t === 8) && p !== null && nodeType(p) === 1 && nodeConnected(p)) path = cssPath(p);
    }
  } catch (_) {
    path = null;
  }
  // Intern into locals first (sid() appends to `out`, see trace.js); trailing nulls dropped.
  const parts = [
    path === null ? 'null' : NativeString(sid(path)),
    id === '' ? 'null' : NativeString(sid(cut(id))),
    cls === '' ? 'null' : NativeString(sid(cls)),
  ];
  let last = 2;
  while (last >= 0 && parts[last] === 'null') last--;
  const ts = sid(tag);
  let rec = '["d",' + n + ',' + ts;
  for (let i = 0; i <= last; i++) rec += ',' + parts[i];
  out += rec + ']\n';
}

function cut(s) {
  return s.length <= NAME_CHARS ? s : strSlice(s, 0, NAME_CHARS) + '\u2026';
}

/** The first MAX_CLASSES classes of `el`, space-separated ('' when none), from the attribute. */
function classList(el) {
  const v = elGetAttr(el, 'class');
  if (typeof v !== 'string') return '';
  let s = '';
  let n = 0;
  let i = 0;
  while (i < v.length && n < MAX_CLASSES) {
    while (i < v.length && isSpace(strCharCode(v, i))) i++;
    const start = i;
    while (i < v.length && !isSpace(strCharCode(v, i))) i++;
    if (i > start) {
      s = s === '' ? strSlice(v, start, i) : s + ' ' + strSlice(v, start, i);
      n++;
    }
  }
  return cut(s);
}

function isSpace(c) {
  return c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
}

/** True when `s` can follow `#` in a selector as it is (letters, digits, `-`, `_`, non-ASCII). */
function isIdent(s) {
  const n = s.length;
  if (n === 0 || n > NAME_CHARS || (n === 1 && strCharCode(s, 0) === 45)) return false;
  for (let i = 0; i < n; i++) {
    const c = strCharCode(s, i);
    if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 45 || c >= 128) continue;
    // A digit may not start the name, nor follow a leading `-`.
    if (c >= 48 && c <= 57 && i > 0 && !(i === 1 && strCharCode(s, 0) === 45)) continue;
    return false;
  }
  return true;
}

/**
 * A selector for element `el` (in the document): child steps up to the nearest element whose id
 * is unique in the document (`#todo-list > li:nth-child(1) > input`; the element itself:
 * `input#coupon`), or up to `body`/`head`/`html`, or PATH_STEPS steps (then relative).
 */
function cssPath(el) {
  let s = '';
  let cur = el;
  for (let k = 0; k < PATH_STEPS; k++) {
    const tag = elLocalName(cur);
    const id = elId(cur);
    if (isIdent(id) && docGetById !== null && DOCUMENT !== null && docGetById(DOCUMENT, id) === cur) {
      return join((k === 0 ? tag : '') + '#' + id, s);
    }
    if (tag === 'body' || tag === 'head' || tag === 'html') return join(tag, s);
    const parent = nodeParent(cur);
    if (parent === null || nodeType(parent) !== 1) return join(tag, s);
    const nth = nthChild(cur, tag);
    const step = nth === 0 ? tag : tag + ':nth-child(' + (nth > 0 ? NativeString(nth) : 'n+' + (SIBLING_SCAN + 1)) + ')';
    s = join(step, s);
    cur = parent;
  }
  return s;
}

function join(step, rest) {
  return rest === '' ? step : step + ' > ' + rest;
}

/**
 * `el`'s 1-based position among its parent's element children when a sibling shares its tag,
 * 0 when none does (the tag alone is unique), -1 when more than SIBLING_SCAN come before it.
 */
function nthChild(el, tag) {
  let i = 1;
  let same = false;
  for (let p = elPrevSibling(el); p !== null; p = elPrevSibling(p)) {
    if (i > SIBLING_SCAN) return -1;
    i++;
    if (!same && elLocalName(p) === tag) same = true;
  }
  let j = 0;
  for (let q = elNextSibling(el); !same && q !== null && j < SIBLING_SCAN; q = elNextSibling(q)) {
    j++;
    if (elLocalName(q) === tag) same = true;
  }
  return same ? i : 0;
}
