// Pitfall 19: hoisting and Annex B block functions behave as before.
// expect: w Global.f
f();
function f() { console.log("f ran"); }
if (false) { function g() {} }
console.log(typeof g);
{ function h() { return 1; } }
console.log(typeof h);
