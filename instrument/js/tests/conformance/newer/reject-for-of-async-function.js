// an async function as the body of for-of
for (var x of []) async function f() {}
