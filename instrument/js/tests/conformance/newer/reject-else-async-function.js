// an async function as the body of else
if (1) ; else async function f() {}
