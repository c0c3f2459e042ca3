// Pitfall 15: optional chains short-circuit: no throw, no log, no key evaluation.
// expect-not: r *.zz
var n = null;
function f() { console.log("key evaluated"); return "a"; }
console.log(n?.zz.b.c, n?.[f()], n?.m(), n?.zz?.b);
var o = { a: { b: { c: 1 } }, m() { return this === o; } };
console.log(o?.a.b.c, o.a?.b?.c, o.x?.y.z, o?.m(), o.x?.());
try { o?.x.y; } catch (e) { console.log(e.name); }
