// Conformance: a logged shorthand `{__proto__}` still defines an own property named
// `__proto__` (a `__proto__: v` property would set the prototype instead).
function f() {
  var __proto__;
  __proto__ = { inherited: 1 };
  return () => ({ __proto__ });
}
var o = f()();
console.log(Object.keys(o), o.inherited, Object.getPrototypeOf(o) === Object.prototype);
// expect: r Scope[*].__proto__
