// Pitfall 11: update expressions coerce natively (strings to numbers, BigInt stays BigInt).
// expect: w Global.n
// expect: w *.s
var o = { s: "1" };
o.s++;
console.log(o.s, typeof o.s);
let b = 1n;
b++;
console.log(typeof b, b);
var n = "5";
console.log(n++, n, ++n, n--, --n);
var q = { v: 2n };
console.log(q.v++, ++q.v, q.v--, --q.v, q.v);
function cl() { var k = "7"; return function () { return [k++, k]; }; }
console.log(cl()());
