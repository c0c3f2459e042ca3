// Pitfall 17: sloppy arguments aliasing is kept.
function f(x) { arguments[0] = 2; return x; }
console.log(f(1));
function g(x) { x = 3; return arguments[0]; }
console.log(g(1));
function h(x) { "use strict"; arguments[0] = 2; return x; }
console.log(h(1));
