// kind: jsurl
// The completion value of a script that ends with its directive prologue is kept (the pass's
// statements after the prologue would otherwise make it undefined).
'hello <b>world</b>'
//--- next script ---
'use strict'; function f() { return this; } var g = f;
//--- next script ---
'a'; 'b'; var x = 1;
//--- next script ---
'a'; 42;
