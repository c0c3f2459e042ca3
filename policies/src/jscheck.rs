//! A light check of a `js "…"` expiration. The runtime compiles each one into its script as
//! `function () { return (EXPR\n); }`, so the text must not be able to close that function
//! early or leave a string, comment or template open: brackets balance and never go below
//! zero, strings, template literals, regular expressions and comments end, and there is no
//! top-level `;`. It is not a parser: a wrong expression that passes still fails in the
//! browser, where the runtime catches its errors (an expression that throws is false).

/// `Ok`, or the character offset of the problem and what it is.
pub fn check_expression(src: &str) -> Result<(), (usize, String)> {
    let chars: Vec<char> = src.chars().collect();
    if chars.iter().all(|c| c.is_whitespace()) {
        return Err((0, "the expression is empty".into()));
    }
    if src.to_ascii_lowercase().contains("</script") {
        let at = src.to_ascii_lowercase().find("</script").unwrap_or(0);
        return Err((
            src[..at].chars().count(),
            "`</script` cannot appear in an inlined script".into(),
        ));
    }
    let mut stack: Vec<(char, usize)> = Vec::new();
    let mut i = 0;
    // Whether a `/` here starts a regular expression (after an operator or an opening bracket).
    let mut regex_ok = true;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        match c {
            '\'' | '"' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => return Err((start, "string is not closed".into())),
                        Some('\\') => i += 2,
                        Some(&d) if d == c => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                regex_ok = false;
            }
            '`' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err((start, "template literal is not closed".into())),
                        Some('\\') => i += 2,
                        Some('`') => {
                            i += 1;
                            break;
                        }
                        Some('$') if chars.get(i + 1) == Some(&'{') => {
                            return Err((i, "template literal substitutions (${…}) are not supported here; use +".into()));
                        }
                        Some(_) => i += 1,
                    }
                }
                regex_ok = false;
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                return Err((
                    start,
                    "a `//` comment would swallow the end of the generated function".into(),
                ));
            }
            '/' if chars.get(i + 1) == Some(&'*') => match find(&chars, i + 2, "*/") {
                Some(end) => i = end + 2,
                None => return Err((start, "comment is not closed".into())),
            },
            '/' if regex_ok => {
                i += 1;
                let mut class = false;
                loop {
                    match chars.get(i) {
                        None | Some('\n') => {
                            return Err((start, "regular expression is not closed".into()));
                        }
                        Some('\\') => i += 2,
                        Some('[') => {
                            class = true;
                            i += 1;
                        }
                        Some(']') => {
                            class = false;
                            i += 1;
                        }
                        Some('/') if !class => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                while chars.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
                    i += 1;
                }
                regex_ok = false;
            }
            '(' | '[' | '{' => {
                stack.push((c, i));
                i += 1;
                regex_ok = true;
            }
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match stack.pop() {
                    Some((open, _)) if open == want => {}
                    _ => return Err((i, format!("unbalanced `{c}`"))),
                }
                i += 1;
                regex_ok = false;
            }
            ';' if stack.is_empty() => {
                return Err((i, "one expression only: no `;` outside brackets".into()));
            }
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let s = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '$' || *c == '.')
                {
                    i += 1;
                }
                let word: String = chars[s..i].iter().collect();
                // After these keywords an expression (so maybe a regex) follows.
                regex_ok = matches!(
                    word.as_str(),
                    "typeof"
                        | "instanceof"
                        | "in"
                        | "of"
                        | "new"
                        | "delete"
                        | "void"
                        | "return"
                        | "case"
                        | "do"
                        | "else"
                );
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                i += 1;
                regex_ok = true;
            }
        }
    }
    if let Some((open, at)) = stack.pop() {
        return Err((at, format!("`{open}` is not closed")));
    }
    Ok(())
}

fn find(chars: &[char], from: usize, pat: &str) -> Option<usize> {
    let p: Vec<char> = pat.chars().collect();
    (from..chars.len().saturating_sub(p.len() - 1)).find(|&i| chars[i..i + p.len()] == p[..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_expressions() {
        for ok in [
            "typeof loadThumbs === 'function'",
            "document.querySelectorAll('#list > li').length > 2 && window.ready",
            "/done/.test(document.body.className)",
            "a / b > 1",
            "(function () { return 1; })()",
            "x[\"]\"] === `)`",
        ] {
            assert_eq!(check_expression(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_what_could_break_the_runtime() {
        for (bad, at) in [
            ("1); evil(); (2", 1),
            ("a; b", 1),
            ("'open", 0),
            ("f(", 1),
            ("x // y", 2),
            ("'</script>'", 1),
            ("`${x}`", 1),
            ("", 0),
        ] {
            let e = check_expression(bad).expect_err(bad);
            assert_eq!(e.0, at, "{bad}: {}", e.1);
        }
    }
}
