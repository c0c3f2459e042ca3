// Pitfall 28: the runtime keeps working when the page overwrites natives.
Reflect.ownKeys = null;
Object.defineProperty = null;
Map.prototype.get = null;
Function.prototype.apply = null;
Array.prototype.push = null;
var k = { toString() { return "z"; } };
var o = {};
o[k] = 1;
console.log(o.z, o[k]);
