// Pitfall 7: indirect eval is global (and goes through the instrumenting wrapper).
// expect: instrument a
var a = "g";
function f() { var a = "l"; return (0, eval)("a"); }
console.log(f());
var e = eval;
console.log(e("a"));
