// Pitfall 43 (304 revalidation) is a proxy concern; JS side: instrumenting the same source
// twice gives the same output (the cache relies on it; see the determinism unit test).
var r43 = [1, 2, 3].map(function (x) { return x + 1; });
console.log(r43.join());
