// \0 before a digit in an untagged template
`\09`;
