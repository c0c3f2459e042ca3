// tagged templates may hold any escape
String.raw`\8 \9 \09 \u{1_0}`;
`\0`;
`\\8`;
