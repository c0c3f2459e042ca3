"use strict";
// Pitfall 3: the directive prologue stays first, so strict mode survives.
// expect-not: w Global.undeclaredVar
console.log((function () { return this; })() === undefined);
try { undeclaredVar = 1; } catch (e) { console.log(e.name); }
