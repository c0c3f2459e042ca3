// a line break after async before *
({ async
 *foo() {} });
