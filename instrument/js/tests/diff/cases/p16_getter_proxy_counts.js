// Pitfall 16: getters and Proxy traps run exactly once per access.
var c = 0;
var o = { get p() { c++; return 1; }, set p(v) { c += 10; } };
o.p;
var v = o.p + o.p;
o.p = 5;
o.p += 1;
o.p++;
console.log(c);
var t = 0;
var px = new Proxy({}, { get(tg, k) { t++; return 5; }, set(tg, k, v) { t += 100; tg[k] = v; return true; } });
px.a;
px["b"];
px.c = 1;
px.d += 1;
px.e++;
console.log(t);
