// an async function as the body of do-while
do async function f() {} while (0);
