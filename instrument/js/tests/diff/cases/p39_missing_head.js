// Pitfall 39 (runtime first without <head>) is tested in instrument/ (html). JS side: the
// whole-document script `a=1` is a logged global write.
// expect: w Global.a
a = 1;
console.log(a);
