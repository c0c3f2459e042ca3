// Pitfall 22: the continuation after await is announced to the runtime.
// expect: await
// expect: resume
// expect: w Global.x
var x;
async function f() { await null; x = 1; console.log("after", x); return x; }
f().then(function (v) { console.log("then", v); });
console.log("before");
