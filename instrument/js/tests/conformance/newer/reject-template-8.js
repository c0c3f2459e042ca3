// \8 in an untagged template
`\8`;
