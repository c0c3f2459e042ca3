// an async function as the body of for-in
for (var x in {}) async function f() {}
