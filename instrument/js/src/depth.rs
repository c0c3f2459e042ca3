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

/// Byte classes of the scanner (one table lookup per byte instead of a chain of comparisons:
/// this check runs on every source before parsing, so it is on the critical path).
const WS: u8 = 0;
/// Identifier bytes other than `e` (`e` may start `else`).
const IDENT: u8 = 1;
/// Any byte without a rule of its own (ends a prefix run, is not an operand).
const OTHER: u8 = 2;
const SPECIAL: u8 = 3;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_whitespace() {
            t[c] = WS;
        } else if is_ident(b) && b != b'e' {
            t[c] = IDENT;
        } else if matches!(
            b,
            b'(' | b'['
                | b'{'
                | b')'
                | b']'
                | b'}'
                | b';'
                | b'!'
                | b'~'
                | b'+'
                | b'-'
                | b'*'
                | b'/'
                | b'%'
                | b'&'
                | b'|'
                | b'^'
                | b'<'
                | b'>'
                | b'='
                | b'?'
                | b':'
                | b'.'
                | b'"'
                | b'\''
                | b'`'
                | b'e'
        ) {
            t[c] = SPECIAL;
        }
        c += 1;
    }
    t
};

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
        match CLASS[usize::from(c)] {
            WS => {
                // Indentation comes in runs.
                i += 1;
                while i < b.len() && CLASS[usize::from(b[i])] == WS {
                    i += 1;
                }
                continue;
            }
            IDENT => {
                // The rest of a run of identifier bytes changes nothing more (an `e` inside a
                // run cannot start the keyword `else`).
                i = ident_run_end(b, i + 1);
                prefix_run = 0;
                after_operand = true;
                continue;
            }
            OTHER => {
                prefix_run = 0;
                after_operand = false;
                i += 1;
                continue;
            }
            _ => {}
        }
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
                // Jump to the next quote, backslash or newline (memchr: strings are long).
                loop {
                    let Some(k) = b.get(i..).and_then(|r| memchr::memchr3(q, b'\\', b'\n', r))
                    else {
                        i = b.len();
                        break;
                    };
                    i += k;
                    let s = b[i];
                    if s == q || (s == b'\n' && q != b'`') {
                        break;
                    }
                    // A backslash skips the next byte; a newline inside a template goes on.
                    i += if s == b'\\' { 2 } else { 1 };
                }
                prefix_run = 0;
                operand = true;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                i = memchr::memmem::find(&b[i..], b"*/").map_or(b.len(), |k| i + k + 1);
            }
            b'e' if !b[i..].starts_with(b"else") || b.get(i + 4).is_some_and(|c| is_ident(*c)) => {
                // An identifier that starts with `e`.
                i = ident_run_end(b, i + 1);
                prefix_run = 0;
                after_operand = true;
                continue;
            }
            b'e' => {
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
            c => {
                // `!`/`~` before `=`.
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

/// The end of the run of identifier bytes that goes on at `i`.
fn ident_run_end(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if CLASS[usize::from(c)] != IDENT && c != b'e' {
            break;
        }
        i += 1;
    }
    i
}

const fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::too_deep;
    use rand_xoshiro::SplitMix64;
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};

    /// The straightforward scanner the table-driven one must agree with.
    fn reference(src: &str, limit: usize) -> bool {
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
                    if prefix_run > super::MAX_PREFIX_RUN {
                        return true;
                    }
                }
                b'+' | b'-' => {
                    if after_operand {
                        binary_span += 1;
                        if binary_span > super::MAX_BINARY_SPAN {
                            return true;
                        }
                        prefix_run = 0;
                    } else {
                        prefix_run += 1;
                        if prefix_run > super::MAX_PREFIX_RUN {
                            return true;
                        }
                    }
                }
                b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'<' | b'>' | b'=' | b'?' | b':'
                | b'.'
                    if !(c == b'/' && matches!(b.get(i + 1), Some(b'/') | Some(b'*'))) =>
                {
                    binary_span += 1;
                    if binary_span > super::MAX_BINARY_SPAN {
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
                b'e' if b[i..].starts_with(b"else")
                    && !b.get(i + 4).is_some_and(|c| super::is_ident(*c))
                    && !(i > 0 && super::is_ident(b[i - 1])) =>
                {
                    let mut j = i + 4;
                    while j < b.len() && b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if b[j..].starts_with(b"if")
                        && !b.get(j + 2).is_some_and(|c| super::is_ident(*c))
                    {
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
                    if super::is_ident(c) {
                        operand = true;
                    }
                    prefix_run = 0;
                }
            }
            after_operand = operand;
            i += 1;
        }
        // A long file may have many `else if`s; only dense ones are the deep-chain shape.
        else_ifs > super::ELSE_IF_FLOOR && else_ifs * 100 > b.len()
    }

    /// Random JavaScript-ish text over the bytes the scanner treats specially.
    fn random_source(rng: &mut SplitMix64, len: usize) -> String {
        const PIECES: &[&str] = &[
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ";",
            "!",
            "~",
            "!=",
            "+",
            "-",
            "*",
            "/",
            "//",
            "/*",
            "*/",
            "%",
            "&",
            "|",
            "^",
            "<",
            ">",
            "=",
            "?",
            ":",
            ".",
            "\"",
            "'",
            "`",
            "\\",
            "\n",
            " ",
            "\t",
            "else",
            "if",
            "else if",
            "elsewhere",
            "e",
            "x",
            "_$",
            "9",
            "é",
            ",",
            "@",
        ];
        let mut s = String::new();
        while s.len() < len {
            s.push_str(PIECES[(rng.next_u64() % PIECES.len() as u64) as usize]);
        }
        s
    }

    #[test]
    fn agrees_with_reference_scanner() {
        let mut rng = SplitMix64::seed_from_u64(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let src = random_source(&mut rng, 1 + round % 300);
            for limit in [3, 1000] {
                assert_eq!(
                    too_deep(&src, limit),
                    reference(&src, limit),
                    "{src:?} {limit}"
                );
            }
        }
        // Long inputs that cross the prefix, binary-span and else-if limits.
        for src in [
            format!("x = {}a;", "!".repeat(5000)),
            format!("x = {}a;", "a + ".repeat(30_000)),
            format!("if (a) b(); {}", "else if (a) b(); ".repeat(5000)),
            format!("if (a) b(); {}", "else  if(a)b();".repeat(2500)),
        ] {
            assert_eq!(too_deep(&src, 1000), reference(&src, 1000));
        }
    }

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
