// Pitfall 2: TDZ is kept; the prologue never touches let/const early.
// expect: r Scope[*].q
function f() { g(); let x = 1; function g() {} return x; }
console.log(f());
try { (function () { typeof y; let y; })(); } catch (e) { console.log("tdz", e.name); }
function t() { const r = () => q; try { r(); } catch (e) { console.log("captured tdz", e.name); } let q = 1; q++; return r(); }
console.log(t());
