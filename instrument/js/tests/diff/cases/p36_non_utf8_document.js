// options: ascii_only
// Pitfall 36: scripts of non-UTF-8 documents are emitted as ASCII.
var s = '日本';
var t = `語 ${s}`;
console.log(s, s.length, t, "\u00e9" === "é");
