// Pitfall 38 (doctype placement) is tested in instrument/ (html). JS side: output of a
// script is a single script (no HTML markup is produced).
var q38 = "<!DOCTYPE html>".length;
console.log(q38);
