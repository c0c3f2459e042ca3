// `super.x` reads, writes and calls keep their semantics and are logged as properties of
// `this` (the receiver); computed super calls convert the key once.
// expect: r Object[*].m
// expect: r Object[*].v
// expect: w Object[*].v
// expect: w Object[*].n
// expect: r Object[*].keyed
class A {
  m() { return 'A' + (this === undefined); }
  get v() { return this._v === undefined ? 'unset' : this._v; }
  set v(x) { this._v = 'set:' + x; }
  keyed() { return 'keyed'; }
  static s() { return 'As'; }
}
let conversions = 0;
const key = { toString() { conversions++; return 'keyed'; } };
class B extends A {
  constructor() {
    try { super.m(); } catch (e) { console.log('before super():', e.constructor.name); }
    super();
    this.first = super.m();
  }
  m() { return super.m() + 'B'; }
  get v() { return 'B' + super.v; }
  set v(x) { super.v = x; }
  w() {
    super.v = 1;
    const r1 = super.v;
    super.n = 5;
    super.n += 1;
    super.n++;
    const arrow = () => super.m();
    return [r1, this.n, arrow(), super[key](), super['keyed'](), typeof super.missing,
      super.m.call({}), delete this.n];
  }
  static s() { return super.s() + 'Bs'; }
  tag() { return super.m`x`; }
}
const o = {
  __proto__: { hi() { return 'proto hi ' + (this === o); } },
  hi() { return super.hi() + '!'; },
};
const b = new B();
console.log(b.first, b.m(), b.v, b.w(), conversions, B.s(), b.tag(), o.hi());
try {
  (function () { 'use strict'; return class extends A { d() { delete super.m; } }; })().prototype.d();
} catch (e) {
  console.log('delete super:', e.constructor.name);
}
