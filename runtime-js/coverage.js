// coverage.js — what a tool exercising the page reports it reached: the controls it found
// (visible and enabled at some point) with the gestures each gets and those it got, as `c`
// records of the trace (docs/trace-format.md, "Controls"), so a race report can say which
// controls the recording never exercised. The tool names controls by stable paths
// (`/html[1]/body[1]/div[2]/#shadow/button[1]`, the form the DevTools client and the
// exerciser use); each is resolved here, numbered like any node and described.

const elFirstChild = ElP ? getterOf(ElP, 'firstElementChild') : null;
const docFirstChild = DocP ? getterOf(DocP, 'firstElementChild') : null;
const elShadow = ElP ? getterOf(ElP, 'shadowRoot') : null;
const fragFirstChild = G.DocumentFragment ? getterOf(DocumentFragment.prototype, 'firstElementChild') : null;
const COVERAGE_CAP = 10000;
const PATH_STEP_RE = /^([^\[\]\/]+)\[([0-9]{1,6})\]$/;

/** The element at stable path `path` in this document; null when none (or in another one). */
function elementAtPath(path) {
  if (typeof path !== 'string' || DOCUMENT === null || strCharCode(path, 0) !== 47) return null;
  let node = DOCUMENT;
  let start = 1;
  for (let i = 1; i <= path.length; i++) {
    if (i < path.length && strCharCode(path, i) !== 47) continue;
    const step = strSlice(path, start, i);
    start = i + 1;
    if (step === '#shadow') {
      node = nodeType(node) === 1 ? elShadow(node) : null; // open shadow roots only
    } else if (step === '#document') {
      return null; // a frame's document has a runtime (and a trace) of its own
    } else {
      const m = reExec(PATH_STEP_RE, step);
      if (m === null) return null;
      let k = NativeNumber(m[2]);
      const t = nodeType(node);
      let c = t === 9 ? docFirstChild(node) : t === 11 ? fragFirstChild(node) : elFirstChild(node);
      for (; c !== null; c = elNextSibling(c)) {
        if (elLocalName(c) === m[1] && --k === 0) break;
      }
      node = c;
    }
    if (node === null || node === undefined) return null;
  }
  return node === DOCUMENT ? null : node;
}

/**
 * Writes a `c` record for each `{path, offered, done}` of `list` whose element is in this
 * document; returns how many were written.
 */
function recordCoverage(list) {
  if (!REC || !isArray(list)) return 0;
  let n = 0;
  for (let i = 0; i < list.length && i < COVERAGE_CAP; i++) {
    const c = list[i];
    if (c === null || typeof c !== 'object') continue;
    const offered = c.offered;
    const done = c.done;
    if (typeof offered !== 'string' || typeof done !== 'string') continue;
    let el = null;
    try {
      el = elementAtPath(c.path);
    } catch (_) {
      el = null;
    }
    if (el === null) continue;
    const num = oid(el);
    if (described[num] !== 1) nameNode(el, num);
    const o = sid(offered);
    const d = sid(done);
    out += '["c",' + num + ',' + o + ',' + d + ']\n';
    n++;
  }
  maybeFlush(FORWARD);
  return n;
}
