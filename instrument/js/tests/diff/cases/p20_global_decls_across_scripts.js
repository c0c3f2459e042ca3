// Pitfall 20: top-level let/const/var stay global bindings shared across scripts.
// expect: w Global.a
let a = 1;
const c = 2;
var v = 3;
//--- next script ---
a++;
console.log(a);
try { c = 3; } catch (e) { console.log(e.name); }
console.log(delete globalThis.v, typeof v);
