// Pitfall 27: no own properties are added to functions or objects.
function f() {}
console.log(Object.getOwnPropertyNames(f).sort().join());
var o = { a: 1 };
o.b = 2;
o["c"] = 3;
console.log(Object.getOwnPropertyNames(o).join());
var F = function () {};
var C = class {};
console.log(F.name, C.name);
