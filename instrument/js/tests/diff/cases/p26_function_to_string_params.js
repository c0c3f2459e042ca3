// Pitfall 26: parameter names survive (no renaming), as AngularJS DI needs.
var f = function ($scope, $http) { return 1; };
console.log(f.toString().match(/\(([^)]*)\)/)[1].replace(/\s/g, ""));
function g(a, b = 1, ...rest) {}
console.log(g.length, g.name);
