// U+2028 after async
x = { async  foo() {} };
