// Pitfall 6: direct eval stays direct (sees locals, declares vars in the caller).
// expect: instrument a
// expect: instrument var z = 1
function f() { var a = 1; return eval("a"); }
console.log(f());
eval("var z = 1");
console.log(z);
