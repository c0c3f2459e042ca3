// a separator in a private name's escape
class C { #\u{6_1}; }
