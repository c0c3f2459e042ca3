// trace.js — the JSONL encoder (docs/trace-format.md), string interning, the bounded buffer and
// the upload to the proxy.
//
// NOTE: never write `out += ... + sid(x)`: sid() appends to `out` itself, and `+=` would drop
// that definition (the left operand is read first). Intern into locals, then append.
//
// Records are appended to one string (`out`); V8 concatenates strings as ropes, so appending a
// short record costs no copy. Strings are interned in a null-prototype object: no Map method
// lookups a page could patch, no per-record allocation besides the record text. The buffer is
// cut into batches of at most FLUSH_CHARS characters so each upload fits the 64 KiB quota that
// keepalive fetches and beacons share; batches are sent one at a time in `seq` order while the
// page lives, and everything still pending is sent with sendBeacon at pagehide/unload (the
// proxy keeps the first body it receives for each seq, so a batch sent twice is harmless).

/**
 * True in record and replay modes: actions, arcs and accesses are written to the trace. Shared
 * and service workers never trace (they serve many documents; see "Runtime: workers").
 */
const REC = CONFIG.mode !== 'repair' && (!WORKER_SCOPE || DEDICATED);
/**
 * A dedicated worker sends its records to the page that created it (one trace per page):
 * each batch is a message `{__shepherd: 'trace', t: text}` on the worker's own channel to the
 * parent, so it arrives before any message the worker posts after it (workers.js).
 */
const FORWARD = REC && DEDICATED && nParentPost !== null;
const FLUSH_CHARS = 16000;
const FLUSH_DELAY_MS = 300;
const MAX_PENDING_CHARS = 8 * 1024 * 1024;
const MAX_TRIES = 5;

let out = '';
let strIds = objCreate(null);
let nStr = 0;
let seq = 0;
const batches = []; // {seq, body, tries} not yet delivered, oldest first from bHead
let bHead = 0;
let pendingChars = 0;
let inFlight = false;
let flushTimer = 0;
let droppedBatches = 0;
let pageGone = false;
/** flushAndWait's callers: {target, resolve}, woken by the delivery that completes their batches. */
let flushWaiters = [];

function randomDocId() {
  try {
    const a = new Uint32Array(2);
    nGetRandomValues(nCrypto, a);
    return numToString(a[0], 16) + numToString(a[1], 16);
  } catch (_) {
    return numToString(mathFloor(rApply(mathRandom, NativeMath, []) * 4294967296), 16);
  }
}

/** Identity of this document's trace on the proxy (`doc=` of every upload): the origin's
 * prefix (credentials.js), then the configured id or a random one. */
const DOC = DOC_PREFIX + '.' +
  (typeof CONFIG.doc === 'string' && CONFIG.doc !== '' ? CONFIG.doc : randomDocId());
const UPLOAD_BASE = (CONFIG.upload || '/__shepherd/trace') + '?t=' +
  encodeURIComponent(PAGE_TOKEN) + '&doc=' + encodeURIComponent(DOC) + '&seq=';

if (REC) {
  out = jsonStr({ format: 'shepherd-trace', version: 5, page: pageHref(), doc: DOC }) + '\n';
}

/** Number of interned string `text`, defining it in the trace on first use. */
function sid(text) {
  let n = strIds[text];
  if (n === undefined) {
    n = defineStr(text);
    strIds[text] = n;
  }
  return n;
}

/**
 * A new number for `text`, defined in the trace and not interned here: for a text that is
 * new by construction (the name of a field of an object the page has just made, controller.js
 * objEntry), whose insertion into `strIds` would cost more than the rest of its logging. A
 * reader interns by text, so a text defined under two numbers is still one string.
 */
function defineStr(text) {
  const n = nStr++;
  out += '["s",' + n + ',' + jsonStr(text) + ']\n';
  return n;
}

/** Cuts the buffer into a batch and starts sending when it is big enough (or `force`). */
function maybeFlush(force) {
  if (!REC) return;
  const n = spilledChars + out.length;
  if (n >= FLUSH_CHARS || (force && n > 0)) {
    cutBatch();
    pump();
  } else if (n > 0 && flushTimer === 0 && !pageGone) {
    flushTimer = rApply(nSetTimeout, G, [flushTick, FLUSH_DELAY_MS]);
  }
}

function flushTick() {
  flushTimer = 0;
  maybeFlush(true);
}

// Text of the open batch taken out of `out` in the middle of an action, each piece flat
// (`spill`); the batch cut next is these pieces followed by `out`.
let spilled = [];
let spilledChars = 0;
let flatHint = 0;

/**
 * Takes the buffer's text out of `out` as one flat piece once it holds `FLUSH_CHARS`, in the
 * middle of an action too (the hot access paths call it after their record is in `out`,
 * never inside an expression that appends to `out`). Why: `out` is a rope of every record
 * appended since the last cut, thousands of small strings, all alive; an action that logs
 * megabytes (a store parsed from JSON at every change) would have the garbage collector copy
 * and visit them again at each collection. Batches are cut where they were (`maybeFlush`):
 * cutting them here would send a long action's trace as many uploads, one at a time, and a
 * page that navigates soon after would leave the last ones to the beacon's quota.
 */
function spill() {
  if (out.length >= FLUSH_CHARS) {
    // `| 0` converts the text to a number, for which V8 flattens it: the rope's pieces become
    // garbage now. The result is stored so that no optimising compiler drops the conversion.
    flatHint = out | 0;
    spilled[spilled.length] = out;
    spilledChars += out.length;
    out = '';
  }
}

/** Characters buffered and not cut into a batch yet. */
function bufferedChars() {
  return spilledChars + out.length;
}

function cutBatch() {
  const n = spilledChars + out.length;
  if (n === 0) return;
  let body = out;
  if (spilled.length > 0) {
    body = '';
    for (let i = 0; i < spilled.length; i++) body += spilled[i];
    body += out;
    spilled = [];
    spilledChars = 0;
  }
  out = '';
  if (pendingChars + n > MAX_PENDING_CHARS) {
    // The proxy is unreachable for a long time: keep the newest data bounded, count the loss.
    droppedBatches++;
    return;
  }
  // One flat string while it waits to be sent (see `spill`).
  flatHint = body | 0;
  batches[batches.length] = { seq: seq++, body, tries: 0 };
  pendingChars += n;
}

const respOk = G.Response ? getterOf(G.Response.prototype, 'ok') : null;

function pump() {
  if (FORWARD) {
    forward();
    return;
  }
  if (inFlight || bHead >= batches.length || !nFetch) return;
  const b = batches[bHead];
  inFlight = true;
  let p;
  try {
    p = rApply(nFetch, G, [UPLOAD_BASE + b.seq, {
      method: 'POST',
      body: b.body,
      keepalive: b.body.length <= FLUSH_CHARS,
      credentials: 'omit',
      cache: 'no-store',
      headers: { 'content-type': 'application/x-ndjson' },
    }]);
  } catch (_) {
    inFlight = false;
    retryLater(b);
    return;
  }
  promiseThen(p, (r) => {
    inFlight = false;
    // An error status (the proxy could not store it) is a lost batch, not a delivered one:
    // a hole in the seq order ends the trace there (docs/recording-format.md).
    if (respOk !== null && respOk(r) !== true) {
      retryLater(b);
      return;
    }
    delivered();
    pump();
  }, () => {
    inFlight = false;
    retryLater(b);
  });
}

function delivered() {
  const b = batches[bHead];
  batches[bHead] = undefined;
  bHead++;
  pendingChars -= b.body.length;
  if (bHead > 64 && bHead * 2 > batches.length) {
    let j = 0;
    for (let i = bHead; i < batches.length; i++) batches[j++] = batches[i];
    batches.length = j;
    bHead = 0;
  }
  wakeFlushWaiters();
}

function retryLater(b) {
  if (++b.tries >= MAX_TRIES) {
    droppedBatches++;
    delivered();
    pump();
    return;
  }
  if (!pageGone) rApply(nSetTimeout, G, [pump, 200 * b.tries]);
}

/** Worker: posts every cut batch to the parent, in order (no retries: the channel is reliable). */
function forward() {
  while (bHead < batches.length) {
    const b = batches[bHead];
    try {
      nParentPost(G, { __shepherd: 'trace', t: b.body });
    } catch (_) {
      droppedBatches++;
    }
    delivered();
  }
}

/** Sends everything still buffered with sendBeacon (keepalive fetch when the quota is full). */
function flushAtExit() {
  if (!REC) return;
  describePending(true);
  cutBatch();
  for (let i = bHead; i < batches.length; i++) {
    const b = batches[i];
    const url = UPLOAD_BASE + b.seq;
    let ok = false;
    try {
      ok = nSendBeacon !== null && nSendBeacon(navigatorObj, url, b.body);
    } catch (_) {
      ok = false;
    }
    if (!ok) {
      try {
        rApply(nFetch, G, [url, { method: 'POST', body: b.body, keepalive: true, credentials: 'omit' }]);
      } catch (_) {
        droppedBatches++;
      }
    }
  }
  // Everything was handed to the browser; a later flush resends only what comes after.
  for (let i = bHead; i < batches.length; i++) pendingChars -= batches[i].body.length;
  batches.length = 0;
  bHead = 0;
  inFlight = false;
  wakeFlushWaiters();
}

/** Whether every batch numbered below `target` has been delivered (or given up on). */
function deliveredBefore(target) {
  return bHead >= batches.length || (batches[bHead] !== undefined && batches[bHead].seq >= target);
}

function wakeFlushWaiters() {
  if (flushWaiters.length === 0) return;
  const waiting = [];
  for (let i = 0; i < flushWaiters.length; i++) {
    const w = flushWaiters[i];
    if (deliveredBefore(w.target)) w.resolve(seq);
    else waiting[waiting.length] = w;
  }
  flushWaiters = waiting;
}

/**
 * A promise that settles once every batch cut so far has been delivered (tests, explorer): as
 * soon as the last of them is, because the explorer waits for it at the end of every execution.
 */
function flushAndWait() {
  maybeFlush(true);
  const target = seq;
  return new NativePromise((resolve) => {
    if (deliveredBefore(target)) resolve(seq);
    else flushWaiters[flushWaiters.length] = { target, resolve };
  });
}
