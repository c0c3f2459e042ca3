"use strict";
// Pitfall 5: a failed write in strict code still throws (and is not logged as a write).
// expect-not: w *.p
var o = Object.freeze({ p: 1 });
try { o.p = 2; } catch (e) { console.log(e.name); }
try { o.q += 1; } catch (e) { console.log(e.name); }
try { delete o.p; } catch (e) { console.log(e.name); }
console.log(o.p);
