// Pitfall 18: with keeps dynamic scoping and the this of calls.
var o = { f() { return this === o; }, x: 1 };
var x = "global";
with (o) {
  console.log(f(), x);
  x = 2;
}
console.log(o.x, x);
