// an async function as the body of with
with ({}) async function f() {}
