// Conformance: calls through optional chains keep their `this`, and short-circuit as a whole.
var a = { b: { c() { return this === a.b; }, d: { e() { return this === a.b.d; } } } };
console.log(a?.b.c(), a?.b?.c(), (a?.b).c(), a?.b.d.e(), a.b?.d.e(), a?.["b"].c(), (a?.b.c)());
var n = null;
console.log(n?.b.c(), n?.b.c.d(), (n?.b)?.c(), n?.b[k()]);
function k() { throw new Error("evaluated"); }
