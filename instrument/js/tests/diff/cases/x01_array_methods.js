// Array method calls log whole-array accesses: mutators read and write `$LEN`, readers read it.
// expect: w Array[*]$LEN
// expect: r Array[*]$LEN
// expect: w Array[*]$[1]
// expect-not: r Array[*]$[push]
var a = [1, 2];
a.push(3);
a[1] = 5;
console.log(a.map(function (x) { return x * 2; }).join(), a.length, a.indexOf(5));
a.length = 1;
console.log(a.join());
