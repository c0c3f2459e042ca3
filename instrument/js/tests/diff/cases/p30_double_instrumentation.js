// Pitfall 30: already-instrumented code (toString of an instrumented function) re-evaluates
// correctly; the pass skips __shepherd.* call shapes (see the fixture double_instrumented).
var a = 1;
function f() { a = a + 1; return a; }
var g = eval("(" + f.toString() + ")");
console.log(g(), a);
