// kind: handler
// Pitfall 31: a handler whose attribute was entity-encoded runs the decoded code.
var a = 1, b = 1;
function f(s) { console.log("f", s); }
if (a && b) f("x");
