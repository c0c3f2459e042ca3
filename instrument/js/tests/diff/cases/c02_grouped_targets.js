// Conformance: grouped assignment and update targets are written, never read first: an
// unresolvable `((g1)) = 1` creates a global as in plain code, `((y))++` stays a valid
// target, and a parenthesised identifier gives an anonymous function no name.
((g1)) = 1;
(g2) = 2;
var y = 1;
((y))++; (y)--; --((y)); ++(y); (((y))) += 3;
console.log(g1, g2, y);
var o = { p: 1 };
((o.p))++; ((o.p)) += 2; ((o["p"])) = ((o.p)) * 2;
console.log(o.p);
var fn3, fn4, fn6;
(fn) = function () {};
((fn2)) = () => {};
(fn3) ||= function () {};
[(fn4) = function () {}] = [];
var fn5 = function () {};
({ a: (fn6) = function () {} } = {});
console.log(JSON.stringify([fn.name, fn2.name, fn3.name, fn4.name, fn5.name, fn6.name]));
[(a1)] = [1];
({ b: (b1) } = { b: 2 });
for ((k1) in { x: 1 });
do ; while (((z1) = 0));
console.log(a1, b1, k1, z1);
// expect: w Global.g1
// expect: w Global.g2
// expect: w Global.a1
// expect: w Global.b1
// expect: w Global.k1
// expect: w Global.z1
