// Pitfall 12: compound assignment evaluates base and key once.
// expect: w Array[*]$[0]
// expect: r Array[*]$[0]
var i = 0, a = [1, 2, 3];
a[i++] += 10;
console.log(i, a);
var calls = 0;
function base() { calls++; return a; }
base()[1] *= 3;
base()[2] **= 2;
base().length ||= 9;
console.log(calls, a);
var s = { t: "x" };
s.t += "y";
s.u ??= 5;
console.log(s);
