// an async function as the body of while
while (0) async function f() {}
