// code point escapes without separators
var \u{61}b = "\u{1F600}";
`\u{10}`;
({ \u{62}: 1 });
'\\u{1_0}';
