// Pitfall 13: the key expression is evaluated once and ToPropertyKey runs as often as it does
// natively (V8: once for reads, calls and plain writes, twice for compound/update).
// expect: w Object[*].m
// expect: r Object[*].k
var c = 0, o = {};
var k = { toString() { c++; return "k"; } };
o[k] = 1;
console.log(c);
o[k] += 1;
console.log(c);
o[k]++;
console.log(c);
var x = o[k];
console.log(x, c);
o.m = function () { return this === o; };
var km = { toString() { c++; return "m"; } };
console.log(o[km](), c);
delete o[k];
console.log(c, o.k);
var sym = Symbol("s");
o[sym] = 3;
console.log(o[sym]);
