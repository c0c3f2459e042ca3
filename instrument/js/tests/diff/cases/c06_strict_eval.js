// Conformance: eval code from a strict caller is strict code also once instrumented: legacy
// octal literals and escapes still throw, function declarations stay local to the eval.
'use strict';
function t(src) { try { return eval(src); } catch (e) { return e.name; } }
console.log(t("01"), t("'\\08'"), t("'\\8'"), t("010 + 1"), t("0.5 + 08"));
console.log(t("var v = 1; v"), typeof v);
console.log(t("function g() { return 7; } g()"), typeof g);
console.log(t("{ function h() { return 8; } } typeof h"), typeof h);
console.log(t("with ({}) 1"), t("delete Object"), t("arguments = 1"));
var sloppy = (0, eval)("(function () { return eval('010 + 1'); })");
console.log(sloppy());
// expect: instrument 01
