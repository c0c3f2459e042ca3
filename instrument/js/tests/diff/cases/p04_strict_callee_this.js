"use strict";
// Pitfall 4: a strict callee sees this === undefined; methods keep their receiver.
// expect: w Global.f
// expect: r Global.f
function f() { return this; }
console.log(f() === undefined);
var o = { m() { return this; } };
console.log(o.m() === o);
