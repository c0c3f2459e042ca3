// Member targets of destructuring assignments and for-in/of heads are written by the engine;
// each base and key is evaluated once, in order, and the write is logged afterwards (`V`;
// object-typed keys are not named, as for `W`).
// expect: w Object[*].a
// expect: w Object[*].b
// expect: w Object[*].c
// expect: w Array[*]$[0]
// expect: w Object[*].p
// expect: w Object[*].q
// expect: w Object[*].deep
const log = [];
const o = {};
function base(n) { log.push('base ' + n); return o; }
function k(n) { log.push('key ' + n); return { toString() { log.push('conv ' + n); return 'k' + n; } }; }
const src = {
  get x() { log.push('get x'); return 1; },
  get y() { log.push('get y'); return 2; },
};
[base(1).a, base(2)[k(1)], o.b = (log.push('default'), 'd')] = (log.push('rhs'), [10, 11]);
({ x: base(3).c, y: base(4)[k(2)], z: { w: o.deep } = { w: 'nested' } } = src);
console.log(JSON.stringify(o), log.join(','));
const arr = [];
[arr[0], ...arr[1]] = ['first', 'r1', 'r2'];
console.log(JSON.stringify(arr));
const seen = {};
for (seen.p in { one: 1, two: 2 }) console.log('in', seen.p);
for (seen.q of ['x', 'y']) { console.log('of', seen.q); }
for ([seen.r, seen[k(3)]] of [[1, 2], [3, 4]]) console.log('pat', seen.r, seen.k3);
console.log(JSON.stringify(seen));
function inFunction(t) {
  let i = 0;
  [t.a, t[i++]] = [1, 2];
  for ({ v: t.v } of [{ v: 'v1' }]) ;
  return [JSON.stringify(t), i];
}
console.log(inFunction({}));
const frozen = Object.freeze({ a: 1 });
try {
  (function () { 'use strict'; [frozen.a] = [2]; })();
} catch (e) {
  console.log('strict frozen:', e.constructor.name);
}
class C { static m(self) { [this.x, self.y] = [1, 2]; return this.x + self.y; } }
console.log(C.m({}));
