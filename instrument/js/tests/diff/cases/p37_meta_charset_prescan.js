// Pitfall 37 is about HTML injection (instrument/ html tests). JS side: the pass never adds
// a byte-order mark or non-ASCII prologue.
// output-not-contains: ﻿
var x37 = 1;
console.log(x37);
