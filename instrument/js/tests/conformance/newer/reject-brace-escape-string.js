// a separator in a string's escape
"\u{1_0}";
