// workers.js — dedicated workers: the page side (the Worker constructor, messages to the
// worker, and the translation of the worker's trace records into the page's trace) and the
// worker side (its script's action, messages from and to the page).
//
// The proxy prepends this runtime to every worker script it serves (docs/runtime-api.md,
// "Runtime: workers"), so a dedicated worker traces its own actions with its own numbers and
// strings, and forwards its records to the page as messages on its channel to the page
// (trace.js, FORWARD). The page's Worker wrapper registers the first capture listener on the
// Worker object: it takes those messages (`{__shepherd: 'trace', t}`) out of the page's sight
// and appends the records to the page's trace, renumbered. Nothing authenticates them: the
// worker is the page's own origin, whose scripts can upload to that origin's trace anyway
// (credentials.js), so a forged batch gains a worker nothing its page does not have; the
// translation checks every field and drops what it cannot use.
//
// - every worker action becomes a page action, whose locations get the worker's prefix
//   (`Worker[7]/Global.x`, `Queue:Worker[7]/parent`: another realm's state);
// - the worker's script action is forked by the action that created the Worker; a message from
//   the page is forked by the action that posted it (the worker counts the messages it gets,
//   the page counts the ones it posts: FIFO, one channel);
// - a message from the worker is forked by the worker action that posted it: before posting,
//   the worker sends its records so far (`["P"]` marks the post), so the page knows the poster
//   before the message arrives. The rest of that worker action arrives later and becomes a
//   second page action (`…/part#n`), joined to the first: the worker ran on in parallel.
//
// Private records, never written to the page's trace: `["F",["c"]]` (this action is the
// worker's script: forked by the creator), `["F",["p",k]]` (the k-th message from the page),
// `["P"]` (this action posts a message to the page now).

const ENVELOPE_KEY = '__shepherd';

// ---- worker side ------------------------------------------------------------------------------

let parentSeq = 0; // messages received from the page so far
let workerScript = -1; // the action of the worker's script

/**
 * A message (or messageerror) from the page: a delivery of the parent queue, after the
 * worker's script (messages wait until it has run).
 */
function parentMessageDesc(d) {
  d.type = 4;
  d.kind = 'message';
  d.wq = ['p', parentSeq++];
  if (workerScript >= 0) d.joins = [workerScript];
  if (REC) d.queue = 'Queue:parent';
}

function onParentMessage(ev) {
  enterEvent(ev, G, false);
}

function onWorkerError(ev) {
  enterEvent(ev, G, true);
}

/** Boot in a dedicated worker: its script's action, the post wrapper, our own listeners. */
function installWorkerSide() {
  if (!FORWARD) return;
  // Ours run first: every message from the page is counted, with or without page listeners.
  nAddEL(G, 'message', onParentMessage, true);
  nAddEL(G, 'messageerror', onParentMessage, true);
  nAddEL(G, 'error', onWorkerError, true);
  nAddEL(G, 'unhandledrejection', onWorkerError, true);
  const holder = hasOwn(G, 'postMessage') ? G : getProto(G);
  const nPost = holder.postMessage;
  patch(holder, 'postMessage', function postMessage() {
    ensure();
    out += '["P"]\n';
    maybeFlush(true); // the page gets the poster before the message
    return rApply(nPost, this, arguments);
  });
  const url = pageHref();
  begin({
    hid: 0, type: 0, kind: 'script', stable: childStable(ROOT, 'script', url), label: 'script:worker ' + url,
    from: -1, delay: undefined, joins: null, url, seq: nTaskSeq++, parent: ROOT, pos: url + ':1:1', wq: ['c'],
  });
  workerScript = cur;
}

// ---- page side --------------------------------------------------------------------------------

const jsonParse = JSON.parse;
const workerOf = new NativeWeakMap(); // Worker object -> its translation state

/** Appends one batch of a worker's records (`text`, JSON Lines) to this document's trace. */
function translate(wk, text) {
  const lines = strSplit(text, '\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.length === 0 || strCharCode(line, 0) !== 91) continue; // `[`; the header is `{`
    let r;
    try {
      r = jsonParse(line);
    } catch (_) {
      continue;
    }
    if (!isArray(r) || typeof r[0] !== 'string') continue;
    try {
      translateRecord(wk, r);
    } catch (_) {
      // a record we cannot use: dropped
    }
  }
  closePart(wk);
}

/** A worker string by number, '' when unknown. */
function wstr(wk, n) {
  const s = typeof n === 'number' ? wk.strs[n] : undefined;
  return typeof s === 'string' ? s : '';
}

/** A worker location renamed into the page: the worker's prefix, after `Queue:`. */
function wloc(wk, n) {
  const l = wstr(wk, n);
  return strSlice(l, 0, 6) === 'Queue:' ? 'Queue:' + wk.prefix + strSlice(l, 6) : wk.prefix + l;
}

/** The page action holding the open worker action's records (a new part after a cut). */
function ensurePart(wk) {
  if (wk.open < 0) return false;
  if (cur >= 0 && cur === wk.part) return true;
  wk.parts++;
  begin({
    hid: 0, type: wk.type, kind: wk.kind, stable: wk.stable + '/part#' + wk.parts, label: '', from: -1,
    delay: undefined, joins: wk.part >= 0 ? [wk.part] : null, url: undefined, seq: nTaskSeq++, parent: wk.info,
  });
  wk.part = cur;
  for (let i = 0; i < wk.scopes.length; i++) out += wk.scopes[i];
  nOps += wk.scopes.length;
  return true;
}

/** Ends the page action of the open worker action (its scopes closed; reopened if it goes on). */
function closePart(wk) {
  if (cur < 0 || cur !== wk.part) return;
  for (let i = 0; i < wk.scopes.length; i++) out += '["x"]\n';
  end();
}

/** The page id of worker action `a`, or -1. */
function wid(wk, a) {
  const p = typeof a === 'number' ? wk.ids[a] : undefined;
  return typeof p === 'number' ? p : -1;
}

function translateRecord(wk, r) {
  const tag = r[0];
  if (tag === 's') {
    if (typeof r[1] === 'number' && typeof r[2] === 'string') wk.strs[r[1]] = r[2];
    return;
  }
  if (tag === 'b') {
    if (typeof r[1] !== 'number') return;
    closePart(wk);
    const type = typeof r[2] === 'number' && r[2] >= 0 && r[2] <= 4 ? r[2] : 0;
    const st = wstr(wk, r[4]);
    const stable = strSlice(st, 0, 3) === 'doc' ? wk.stableBase + strSlice(st, 3) : wk.stableBase + '/' + st;
    begin({
      hid: 0, type, kind: wstr(wk, r[3]), stable, label: '', from: -1, delay: undefined, joins: null,
      url: undefined, seq: nTaskSeq++, parent: wk.info0,
    });
    wk.ids[r[1]] = cur;
    wk.open = r[1];
    wk.part = cur;
    wk.parts = 0;
    wk.type = type;
    wk.kind = wstr(wk, r[3]);
    wk.stable = stable;
    wk.info = info;
    wk.scopes = [];
    return;
  }
  if (tag === 'n') {
    closePart(wk);
    wk.open = -1;
    return;
  }
  if (tag === 'a') {
    const t = wid(wk, r[1]);
    const h = wid(wk, r[2]);
    if (t >= 0 && h > t) {
      const k = r[3] === 'f' ? 'f' : 'j';
      const dl = k === 'f' && typeof r[4] === 'number' ? ',' + r[4] : '';
      out += '["a",' + t + ',' + h + ',"' + k + '"' + dl + ']\n';
    }
    return;
  }
  if (tag === 'x' && (cur < 0 || cur !== wk.part)) {
    // A scope closing after a cut: nothing to record in a part of its own.
    if (wk.scopes.length > 0) wk.scopes.length--;
    return;
  }
  if (!ensurePart(wk)) return;
  switch (tag) {
    case 'F': {
      const q = r[1];
      let from = -1;
      if (isArray(q) && q[0] === 'c') {
        from = wk.from;
      } else if (isArray(q) && q[0] === 'p' && typeof q[1] === 'number') {
        const it = wk.toWorker[q[1]];
        if (it !== undefined) {
          from = it.from;
          wk.toWorker[q[1]] = undefined;
          if (wk.lastIn >= 0 && wk.lastInFrom === from && from >= 0) out += '["a",' + wk.lastIn + ',' + cur + ',"j"]\n';
          wk.lastIn = cur;
          wk.lastInFrom = from;
        }
      }
      if (from >= 0 && from < cur) out += '["a",' + from + ',' + cur + ',"f"]\n';
      return;
    }
    case 'P': {
      const q = msgQueue(wk.worker);
      q.items[q.items.length] = { stable: childStable(info, 'message', ''), from: cur };
      return;
    }
    case 'r':
    case 'w': {
      const l = sid(wloc(wk, r[1]));
      const v = typeof r[2] === 'number' ? sid(wstr(wk, r[2])) : -1;
      const p = typeof r[3] === 'number' ? sid(wstr(wk, r[3])) : -1;
      out += '["' + tag + '",' + l + (v >= 0 || p >= 0 ? ',' + (v >= 0 ? v : 'null') : '') + (p >= 0 ? ',' + p : '') + ']\n';
      nOps++;
      return;
    }
    case 'e': {
      const lb = sid(wstr(wk, r[1]));
      const ps = typeof r[2] === 'number' ? ',' + sid(wstr(wk, r[2])) : '';
      const rec = '["e",' + lb + ps + ']\n';
      out += rec;
      nOps++;
      wk.scopes[wk.scopes.length] = rec;
      return;
    }
    case 'x':
      if (wk.scopes.length > 0) {
        wk.scopes.length--;
        out += '["x"]\n';
        nOps++;
      }
      return;
    case '!': {
      const m = sid(wstr(wk, r[1]));
      const ps = typeof r[2] === 'number' ? ',' + sid(wstr(wk, r[2])) : '';
      counters.exceptions++;
      out += '["!",' + m + ps + ']\n';
      nOps++;
      return;
    }
    default:
  }
}

/** Our first listener on a Worker: the worker's records, or a message the page may see. */
function onWorkerMessage(ev) {
  const wk = wmGet(workerOf, this);
  let d = null;
  try {
    d = meData(ev);
  } catch (_) {
    d = null;
  }
  if (wk !== undefined && d !== null && typeof d === 'object' && hasOwn(d, ENVELOPE_KEY) &&
    d[ENVELOPE_KEY] === 'trace' && typeof d.t === 'string') {
    evStopImmediate(ev);
    translate(wk, d.t);
    return;
  }
  enterEvent(ev, this, false);
}

function installWorkers() {
  if (!REC || NWorker === null) return;
  const WP = NWorker.prototype;
  const Wrapped = function Worker(url) {
    if (new.target === undefined) return rApply(NWorker, this, arguments);
    const w = rConstruct(NWorker, arguments, new.target === Wrapped ? NWorker : new.target);
    ensure();
    const p = parentInfo();
    const label = targetLabel(w);
    wmSet(workerOf, w, {
      worker: w, from: cur, info0: p, stableBase: childStable(p, 'worker', typeof url === 'string' ? url : ''),
      prefix: label + '/', strs: [], ids: [], toWorker: [], lastIn: -1, lastInFrom: -1,
      open: -1, part: -1, parts: 0, type: 0, kind: '', stable: '', info: null, scopes: [],
    });
    nAddEL(w, 'message', onWorkerMessage, true);
    nAddEL(w, 'messageerror', onWorkerMessage, true);
    return w;
  };
  defProp(Wrapped, 'length', { value: 1, configurable: true });
  Wrapped.prototype = WP;
  defProp(WP, 'constructor', { value: Wrapped, writable: true, configurable: true });
  patch(G, 'Worker', Wrapped);
  const nPost = WP.postMessage;
  patch(WP, 'postMessage', function postMessage() {
    const wk = wmGet(workerOf, this);
    if (wk !== undefined) {
      ensure();
      wk.toWorker[wk.toWorker.length] = { from: cur };
    }
    return rApply(nPost, this, arguments);
  });
}
