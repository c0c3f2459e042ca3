// Pitfall 14: calls keep their receiver (o.m(), o[k](), tagged templates, optional calls).
// expect: r *.m
var o = { m() { return this === o; }, tag(s) { return this === o; } };
var k = "m";
console.log(o.m(), o[k](), o.tag`x`, o?.m(), o.m?.(), o?.[k](), (o.m)());
var arr = [1, 2, 3];
console.log(arr.map(function (x) { return x * 2; }).join());
console.log("abc".toUpperCase(), (5).toFixed(1));
