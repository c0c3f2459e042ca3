// a line break inside a comment after async
({ async /*
*/ foo() {} });
