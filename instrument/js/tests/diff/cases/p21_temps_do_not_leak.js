// Pitfall 21: temporaries neither collide across scripts nor add enumerable globals.
var o = {};
o.p = 1;
o["q" + 1] = 2;
o.p++;
delete o.q1;
//--- next script ---
var o2 = {};
o2.p = 1;
o2[String("r")] = 2;
console.log(Object.keys(globalThis).sort().join());
console.log(Object.getOwnPropertyNames(globalThis).filter(function (n) { return n.indexOf("__sh$") === 0; }).join());
