// a line break after async
({ async
 foo() {} });
