// Pitfall 8: eval of a non-string returns it unchanged.
var obj = {};
console.log(eval(42) === 42, eval(obj) === obj, (0, eval)(obj) === obj);
