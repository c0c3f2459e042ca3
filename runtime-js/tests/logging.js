// Runtime logging runs no page code: loads the real runtime (record mode, argv[2]) into a fresh
// `vm` context with the few browser globals it needs, then calls the access functions the way
// instrumented code does (`__shepherd.r(o, k, p)`…) on objects whose page code counts its own
// calls (Proxy traps, @@toStringTag getters, an accessor `name`). Prints, as JSON, the calls each
// instrumented form observed next to the calls the plain operation makes, and the location
// and value names of the uploaded trace.
'use strict';
const vm = require('vm');
const { loadRuntime, records } = require('./runtime_vm.js');

const { ctx, g, bodies } = loadRuntime(process.argv[2]);

vm.runInContext(`(function () {
  const S = __shepherd;
  const P = 34359738368 + 524288 + 1; // a position: key 1, line 1, column 1
  let n = 0;
  const traps = {
    get(t, k, r) { n++; return Reflect.get(t, k, r); },
    set(t, k, v, r) { n++; return Reflect.set(t, k, v, r); },
    has(t, k) { n++; return Reflect.has(t, k); },
    getOwnPropertyDescriptor(t, k) { n++; return Reflect.getOwnPropertyDescriptor(t, k); },
    getPrototypeOf(t) { n++; return Reflect.getPrototypeOf(t); },
    ownKeys(t) { n++; return Reflect.ownKeys(t); },
  };
  const out = [];
  // Counts the page code the plain operation runs, then what its instrumented form runs.
  function check(name, plain, instrumented) {
    n = 0;
    plain();
    const own = n;
    n = 0;
    instrumented();
    out.push({ name, own, calls: n });
  }
  const p = new Proxy({ a: 1 }, traps);
  check('read of a Proxy property', () => p.a, () => S.r(p, 'a', P));
  check('write of a Proxy property', () => (p.b = 2), () => S.W(p, 'b', (p.b = 2), P));
  check('a Proxy as the written value', () => {}, () => S.w('proxyValue', p, P));
  const fp = new Proxy(function named() {}, traps);
  check('a function Proxy as the written value', () => {}, () => S.w('fnProxyValue', fp, P));
  const fpr = new Proxy(function () {}, traps);
  check('method read on a function Proxy', () => {}, () => S.b(fpr, 'call', P));
  const tagged = { get [Symbol.toStringTag]() { n++; return 'Tag'; }, a: 1 };
  check('an object with a @@toStringTag getter', () => (tagged.a = 2), () => {
    S.W(tagged, 'a', (tagged.a = 2), P);
    S.w('taggedValue', tagged, P);
  });
  class WithGetter { get [Symbol.toStringTag]() { n++; return 'G'; } }
  const wg = new WithGetter();
  check('an instance whose class has a @@toStringTag getter', () => {}, () => S.V(wg, 'q', P));
  const child = Object.create(p);
  check('an object inheriting from a Proxy', () => {}, () => {
    S.V(child, 'k', P);
    S.w('childValue', child, P);
  });
  const r = Proxy.revocable({}, traps);
  r.revoke();
  check('a revoked Proxy as the written value', () => {}, () => S.w('revokedValue', r.proxy, P));
  const f = function () {};
  Object.defineProperty(f, 'name', { get() { n++; return 'g'; } });
  Object.defineProperty(Object.prototype, 'value', { get() { n++; return 'x'; }, configurable: true });
  check('a function with an accessor name', () => {}, () => S.w('accessorName', f, P));
  delete Object.prototype.value;
  // Names are still found where no page code stands in the way.
  class Tagged {}
  Tagged.prototype[Symbol.toStringTag] = 'Tagged';
  const named = [new Map(), new Uint8Array(1), new Tagged(), []];
  for (const o of named) S.V(o, 'm', P);
  S.w('namedFn', function named() {}, P);
  // A second action: the fields the first touched are logged now (late), with no page code
  // run either; the named objects' fields too.
  setTimeout(() => {
    check('a Proxy property read by a second action', () => p.a, () => S.r(p, 'a', P));
    check('a @@toStringTag object read by a second action', () => tagged.a, () => S.r(tagged, 'a', P));
    check('an object inheriting from a Proxy, by a second action', () => {}, () => S.V(child, 'k', P));
    for (const o of named) S.V(o, 'm', P);
    S.control('s').flush();
    setTimeout(() => __done(out), 50);
  }, 0);
})()`, ctx);

g.__done = (checks) => {
  // The trace's interned strings: location names and value summaries.
  const strings = records(bodies).filter((r) => r[0] === 's').map((r) => r[2]);
  process.stdout.write(JSON.stringify({ checks, strings }));
  process.exit(0);
};
