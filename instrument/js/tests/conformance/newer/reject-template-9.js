// \9 in an untagged template
`a${1}\9`;
