// Pitfall 48: direct eval hands its string to the runtime's instrumenter.
// expect: instrument 1+1
// expect: instrument y48 = 2
console.log(eval("1+1"));
var f = Function("return 2");
console.log(f());
eval("y48 = 2");
console.log(y48);
