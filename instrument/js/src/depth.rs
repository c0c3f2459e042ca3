//! A cheap pre-check that rejects pathological input before the recursive parser, visitors and
//! emitter see it (a stack overflow would abort the whole process, and some chain shapes are
//! superlinear in swc). Real code stays far below every limit; refused input is served
//! uninstrumented (the caller counts it).
//!
//! Limits: bracket nesting (`(`, `[`, `{`), runs of prefix operators (`!!!…x`), binary
//! operators within one statement-ish span (between `;`, `{`, `}`), and `else if` chains.
//! Strings, template text and comments are skipped roughly; regular expression literals are
//! not recognised, which can only over-count (the source is then served uninstrumented).

/// Longest run of prefix operators accepted.
const MAX_PREFIX_RUN: usize = 1000;
/// Most binary operators accepted between two statement-ish boundaries.
const MAX_BINARY_SPAN: usize = 20_000;
/// `else if` count above which density is checked.
const ELSE_IF_FLOOR: usize = 2000;

/// True when `src` exceeds one of the limits; `limit` is the bracket nesting limit.
pub(crate) fn too_deep(src: &str, limit: usize) -> bool {
    let b = src.as_bytes();
    let mut depth = 0usize;
    let mut prefix_run = 0usize;
    let mut binary_span = 0usize;
    let mut else_ifs = 0usize;
    // Whether the previous significant byte ends an operand (so `+`/`-` are binary).
    let mut after_operand = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let mut operand = false;
        match c {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
                if c == b'{' {
                    binary_span = 0;
                }
                prefix_run = 0;
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if c == b'}' {
                    binary_span = 0;
                }
                prefix_run = 0;
                operand = true;
            }
            b';' => {
                binary_span = 0;
                prefix_run = 0;
            }
            b'!' | b'~' if b.get(i + 1) != Some(&b'=') => {
                prefix_run += 1;
                if prefix_run > MAX_PREFIX_RUN {
                    return true;
                }
            }
            b'+' | b'-' => {
                if after_operand {
                    binary_span += 1;
                    if binary_span > MAX_BINARY_SPAN {
                        return true;
                    }
                    prefix_run = 0;
                } else {
                    prefix_run += 1;
                    if prefix_run > MAX_PREFIX_RUN {
                        return true;
                    }
                }
            }
            b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'<' | b'>' | b'=' | b'?' | b':' | b'.'
                if !(c == b'/' && matches!(b.get(i + 1), Some(b'/') | Some(b'*'))) =>
            {
                binary_span += 1;
                if binary_span > MAX_BINARY_SPAN {
                    return true;
                }
                prefix_run = 0;
            }
            q @ (b'"' | b'\'' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' {
                        i += 1;
                    } else if q != b'`' && b[i] == b'\n' {
                        break;
                    }
                    i += 1;
                }
                prefix_run = 0;
                operand = true;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'e' if b[i..].starts_with(b"else") && !b.get(i + 4).is_some_and(|c| is_ident(*c)) => {
                let mut j = i + 4;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b[j..].starts_with(b"if") && !b.get(j + 2).is_some_and(|c| is_ident(*c)) {
                    else_ifs += 1;
                }
                i += 3;
                prefix_run = 0;
            }
            c if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            c => {
                if is_ident(c) {
                    operand = true;
                }
                prefix_run = 0;
            }
        }
        after_operand = operand;
        i += 1;
    }
    // A long file may have many `else if`s; only dense ones are the deep-chain shape.
    else_ifs > ELSE_IF_FLOOR && else_ifs * 100 > b.len()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    #[test]
    fn limits() {
        assert!(!too_deep(
            "var a = [1, -2, -3]; x = a + b - c; if (a) b(); else if (c) d();",
            1000
        ));
        assert!(too_deep(&"[".repeat(1001), 1000));
        assert!(!too_deep(&"[".repeat(1000), 1000));
        assert!(too_deep(&format!("x = {}a;", "!".repeat(5000)), 1000));
        assert!(too_deep(&format!("x = {}a;", "- ".repeat(5000)), 1000));
        assert!(too_deep(&format!("x = {}a;", "a + ".repeat(30_000)), 1000));
        assert!(!too_deep(
            &format!("x = [{}];", "-1, ".repeat(60_000)),
            1000
        ));
        assert!(too_deep(
            &format!("if (a) b(); {}", "else if (a) b(); ".repeat(5000)),
            1000
        ));
        // Brackets, operators and `else if` inside strings and comments do not count.
        assert!(!too_deep(
            &format!("s = '{}'; /* {} */", "(".repeat(5000), "!".repeat(5000)),
            1000
        ));
    }
}
