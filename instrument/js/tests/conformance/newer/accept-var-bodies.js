// a var statement is a statement
if (a) var b = 1;
while (false) var c;
for (var k in {}) var d;
for (;;) { async function f() {} break; }
