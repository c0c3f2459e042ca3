// access.js — the functions instrumented code calls (`__shepherd.*`), built on the controller's
// `T` (docs/runtime-api.md). The call shapes are produced by instrument/js (src/pass.rs); the
// table in docs/runtime-api.md, "Instrumented code → runtime", is the contract.
//
// Rules this file keeps:
// - It never performs a user-visible operation twice: the instrumented code does the native
//   write/update/delete/call itself; only plain reads (`r`) are done here, once, with the key
//   already converted (ToPropertyKey runs exactly once, in `toKey`).
// - Natives are captured at load (the runtime runs before any page script).
// - Short names: these run on every shared access of instrumented code.
// - Positions: every access function takes the pass's position number `p` as its last
//   argument (docs/runtime-api.md) and hands it to T.read/T.write untouched; only a record that
//   is actually written decodes it (T.pos, below), so the hot path pays one extra argument.

const A = T.api;
const A_REC = T.recording;
// Properties, globals and captured variables are logged through their location entries
// (controller.js, objEntry, globalEntry and scopeEntry; A_gl gives a global's): no name is
// built or looked up by string once named.
const A_readE = T.readEntry;
const A_writeE = T.writeEntry;
const A_objE = T.objEntry;
const A_gl = T.globalEntry;
const A_scE = T.scopeEntry;
const A_G = globalThis;
const A_ownKeys = Reflect.ownKeys;
const A_def = Object.defineProperty;
const A_create = Object.create;
const A_BigInt = typeof BigInt === 'function' ? BigInt : null;
const A_eval = A_G.eval;
const A_Map = Map;
const A_mapGet = Map.prototype.get;
const A_mapSet = Map.prototype.set;
const A_mapDelete = Map.prototype.delete;
const A_mapKeys = Map.prototype.keys;
const A_iterNext = A_mapKeys.call(new Map()).next;
const A_apply = Reflect.apply;
const A_MARKER = '/*shepherd:instrumented*/';

const A_isArray = Array.isArray;

let A_scope = 0;

// Array methods called through `b`: 1 reads the whole array (its `$LEN` location), 2 also
// changes its length/cells (logged as a write of `$LEN`, the coarse whole-array location of
// EventRacer's model). Calls on arrays never log the method name itself.
const A_ARRAY_METHOD = A_create(null);
for (const m of ['concat', 'entries', 'every', 'filter', 'find', 'findIndex', 'findLast',
  'findLastIndex', 'flat', 'flatMap', 'forEach', 'includes', 'indexOf', 'join', 'keys',
  'lastIndexOf', 'map', 'reduce', 'reduceRight', 'slice', 'some', 'toString', 'values', 'at',
  'toReversed', 'toSorted', 'toSpliced', 'with']) A_ARRAY_METHOD[m] = 1;
for (const m of ['push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill',
  'copyWithin']) A_ARRAY_METHOD[m] = 2;

/** Logs a method read on `o` (an object); arrays get whole-array reads/writes instead. */
function A_method(o, k, p) {
  let array = false;
  try {
    array = A_isArray(o);
  } catch (_) {
    array = false; // a revoked Proxy: the native call that follows throws
  }
  if (array && typeof k === 'string') {
    const kind = A_ARRAY_METHOD[k];
    if (kind !== undefined) {
      const l = A_objE(o, 'length');
      A_readE(l, undefined, false, p);
      // A fresh object as the value: two mutations never look "same-valued" to the filters.
      if (kind === 2) A_writeE(l, A_create(null), p);
      return;
    }
  }
  A_readE(A_objE(o, k), undefined, false, p);
}

/** Remembers the method call about to run (`T.calls`, a ring of 4): wrapped natives such as
 *  addEventListener log their accesses at its position (controller.js, callPos). */
const A_calls = T.calls !== undefined ? T.calls : { o: [], k: [], p: [], i: 0 };
function A_callAt(o, k, p) {
  const i = (A_calls.i + 1) & 3;
  A_calls.i = i;
  A_calls.o[i] = o;
  A_calls.k[i] = k;
  A_calls.p[i] = p;
}

function A_isObj(o) {
  const t = typeof o;
  return t === 'function' || (t === 'object' && o !== null);
}

/** ToPropertyKey, exactly once (objects: their toString/valueOf/@@toPrimitive run once). */
function A_toKey(k) {
  const t = typeof k;
  if (t === 'string' || t === 'number' || t === 'symbol') return k;
  if (t === 'function' || (t === 'object' && k !== null)) return A_ownKeys({ [k]: 0 })[0];
  return '' + k; // undefined, null, boolean, bigint: no user code
}

/** Key for a location name without running user code (object keys: none, not logged). */
function A_keyName(k) {
  const t = typeof k;
  return t === 'function' || (t === 'object' && k !== null) ? undefined : k;
}

function A_plus(old, d) {
  return typeof old === 'bigint' && A_BigInt !== null ? old + A_BigInt(d) : old + d;
}

/** The entry of captured variable `n` of scope instance `s` (`Scope[<s>].<n>`). */
function A_sl(s, n) {
  // A number `s()` gave: anything else (a page calling the hooks itself) is named as before.
  if (typeof s === 'number' && s > 0 && s <= A_scope && (s | 0) === s) return A_scE(s, n);
  return T.locOf('Scope[' + s + '].' + n);
}

// ---- dynamic code ------------------------------------------------------------------------------

// Instrumented text by source, bounded (oldest dropped first).
const A_cache = new A_Map();
const A_CACHE_MAX = 256;
let A_cacheCount = 0;

/**
 * Instruments dynamic code `src` of kind 'script' | 'module' | 'handler' (or 'html', markup
 * whose inline scripts and handlers are instrumented, dynamic.js) through the
 * controller's `T.instrument` (a synchronous request to /__shepherd/instrument). Returns the
 * original text when it is not a string, already instrumented, or instrumentation fails.
 */
function A_code(src, kind) {
  if (!A_REC || typeof src !== 'string' || typeof T.instrument !== 'function') return src;
  if (src.indexOf(A_MARKER) === 0) return src;
  const key = kind + ':' + src;
  const hit = A_apply(A_mapGet, A_cache, [key]);
  if (hit !== undefined) return hit;
  let out = null;
  try {
    out = T.instrument(src, kind);
  } catch (_) {
    out = null;
  }
  if (typeof out !== 'string') out = src;
  else if (out !== src) A_noteDynamic(out, kind === 'html');
  if (A_cacheCount >= A_CACHE_MAX) {
    const first = A_apply(A_iterNext, A_apply(A_mapKeys, A_cache, []), []);
    A_apply(A_mapDelete, A_cache, [first.value]);
    A_cacheCount--;
  }
  A_apply(A_mapSet, A_cache, [key, out]);
  A_cacheCount++;
  return out;
}

/** Indirect eval through a value read of `eval`: instruments string arguments. */
const A_evalWrapper = {
  eval(src) {
    return A_eval(A_code(src, 'script'));
  },
}.eval;

// ---- source positions ---------------------------------------------------------------------------
//
// `p = K * 2^35 + line * 2^19 + col` (docs/runtime-api.md): K is the 18-bit key of the original
// script text, registered with its URL by the `src(K, F, url)` call every instrumented script
// makes first. Decoding uses division: `p` exceeds 2^32.

const A_KEY = 34359738368; // 2^35
const A_LINE = 524288; // 2^19
const A_urls = A_create(null); // K -> url, '?' when two different urls claimed K
// p -> 'url:line:col' (reset when a key turns ambiguous). A Map: p is above 2^31, so as an
// object key it would be converted to a string at every lookup.
let A_posCache = new A_Map();
const A_mget = uncurry(A_mapGet);
const A_mset = uncurry(A_mapSet);
// Keys of code instrumented through T.instrument (eval, Function, string timers, inserted
// scripts): read from the `src(K,` call at the head of the instrumented text.
const A_dynKeys = A_create(null);
const A_numToString = uncurry(Number.prototype.toString);
const A_floor = Math.floor;
// The document's own URL without fragment, taken before any page script can pushState: the
// URL of the HTML text that holds the inline scripts and handlers.
const A_DOC_URL = A_noFragment(pageHref());

function A_hex(k) {
  return A_numToString(k, 16);
}

// K -> url of code without a URL of its own (F = 1): handlers register at every invocation, so
// their url is built once.
const A_inlineUrls = A_create(null);

/** The script whose text has key `k` runs: remembers where key `k` comes from. */
function A_register(k, f, url) {
  if (typeof k !== 'number') return;
  if (f === 1) {
    const c = A_inlineUrls[k];
    if (c !== undefined && A_urls[k] !== undefined) return c;
  }
  let u;
  // Inline modules pass import.meta.url too, but their lines count from the script's own
  // text: they are named like other inline code, so reports can find them in the document.
  if (typeof url === 'string' && f !== 1) {
    u = url;
  } else if (A_dynKeys[k] === 1) {
    u = 'eval-' + A_hex(k);
  } else {
    let cs = null;
    if (f !== 1 && docCurrentScript !== null && DOCUMENT !== null) {
      try {
        cs = docCurrentScript(DOCUMENT);
      } catch (_) {
        cs = null;
      }
    }
    let s = '';
    if (cs !== null && scriptSrc !== null) {
      try {
        s = scriptSrc(cs);
      } catch (_) {
        s = '';
      }
    }
    if (typeof s === 'string' && s !== '') u = s;
    // No current script: a worker's script, or in a document a module the proxy instrumented
    // as a classic script (no import/export to tell): the URL comes from the stack.
    else if (f !== 1 && (A_WORKER || DOCUMENT !== null)) u = A_callerUrl() || A_DOC_URL + '#inline-' + A_hex(k);
    else u = A_DOC_URL + '#inline-' + A_hex(k);
  }
  if (f === 1) {
    A_inlineUrls[k] = u;
    // Not code made at run time: the browser counts its lines from its own start.
    if (DOCUMENT !== null && A_dynKeys[k] !== 1 && A_inlineAt[k] === undefined) A_noteInlineAt(k);
  }
  const old = A_urls[k];
  if (old === undefined) {
    A_urls[k] = u;
  } else if (old !== u && old !== '?') {
    A_urls[k] = '?';
    A_posCache = new A_Map();
  }
  return u;
}

// `    at f (https://a.test/w.js:3:7)` or `    at https://a.test/w.js:3:7` (or a position
// `url:line:col`): the URL, line and column.
const A_POS_RE = /\(?([a-z][a-z0-9+.-]*:[^\s()]*?):(\d+):(\d+)\)?$/;
const A_strSplit = uncurry(String.prototype.split);
const A_reExec = uncurry(RegExp.prototype.exec);
const A_Error = Error;
const A_String = String;
const A_WORKER = typeof A_G.WorkerGlobalScope === 'function' && A_G instanceof A_G.WorkerGlobalScope;

// ---- exception positions in inline code ---------------------------------------------------------
//
// The browser places an exception in inline code by the document's lines as it ran them: the
// instrumented document, whose inline code is laid out otherwise than the page's. The first run
// of each piece of inline code notes where its `src(` call is in that document (from the stack);
// an exception's position is then placed in the piece whose call precedes it, in the terms of
// the piece's instrumented text (`<doc>#inline-<K>:line:col`), which reports map back through the
// piece's own text (races/src/report/sources.rs). The pass puts the call on line 2 of the text
// (after the marker line), and V8 dates `void __shepherd.src(` by the property name, column 17.

const A_SRC_LINE = 2;
const A_SRC_COL = 17;
// K -> [line, col] of its `src(` call in the document; and the keys noted, in order.
const A_inlineAt = A_create(null);
const A_inlineKeys = [];
const A_Number = Number;

/** The URL without its fragment. */
function A_noFragment(u) {
  const i = strIndexOf(u, '#');
  return i < 0 ? u : strSlice(u, 0, i);
}

/** Notes where inline code `k` (registering now) called `src(`: frames are [A_noteInlineAt,
 *  A_register, src, the code]. Nothing when the stack is unavailable or not the document's. */
function A_noteInlineAt(k) {
  try {
    const lines = A_strSplit(A_String(new A_Error().stack), '\n');
    const m = lines.length > 4 ? A_reExec(A_POS_RE, lines[4]) : null;
    if (m === null || A_noFragment(m[1]) !== A_DOC_URL) return;
    A_inlineAt[k] = [A_Number(m[2]), A_Number(m[3])];
    A_inlineKeys[A_inlineKeys.length] = k;
  } catch (_) {
    // no position: the exception keeps the document's
  }
}

/** Position `pos` (`url:line:col`) of an exception in inline code of this document, in the
 *  terms of the inline code's instrumented text; any other position unchanged. */
function A_inlinePos(pos) {
  if (typeof pos !== 'string') return pos;
  const m = A_reExec(A_POS_RE, pos);
  if (m === null || A_noFragment(m[1]) !== A_DOC_URL) return pos;
  const line = A_Number(m[2]);
  const col = A_Number(m[3]);
  let best = -1;
  let at = null;
  for (let i = 0; i < A_inlineKeys.length; i++) {
    const k = A_inlineKeys[i];
    const p = A_inlineAt[k];
    if (p[0] > line || (p[0] === line && p[1] > col)) continue;
    if (at === null || p[0] > at[0] || (p[0] === at[0] && p[1] > at[1])) {
      best = k;
      at = p;
    }
  }
  if (at === null) return pos;
  const l = line - at[0] + A_SRC_LINE;
  const c = line === at[0] ? col - at[1] + A_SRC_COL : col;
  if (c < 1) return pos;
  return A_DOC_URL + '#inline-' + A_hex(best) + ':' + l + ':' + c;
}
T.inlinePos = A_inlinePos;

/**
 * Without `currentScript` (workers; modules instrumented as classic scripts) the URL of a
 * script that registers is read from the stack, whose frames are [A_callerUrl, A_register,
 * src, the script]. Empty when the stack is unavailable.
 */
function A_callerUrl() {
  try {
    const lines = A_strSplit(A_String(new A_Error().stack), '\n');
    const m = lines.length > 4 ? A_reExec(A_POS_RE, lines[4]) : null;
    return m !== null ? m[1] : '';
  } catch (_) {
    return '';
  }
}

/** `url:line:col` of position number `p` (T.read/T.write call it for records they write). */
function A_pos(p) {
  if (typeof p !== 'number') return undefined;
  let s = A_mget(A_posCache, p);
  if (s !== undefined) return s;
  const k = A_floor(p / A_KEY);
  const r = p - k * A_KEY;
  const line = A_floor(r / A_LINE);
  const col = r - line * A_LINE;
  const u = A_urls[k];
  s = (u === undefined ? '?' : u) + ':' + line + ':' + col;
  A_mset(A_posCache, p, s);
  return s;
}
T.pos = A_pos;

const A_SRC_CALL = '__shepherd.src(';

/** Notes the key of instrumented dynamic code so its `src` call registers it as `eval-<K>`
 *  (string functions only: a page may have patched RegExp by now). Code has its `src` call
 *  at the head; `all`: markup, every script and handler in it has one. */
function A_noteDynamic(out, all) {
  let from = 0;
  for (;;) {
    const i = strIndexOf(out, A_SRC_CALL, from);
    if (i < 0 || (!all && i > 4096)) return;
    let k = 0;
    let j = i + A_SRC_CALL.length;
    for (let c = strCharCode(out, j); c >= 48 && c <= 57; c = strCharCode(out, ++j)) {
      k = k * 10 + (c - 48);
    }
    if (j > i + A_SRC_CALL.length) A_dynKeys[k] = 1;
    if (!all) return;
    from = j;
  }
}

// ---- the Proxy registry ------------------------------------------------------------------------
//
// Naming an object must not run a Proxy's traps (prelude.js, "naming objects without running
// page code"), and no JavaScript can tell a Proxy from its target without one. So in record
// mode `Proxy` is replaced, before any page script, by a wrapper that registers every proxy it
// makes. The wrapper is a bound function, like the native constructible and without
// `prototype` (`class X extends Proxy` still throws); called without `new` it lets the native
// throw; `Proxy.revocable` registers too. Proxies of other realms are not registered.

function A_installProxyRegistry() {
  const N = A_G.Proxy;
  if (typeof N !== 'function') return;
  const nRevocable = N.revocable;
  const make = function (target, handler) {
    if (new.target === undefined) return A_apply(N, undefined, arguments);
    const p = rConstruct(N, arguments);
    wsAdd(proxies, p);
    proxyCount++;
    return p;
  };
  const P = A_apply(FP.bind, make, [null]);
  A_def(P, 'length', { value: 2, configurable: true });
  A_def(P, 'name', { value: 'Proxy', configurable: true });
  const revocable = {
    revocable(target, handler) {
      const r = A_apply(nRevocable, N, arguments);
      wsAdd(proxies, r.proxy);
      proxyCount++;
      return r;
    },
  }.revocable;
  markNative(revocable, 'revocable');
  A_def(P, 'revocable', { value: revocable, writable: true, enumerable: false, configurable: true });
  patch(A_G, 'Proxy', P);
}
if (A_REC) {
  try {
    A_installProxyRegistry();
  } catch (_) {
    // Proxy stays native; objects are still named, a Proxy's traps may then run
  }
}

// ---- the API -----------------------------------------------------------------------------------

const A_fns = {
  /** first statement of every instrumented script: registers the key of its original text
   *  (`F` = 1 for code without a URL of its own: inline scripts, handlers, javascript: URLs;
   *  `url` = import.meta.url for modules) and begins the script's action */
  src(k, f, url) {
    if (!A_REC) return;
    const u = A_register(k, f, url);
    if (typeof T.scriptStart === 'function') T.scriptStart(u, f, typeof url === 'string');
    else T.ensure();
  },

  // Globals (location `Global.<name>`).
  /** read of global `n`; returns `v` */
  g(n, v, p) {
    if (A_REC) A_readE(A_gl(n), v, true, p);
    return v;
  },
  /** before reading a global that may be undeclared: log the read in case it throws */
  u(n, p) {
    if (A_REC && !(n in A_G)) A_readE(A_gl(n), undefined, false, p);
    return 0;
  },
  /** read of global `n` as the callee of a call that must stay native (handler or `with`
   *  scope: the call keeps the scope object as `this`); the value is not touched */
  q(n, p) {
    if (A_REC) A_readE(A_gl(n), undefined, false, p);
    return 0;
  },
  /** `typeof n` of a global (never throws for undeclared names); returns the type string */
  gt(n, t, p) {
    if (A_REC) A_readE(A_gl(n), undefined, t === 'undefined', p);
    return t;
  },
  /** write of global `n` (after the native assignment); returns `v` */
  w(n, v, p) {
    if (A_REC) A_writeE(A_gl(n), v, p);
    return v;
  },
  /** read and write (compound assignment, prefix update); returns `v` */
  x(n, v, p) {
    if (A_REC) {
      A_readE(A_gl(n), undefined, false, p);
      A_writeE(A_gl(n), v, p);
    }
    return v;
  },
  /** postfix update: `old` is the native result, `d` ±1; returns `old` */
  y(n, old, d, p) {
    if (A_REC) {
      A_readE(A_gl(n), old, true, p);
      A_writeE(A_gl(n), A_plus(old, d), p);
    }
    return old;
  },
  /** `delete n` of a global; returns the native result */
  d(n, r, p) {
    if (A_REC) A_writeE(A_gl(n), undefined, p);
    return r;
  },
  /** value read of the identifier `eval` (not a direct call): instruments indirect eval */
  ge(v) {
    return v === A_eval && A_REC ? A_evalWrapper : v;
  },

  // Closure-captured variables (location `Scope[<sid>].<name>`).
  /** a new scope instance id (one per activation that owns captured bindings) */
  s() {
    return ++A_scope;
  },
  cr(s, n, v, p) {
    if (A_REC) A_readE(A_sl(s, n), v, true, p);
    return v;
  },
  cw(s, n, v, p) {
    if (A_REC) A_writeE(A_sl(s, n), v, p);
    return v;
  },
  cx(s, n, v, p) {
    if (A_REC) {
      const e = A_sl(s, n);
      A_readE(e, undefined, false, p);
      A_writeE(e, v, p);
    }
    return v;
  },
  cy(s, n, old, d, p) {
    if (A_REC) {
      const e = A_sl(s, n);
      A_readE(e, old, true, p);
      A_writeE(e, A_plus(old, d), p);
    }
    return old;
  },

  // Properties (location T.objEntry(o, key): `Object[3].p`, `Array[4]$[0]`, `DOMNode[5].id`…).
  /** read `o[k]` (the one native [[Get]]) and log it; returns the value */
  r(o, k, p) {
    if (!A_isObj(o)) return o[k];
    k = A_toKey(k);
    const v = o[k];
    if (A_REC) A_readE(A_objE(o, k), v, true, p);
    return v;
  },
  /** a read the instrumented code did itself (private field `this.#x`, `super.x`): logs a
   *  read of `o`'s property `n` with value `v`; never touches `o`; returns `v` */
  pr(o, n, v, p) {
    if (A_REC && A_isObj(o)) A_readE(A_objE(o, n), v, true, p);
    return v;
  },
  /** receiver of a call `o.m()` / `o[k]()`: logs the read of the method, stores the
   * converted key in `K`, returns `o` so the native call keeps its `this` */
  b(o, k, p) {
    if (typeof k !== 'string') k = A_toKey(k);
    A.K = k;
    if (A_REC && A_isObj(o)) {
      A_method(o, k, p);
      A_callAt(o, k, p);
    }
    return o;
  },
  /** like `b` for optional links `o?.m`: nothing when `o` is nullish */
  bo(o, k, p) {
    if (o === null || o === undefined) return o;
    if (typeof k !== 'string') k = A_toKey(k);
    A.K = k;
    if (A_REC && A_isObj(o)) {
      A_method(o, k, p);
      A_callAt(o, k, p);
    }
    return o;
  },
  // For W/X/Y/D/V the key is passed raw (the native operation converts it); object keys are
  // not logged, since naming them would run their toString a second time.
  /** after the native `o[k] = v`; returns `v` */
  W(o, k, v, p) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) A_writeE(A_objE(o, k), v, p);
    return v;
  },
  /** after a native compound assignment / prefix update; returns `v` */
  X(o, k, v, p) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) {
      const l = A_objE(o, k);
      A_readE(l, undefined, false, p);
      A_writeE(l, v, p);
    }
    return v;
  },
  /** after a native postfix update; returns `old` */
  Y(o, k, old, d, p) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) {
      const l = A_objE(o, k);
      A_readE(l, old, true, p);
      A_writeE(l, A_plus(old, d), p);
    }
    return old;
  },
  /** after a native `delete o[k]`; returns its result */
  D(o, k, r, p) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) A_writeE(A_objE(o, k), undefined, p);
    return r;
  },
  /** a write the engine did with a value we do not see (destructuring and for-in/of member
   *  targets); a fresh object as the value so it never looks same-valued; returns undefined */
  V(o, k, p) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) {
      A_writeE(A_objE(o, k), A_create(null), p);
    }
    return undefined;
  },
  /** returns its first argument (the others are write logs of a destructuring assignment) */
  f(v) {
    return v;
  },

  // Dynamic code and continuations.
  /** argument of a direct `eval(…)`: instrumented when it is a string */
  e(src) {
    return A_code(src, 'script');
  },
  /** instrument dynamic code (for the controller's Function/setTimeout/handler wrappers) */
  i(src, kind) {
    return A_code(src, kind);
  },
  /** the specifier of a dynamic `import(s)` (modules also pass `import.meta.url`): the
   *  module graph it evaluates is forked by the calling action (dom.js); returns `s` */
  di(s, base) {
    if (A_REC && typeof s === 'string' && typeof T.dynImport === 'function') T.dynImport(s, base);
    return s;
  },
  /** before an `await`: a token for the suspending action */
  as() {
    return A_REC && typeof T.await0 === 'function' ? T.await0() : undefined;
  },
  /** when the continuation after `await` resumes: attribute it; returns the awaited value */
  aw(tok, v) {
    if (A_REC && typeof T.await1 === 'function') T.await1(tok);
    return v;
  },
};

for (const name of A_ownKeys(A_fns)) {
  A_def(A, name, { value: A_fns[name], enumerable: false, writable: false, configurable: false });
}
// `with` bodies reach the runtime as `false.__shepherd` (instrument/js src/pass.rs,
// alias_runtime): a property read on a literal, which no `with` object can observe, where a
// scope lookup of `__shepherd` would run a Proxy's `has` trap. Configurable, so a lockdown
// that removes unknown properties of intrinsics still works.
if (A_REC) {
  A_def(Boolean.prototype, '__shepherd', { value: A, enumerable: false, writable: false, configurable: true });
}
// Scratch: the last converted key of `b`/`bo`, and top-level temporaries of classic scripts.
A_def(A, 'K', { value: undefined, enumerable: false, writable: true, configurable: false });
A_def(A, '$', { value: A_create(null), enumerable: false, writable: false, configurable: false });
