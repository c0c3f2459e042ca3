// Every access carries its source position (line and UTF-16 column in the original text);
// `__shepherd.src` registers the script (here: an inline script of https://diff.test/page.html).
// expect: w Global.counter @ https://diff.test/page.html#inline-*:10:5
// expect: w Global.counter @ https://diff.test/page.html#inline-*:12:17
// expect: r Global.s @ https://diff.test/page.html#inline-*:12:27
// expect: w Object[*].label @ https://diff.test/page.html#inline-*:13:14
// expect: r Global.t @ https://diff.test/page.html#inline-*:13:24
// expect: w Global.make @ https://diff.test/page.html#inline-*:14:10
// expect: r Scope[*].n @ https://diff.test/page.html#inline-*:14:43
var counter = 0;
var o = { label: '' };
var s = "日本😀"; counter = s.length;
var t = "é"; o.label = t;
function make() { let n = 1; return () => n++; }
make()();
