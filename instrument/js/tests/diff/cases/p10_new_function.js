// Pitfall 10: new Function coerces its arguments once; its scope is global.
var c = 0;
var arg = { toString() { c++; return "a"; } };
var f = new Function(arg, "return a + 1");
console.log(f(1), c);
var g = Function("return typeof c");
console.log(g());
