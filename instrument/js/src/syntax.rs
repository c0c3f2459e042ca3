//! Grammar rules swc's parser does not enforce, checked on the source text at the places the
//! tree points to (the early-error walk in `early.rs` calls these; each looks at a few bytes,
//! so the walk stays one pass):
//!
//! - a `for (;;)` head needs both semicolons: automatic semicolon insertion never adds one
//!   there, and swc accepts `for (a; b⏎) …` as if the second were written;
//! - the modifiers before a member name (`get`, `set`, `static`, `async`) may not be written
//!   with escapes (`g\u0065t x() {}` is a method named `get`… in no engine: a SyntaxError),
//!   and no line terminator may follow `async` (`async⏎foo() {}` in an object literal);
//! - untagged templates may not hold `\1`–`\9` or `\0` before a digit (tagged ones may: their
//!   cooked value is then undefined);
//! - a `\u{…}` escape holds hex digits only (no numeric separators: `\u{1_0}`), in
//!   identifiers, strings and untagged templates.
//!
//! A check that meets text it does not expect reports an error: refusing serves the original
//! bytes, which is always correct.

/// Whether `c` is a JavaScript line terminator.
fn line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Whether `c` is JavaScript white space (not a line terminator): tab, VT, FF, ZWNBSP and the
/// Unicode space separators.
fn white_space(c: char) -> bool {
    matches!(c, '\t' | '\u{b}' | '\u{c}' | '\u{feff}')
        || (c.is_whitespace() && !line_terminator(c) && c != '\u{85}')
}

/// Skips white space, line terminators and comments from byte `at` of `src`: the offset of the
/// next token and whether a line terminator was crossed (also one inside a block comment), or
/// `None` when a comment does not end.
pub(crate) fn skip_trivia(src: &str, mut at: usize) -> Option<(usize, bool)> {
    let mut newline = false;
    loop {
        let rest = src.get(at..)?;
        if let Some(body) = rest.strip_prefix("/*") {
            let end = body.find("*/")?;
            newline |= body[..end].contains(line_terminator);
            at += 2 + end + 2;
            continue;
        }
        if let Some(body) = rest.strip_prefix("//") {
            match body.find(line_terminator) {
                Some(end) => at += 2 + end,
                None => return Some((src.len(), newline)),
            }
            continue;
        }
        match rest.chars().next() {
            Some(c) if line_terminator(c) => {
                newline = true;
                at += c.len_utf8();
            }
            Some(c) if white_space(c) => at += c.len_utf8(),
            _ => return Some((at, newline)),
        }
    }
}

/// Whether a semicolon (after trivia) follows byte `at`: the semicolons of a `for (;;)` head.
pub(crate) fn semicolon_at(src: &str, at: usize) -> bool {
    skip_trivia(src, at).is_some_and(|(i, _)| src.as_bytes().get(i) == Some(&b';'))
}

/// The offset just after the `(` of a `for` head whose statement starts at `at` (`None` when
/// the text there is not `for (`).
pub(crate) fn after_for_paren(src: &str, at: usize) -> Option<usize> {
    src.get(at..)?.strip_prefix("for")?;
    let (i, _) = skip_trivia(src, at + "for".len())?;
    (src.as_bytes().get(i) == Some(&b'(')).then_some(i + 1)
}

/// What is wrong with the modifiers written before a member's name (`prefix`: the text from
/// the start of the member to its key), if anything.
pub(crate) fn modifier_error(prefix: &str, is_async: bool) -> Option<&'static str> {
    if prefix.contains('\\') {
        return Some("a member modifier (`get`, `set`, `static`, `async`) written with escapes");
    }
    if is_async {
        let after = prefix
            .rfind("async")
            .map(|i| &prefix[i + "async".len()..])?;
        // Only up to the next token (`async *⏎m() {}` is fine); a line terminator inside a
        // comment counts.
        if skip_trivia(after, 0).is_none_or(|(_, newline)| newline) {
            return Some("a line terminator after `async` in a method");
        }
    }
    None
}

/// Whether the escape `\u{…}` starting at `body` (just after `u{`) holds anything but hex
/// digits before its `}` (a numeric separator, `\u{1_0}`).
fn bad_brace_escape(body: &[u8]) -> bool {
    let end = body.iter().position(|&b| b == b'}').unwrap_or(body.len());
    !body[..end].iter().all(u8::is_ascii_hexdigit)
}

/// Whether `text` (an identifier, a string's raw text) holds a `\u{…}` escape with a
/// non-hex character.
pub(crate) fn bad_code_point_escape(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if b.get(i + 1) == Some(&b'u')
                && b.get(i + 2) == Some(&b'{')
                && bad_brace_escape(&b[i + 3..])
            {
                return true;
            }
            // Whatever follows a backslash is escaped (`\\u{…}` is no escape sequence).
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// Whether the raw text of an untagged template element holds an escape that is an error
/// there: `\1`–`\9`, `\0` before a digit, a `\u{…}` with a non-hex character.
pub(crate) fn bad_template_escape(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'1'..=b'9') => return true,
            Some(b'0') if b.get(i + 2).is_some_and(u8::is_ascii_digit) => return true,
            Some(b'u') if b.get(i + 2) == Some(&b'{') && bad_brace_escape(&b[i + 3..]) => {
                return true;
            }
            _ => {}
        }
        i += 2;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trivia_notes_line_terminators_in_comments() {
        assert_eq!(skip_trivia("  x", 0), Some((2, false)));
        assert_eq!(skip_trivia(" /* a */ x", 0), Some((9, false)));
        assert_eq!(skip_trivia(" /* \n */x", 0), Some((8, true)));
        assert_eq!(skip_trivia("// c\n;", 0), Some((5, true)));
        assert_eq!(skip_trivia("\u{2028};", 0), Some((3, true)));
        assert_eq!(skip_trivia("\u{a0}\u{feff};", 0), Some((5, false)));
        assert_eq!(skip_trivia("/* open", 0), None);
        assert!(semicolon_at("a ; b", 1));
        assert!(!semicolon_at("a \n b", 1));
        assert_eq!(after_for_paren("for /**/ (;;)", 0), Some(10));
        assert_eq!(after_for_paren("foo(", 0), None);
    }

    #[test]
    fn modifiers() {
        assert_eq!(modifier_error("get ", false), None);
        assert_eq!(modifier_error("static async *", true), None);
        assert!(modifier_error("g\\u0065t ", false).is_some());
        assert!(modifier_error("async\n", true).is_some());
        assert!(modifier_error("async /*\n*/ ", true).is_some());
        assert_eq!(modifier_error("static\nasync ", true), None);
        assert_eq!(modifier_error("async *\n", true), None);
    }

    #[test]
    fn escapes() {
        assert!(bad_code_point_escape("\\u{1_0}"));
        assert!(bad_code_point_escape("a\\u{6_1}"));
        assert!(!bad_code_point_escape("\\u{10}"));
        assert!(!bad_code_point_escape("\\\\u{1_0}"));
        assert!(bad_template_escape("\\8"));
        assert!(bad_template_escape("a\\9"));
        assert!(bad_template_escape("\\09"));
        assert!(!bad_template_escape("\\0"));
        assert!(!bad_template_escape("\\\\8"));
        assert!(bad_template_escape("\\u{1_0}"));
    }
}
