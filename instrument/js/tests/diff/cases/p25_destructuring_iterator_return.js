// Pitfall 25: destructuring still calls the iterator's return().
// expect: w Global.b
var closed = 0;
var it = { [Symbol.iterator]() { return { next() { return { value: 1, done: false }; }, return() { closed++; return {}; } }; } };
const [a] = it;
var b;
[b] = it;
var o = {};
[o.p, o["q"]] = [1, 2];
({ x: o.r, ...o.rest } = { x: 3, y: 4 });
console.log(a, b, closed, JSON.stringify(o));
