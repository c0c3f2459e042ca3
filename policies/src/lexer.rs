//! The policy language is line-oriented: each line is cut into tokens on its own. `#` starts a
//! comment (outside strings); leading whitespace is the line's indentation (template bodies).

use crate::diag::{Diagnostic, Span};

/// One token of a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A word: keyword, kind, event type, template or variable name (`[A-Za-z_][\w-]*`).
    Name(String),
    /// A quoted string (`"…"` or `'…'`, with `\\`, `\"`, `\'` escapes).
    Str(String),
    /// A whole number.
    Num(u64),
    /// A duration (`500ms`, `10s`, `2m`) in milliseconds.
    Duration(u64),
    /// Punctuation: `(`, `)`, `,`, `:`, `=`, `<`, `<=`, `>`, `>=`.
    Punct(&'static str),
}

impl Tok {
    /// How the token reads in a message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::Num(n) => format!("number {n}"),
            Tok::Duration(ms) => format!("duration {ms}ms"),
            Tok::Punct(p) => format!("`{p}`"),
        }
    }
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Its first character.
    pub span: Span,
}

/// A line cut into tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// Line number, from 1.
    pub number: u32,
    /// Leading whitespace, in characters (0: a top-level line).
    pub indent: u32,
    /// The tokens (never empty: blank and comment-only lines are not returned).
    pub tokens: Vec<Token>,
    /// Where the line ends (for "expected … at end of line").
    pub end: Span,
    /// The text without comment and surrounding whitespace.
    pub text: String,
}

/// Longest policy file accepted, in bytes (a policy is a few dozen lines).
pub const MAX_SOURCE: usize = 1 << 20;

/// Cuts `source` into lines of tokens. Lexical errors are reported and their line skipped.
pub fn lex(source: &str, diags: &mut Vec<Diagnostic>) -> Vec<Line> {
    let mut lines = Vec::new();
    if source.len() > MAX_SOURCE {
        diags.push(Diagnostic::error(
            Span::new(1, 1),
            format!("policy file is larger than {MAX_SOURCE} bytes"),
        ));
        return lines;
    }
    for (i, raw) in source.split('\n').enumerate() {
        let number = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some(line) = lex_line(number, raw, diags) {
            lines.push(line);
        }
    }
    lines
}

fn lex_line(number: u32, raw: &str, diags: &mut Vec<Diagnostic>) -> Option<Line> {
    let chars: Vec<char> = raw.chars().collect();
    let span = |i: usize| Span::new(number, u32::try_from(i + 1).unwrap_or(u32::MAX));
    let mut i = 0;
    while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
        i += 1;
    }
    let indent = u32::try_from(i).unwrap_or(u32::MAX);
    let mut tokens = Vec::new();
    let mut text_end = i;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c == ' ' || c == '\t' {
            i += 1;
            continue;
        }
        if c == '#' {
            break;
        }
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '-')
            {
                i += 1;
            }
            Tok::Name(chars[start..i].iter().collect())
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            let Ok(n) = digits.parse::<u64>() else {
                diags.push(Diagnostic::error(span(start), "number too large"));
                return None;
            };
            let unit_start = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let unit: String = chars[unit_start..i].iter().collect();
            match unit.as_str() {
                "" => Tok::Num(n),
                "ms" => Tok::Duration(n),
                "s" => Tok::Duration(n.saturating_mul(1000)),
                "m" | "min" => Tok::Duration(n.saturating_mul(60_000)),
                _ => {
                    diags.push(Diagnostic::error(
                        span(unit_start),
                        format!("unknown unit `{unit}` (durations are written 500ms, 10s or 2m)"),
                    ));
                    return None;
                }
            }
        } else if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            let mut closed = false;
            while i < chars.len() {
                let d = chars[i];
                if d == '\\' && i + 1 < chars.len() {
                    s.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                i += 1;
                if d == c {
                    closed = true;
                    break;
                }
                s.push(d);
            }
            if !closed {
                diags.push(Diagnostic::error(
                    span(start),
                    "string is not closed on this line",
                ));
                return None;
            }
            Tok::Str(s)
        } else {
            let next = chars.get(i + 1).copied();
            let (p, len): (&'static str, usize) = match (c, next) {
                ('<', Some('=')) => ("<=", 2),
                ('>', Some('=')) => (">=", 2),
                ('<', _) => ("<", 1),
                ('>', _) => (">", 1),
                ('(', _) => ("(", 1),
                (')', _) => (")", 1),
                (',', _) => (",", 1),
                (':', _) => (":", 1),
                ('=', _) => ("=", 1),
                _ => {
                    diags.push(Diagnostic::error(
                        span(start),
                        format!("unexpected character {c:?}"),
                    ));
                    return None;
                }
            };
            i += len;
            Tok::Punct(p)
        };
        tokens.push(Token {
            tok,
            span: span(start),
        });
        text_end = i;
    }
    if tokens.is_empty() {
        return None;
    }
    let text: String = chars[indent as usize..text_end].iter().collect();
    Some(Line {
        number,
        indent,
        tokens,
        end: span(text_end),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let mut d = Vec::new();
        let lines = lex(src, &mut d);
        assert!(d.is_empty(), "{d:?}");
        lines
            .into_iter()
            .flat_map(|l| l.tokens)
            .map(|t| t.tok)
            .collect()
    }

    #[test]
    fn cuts_a_rule() {
        assert_eq!(
            toks("postpone load on \"iframe, img\" until after 10s # why\n"),
            vec![
                Tok::Name("postpone".into()),
                Tok::Name("load".into()),
                Tok::Name("on".into()),
                Tok::Str("iframe, img".into()),
                Tok::Name("until".into()),
                Tok::Name("after".into()),
                Tok::Duration(10_000),
            ]
        );
        assert_eq!(
            toks("timer delay <= 1000 js 'a\\'b'"),
            vec![
                Tok::Name("timer".into()),
                Tok::Name("delay".into()),
                Tok::Punct("<="),
                Tok::Num(1000),
                Tok::Name("js".into()),
                Tok::Str("a'b".into()),
            ]
        );
    }

    #[test]
    fn keeps_indentation_and_skips_blank_lines() {
        let mut d = Vec::new();
        let lines = lex("# c\n\ntemplate t(u):\n  discard user\r\n", &mut d);
        assert_eq!(lines.len(), 2);
        assert_eq!((lines[0].number, lines[0].indent), (3, 0));
        assert_eq!((lines[1].number, lines[1].indent), (4, 2));
        assert_eq!(lines[1].text, "discard user");
    }

    #[test]
    fn reports_lexical_errors_with_columns() {
        let mut d = Vec::new();
        lex("postpone user until after 3h\non \"x", &mut d);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].span, Span::new(1, 28));
        assert_eq!(d[1].span, Span::new(2, 4));
    }
}
