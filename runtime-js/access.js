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

const A = T.api;
const A_REC = T.recording;
const A_read = T.read;
const A_write = T.write;
const A_objLoc = T.objLoc;
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
function A_method(o, k) {
  if (A_isArray(o) && typeof k === 'string') {
    const kind = A_ARRAY_METHOD[k];
    if (kind !== undefined) {
      const l = A_objLoc(o, 'length');
      A_read(l, undefined, false);
      // A fresh object as the value: two mutations never look "same-valued" to the filters.
      if (kind === 2) A_write(l, A_create(null));
      return;
    }
  }
  A_read(A_objLoc(o, k), undefined, false);
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

function A_gl(n) {
  return 'Global.' + n;
}

function A_sl(s, n) {
  return 'Scope[' + s + '].' + n;
}

// ---- dynamic code ------------------------------------------------------------------------------

// Instrumented text by source, bounded (oldest dropped first).
const A_cache = new A_Map();
const A_CACHE_MAX = 256;
let A_cacheCount = 0;

/**
 * Instruments dynamic code `src` of kind 'script' | 'module' | 'handler' through the
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

// ---- the API -----------------------------------------------------------------------------------

const A_fns = {
  // Globals (location `Global.<name>`).
  /** read of global `n`; returns `v` */
  g(n, v) {
    if (A_REC) A_read(A_gl(n), v, true);
    return v;
  },
  /** before reading a global that may be undeclared: log the read in case it throws */
  u(n) {
    if (A_REC && !(n in A_G)) A_read(A_gl(n), undefined, false);
    return 0;
  },
  /** read of global `n` as the callee of a call that must stay native (handler or `with`
   *  scope: the call keeps the scope object as `this`); the value is not touched */
  q(n) {
    if (A_REC) A_read(A_gl(n), undefined, false);
    return 0;
  },
  /** `typeof n` of a global (never throws for undeclared names); returns the type string */
  gt(n, t) {
    if (A_REC) A_read(A_gl(n), undefined, t === 'undefined');
    return t;
  },
  /** write of global `n` (after the native assignment); returns `v` */
  w(n, v) {
    if (A_REC) A_write(A_gl(n), v);
    return v;
  },
  /** read and write (compound assignment, prefix update); returns `v` */
  x(n, v) {
    if (A_REC) {
      A_read(A_gl(n), undefined, false);
      A_write(A_gl(n), v);
    }
    return v;
  },
  /** postfix update: `old` is the native result, `d` ±1; returns `old` */
  y(n, old, d) {
    if (A_REC) {
      A_read(A_gl(n), old, true);
      A_write(A_gl(n), A_plus(old, d));
    }
    return old;
  },
  /** `delete n` of a global; returns the native result */
  d(n, r) {
    if (A_REC) A_write(A_gl(n), undefined);
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
  cr(s, n, v) {
    if (A_REC) A_read(A_sl(s, n), v, true);
    return v;
  },
  cw(s, n, v) {
    if (A_REC) A_write(A_sl(s, n), v);
    return v;
  },
  cx(s, n, v) {
    if (A_REC) {
      A_read(A_sl(s, n), undefined, false);
      A_write(A_sl(s, n), v);
    }
    return v;
  },
  cy(s, n, old, d) {
    if (A_REC) {
      A_read(A_sl(s, n), old, true);
      A_write(A_sl(s, n), A_plus(old, d));
    }
    return old;
  },

  // Properties (location T.objLoc(o, key): `Object[3].p`, `Array[4]$[0]`, `DOMNode[5].id`…).
  /** read `o[k]` (the one native [[Get]]) and log it; returns the value */
  r(o, k) {
    if (!A_isObj(o)) return o[k];
    k = A_toKey(k);
    const v = o[k];
    if (A_REC) A_read(A_objLoc(o, k), v, true);
    return v;
  },
  /** receiver of a call `o.m()` / `o[k]()`: logs the read of the method, stores the
   * converted key in `K`, returns `o` so the native call keeps its `this` */
  b(o, k) {
    if (typeof k !== 'string') k = A_toKey(k);
    A.K = k;
    if (A_REC && A_isObj(o)) A_method(o, k);
    return o;
  },
  /** like `b` for optional links `o?.m`: nothing when `o` is nullish */
  bo(o, k) {
    if (o === null || o === undefined) return o;
    if (typeof k !== 'string') k = A_toKey(k);
    A.K = k;
    if (A_REC && A_isObj(o)) A_method(o, k);
    return o;
  },
  // For W/X/Y/D the key is passed raw (the native operation converts it); object keys are
  // not logged, since naming them would run their toString a second time.
  /** after the native `o[k] = v`; returns `v` */
  W(o, k, v) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) A_write(A_objLoc(o, k), v);
    return v;
  },
  /** after a native compound assignment / prefix update; returns `v` */
  X(o, k, v) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) {
      const l = A_objLoc(o, k);
      A_read(l, undefined, false);
      A_write(l, v);
    }
    return v;
  },
  /** after a native postfix update; returns `old` */
  Y(o, k, old, d) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) {
      const l = A_objLoc(o, k);
      A_read(l, old, true);
      A_write(l, A_plus(old, d));
    }
    return old;
  },
  /** after a native `delete o[k]`; returns its result */
  D(o, k, r) {
    if (A_REC && A_isObj(o) && (k = A_keyName(k)) !== undefined) A_write(A_objLoc(o, k), undefined);
    return r;
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
// Scratch: the last converted key of `b`/`bo`, and top-level temporaries of classic scripts.
A_def(A, 'K', { value: undefined, enumerable: false, writable: true, configurable: false });
A_def(A, '$', { value: A_create(null), enumerable: false, writable: false, configurable: false });
