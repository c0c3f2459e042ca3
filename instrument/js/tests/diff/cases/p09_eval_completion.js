// kind: jsurl
// Pitfall 9: the completion value of instrumented code is unchanged (the harness evaluates the
// program with indirect eval and prints its completion value).
1;
if (true) { 2; }
function fn9() {}
var v9 = function () {};
class C9 {}
for (var k9 in {}) {}
