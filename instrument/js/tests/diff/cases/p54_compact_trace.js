// Pitfall 54 (first read/write per action) is the controller's dedup; JS side: every access
// of a loop is still reported to T (the stub keeps repeats).
// expect: r Global.total
var total = 0;
for (var i = 0; i < 3; i++) total += i;
console.log(total);
