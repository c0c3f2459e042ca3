// a line break after async before a computed key
({ async
 [x]() {} });
