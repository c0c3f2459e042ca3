// Conformance: `new tag`x`` constructs what the tag returns (`new (tag`x`)`), also when the
// tag is a logged global or member.
function tag(s) { return function C() { this.s = s[0]; }; }
var x = new tag`hi`;
var o = { t: tag };
var y = new o.t`yo`;
var z = new (tag`p`)();
console.log(x.s, y.s, z.s, x instanceof Object);
// expect: r Global.tag
