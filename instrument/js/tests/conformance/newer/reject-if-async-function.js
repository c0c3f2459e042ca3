// an async function as the body of if
if (1) async function f() {}
