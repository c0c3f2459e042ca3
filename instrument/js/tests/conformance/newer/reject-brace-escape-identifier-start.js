// a separator in an identifier's first escape
var \u{6_1} = 1;
