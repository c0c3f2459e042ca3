"use strict";
// Pitfall 23: strict recursion (no enter/exit wrappers, no try/finally added).
function loop(n) { return n === 0 ? "done" : loop(n - 1); }
console.log(loop(2000));
