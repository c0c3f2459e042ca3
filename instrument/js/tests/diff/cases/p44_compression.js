// Pitfall 44 (gzip/br, streaming) is a proxy concern; JS side: a larger script round-trips.
var parts44 = [];
for (var i44 = 0; i44 < 200; i44++) parts44[i44] = "item" + i44;
console.log(parts44.length, parts44[199]);
