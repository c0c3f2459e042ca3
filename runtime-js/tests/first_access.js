// An action logs the first read and the first write of each location, a location's name is
// defined once in the trace, and the fields of an object one action alone has touched are
// logged late, when a second action touches it: loads the real runtime (record mode, argv[2])
// into a fresh `vm` context, runs accesses shaped like instrumented code's in three timer
// actions, and prints the uploaded trace (tests/first_access.rs reads it).
'use strict';
const vm = require('vm');
const { loadRuntime } = require('./runtime_vm.js');

const { ctx, g, bodies } = loadRuntime(process.argv[2]);
g.__done = () => {
  process.stdout.write(bodies.join(''));
  process.exit(0);
};

vm.runInContext(`(function () {
  const S = __shepherd;
  const P = 34359738368 + 524288 + 1; // a position: key 1, line 1, column 1
  const o = { a: 1 };
  const arr = [1, 2];
  globalThis.shared = 0;
  // Action 1: each location read and written twice, by every form that names it.
  setTimeout(() => {
    S.r(o, 'a', P);
    S.r(o, 'a', P);
    S.W(o, 'a', (o.a = 2), P);
    S.X(o, 'a', (o.a += 1), P);
    S.r(arr, 0, P);
    S.r(arr, '0', P);
    S.b(arr, 'push', P);
    S.b(arr, 'pop', P);
    S.g('shared', 0, P);
    S.x('shared', 1, P);
    S.w('shared', 2, P);
    // A captured variable of an activation of this action's, read by the next.
    const scope = S.s();
    S.cw(scope, 'count', 1, P);
    // Action 2: the same locations again, and a fresh object's field twice (logged when
    // action 3 reads it).
    setTimeout(() => {
      S.r(o, 'a', P);
      S.r(arr, 0, P);
      S.g('shared', 2, P);
      S.cr(scope, 'count', 1, P);
      const fresh = { t: 1 };
      S.r(fresh, 't', P);
      S.W(fresh, 't', (fresh.t = 2), P);
      S.r(fresh, 't', P);
      // Action 3: writes first, then reads; the fresh object's field; an object and an
      // activation of its own.
      setTimeout(() => {
        S.W(o, 'a', (o.a = 5), P);
        S.r(o, 'a', P);
        S.Y(o, 'a', o.a++, 1, P);
        S.r(fresh, 't', P);
        const mine = { m: 1 };
        S.W(mine, 'm', (mine.m = 2), P);
        S.r(mine, 'm', P);
        const own = S.s();
        S.cw(own, 'm', 1, P);
        S.cr(own, 'm', 1, P);
        S.control('s').flush();
        setTimeout(() => __done(), 50);
      }, 0);
    }, 0);
  }, 0);
})()`, ctx);
