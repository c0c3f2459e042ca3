// Conformance: a parenthesised reference behaves like the bare one: `typeof (x)` of an
// undeclared global does not throw, `(o.m)()`, `(o.m)?.()`, `(o.t)`x``, `(super.m)()` keep
// their `this`, `(eval)(s)` is a direct eval, and inside `with` `(f)()` is a method call on
// the scope object.
console.log(typeof (undeclared1), typeof ((undeclared2)));
var o = { m() { return this === o; }, t(s) { return this === o && s[0]; } };
console.log((o.m)(), ((o.m))(), (o.m)?.(), (o.t)`x`, ((o.t))`y`);
class A { m() { return this; } }
class B extends A { m() { return (super.m)() === this && ((super.m))() === this; } }
console.log(new B().m());
function scope() { var local = 5; return [(eval)("local"), ((eval))("local + 1")]; }
console.log(scope());
var w = { f() { return this === w; }, g() { return this === w; } };
with (w) { console.log((f)(), ((g))(), f?.(), (f)?.()); }
var calls = 0;
function more() { return calls++ < 2; }
do ; while ((more)());
for (var i = 0; (more)() && i < 5; i++);
console.log(calls, i);
// expect: r Global.undeclared1
// expect: r Global.more
