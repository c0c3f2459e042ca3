// a separator in an untagged template's escape
`\u{1_0}`;
