// an async function as the body of for
for (;;) async function f() {}
