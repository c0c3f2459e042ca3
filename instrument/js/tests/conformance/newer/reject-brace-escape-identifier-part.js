// a separator in an identifier's later escape
var a\u{6_1} = 1;
