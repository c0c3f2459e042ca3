// Conformance: inside `with (proxy)` the instrumented code looks up exactly the names the
// program does: the runtime is reached without a scope lookup (no `has` trap for it).
var seen = [];
var target = { x: 1, f() { return this === p; } };
var p = new Proxy(target, {
  has(t, k) { seen.push("has " + String(k)); return k in t; },
  get(t, k) { seen.push("get " + String(k)); return t[k]; },
});
with (p) {
  x;
  x = 2;
  console.log(f(), (f)(), typeof y);
  (function () { return x + 1; })();
}
with (p) x++;
console.log(seen.join());
// output-contains: false.__shepherd
