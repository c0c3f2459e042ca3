//! Character references in attribute values and SVG script text.
//!
//! lol_html hands out attribute values and foreign-content text raw. Only references whose
//! meaning is certain without the full 2231-entry table are decoded (numeric ones and the few
//! names JavaScript code actually uses); anything else makes the caller keep the original
//! markup, which is always correct, just not instrumented.

/// The input holds a named reference this decoder does not know.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unsupported;

/// Names decoded with a trailing `;`.
const NAMED: &[(&str, char)] = &[
    ("amp", '&'),
    ("lt", '<'),
    ("gt", '>'),
    ("quot", '"'),
    ("apos", '\''),
    ("nbsp", '\u{a0}'),
    ("Tab", '\t'),
    ("NewLine", '\n'),
];

/// Names the spec also decodes without `;` (legacy); `apos`, `Tab`, `NewLine` are not.
const LEGACY: &[&str] = &["amp", "lt", "gt", "quot", "nbsp"];

/// Replacements for numeric references to C1 controls (the spec maps them via windows-1252).
const C1: [u32; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
];

/// Decodes an attribute value (attribute rules: a legacy name followed by `=` stays literal).
pub(crate) fn decode_attr(raw: &str) -> Result<String, Unsupported> {
    decode(raw, true)
}

/// Decodes character data (SVG `<script>` text).
pub(crate) fn decode_text(raw: &str) -> Result<String, Unsupported> {
    decode(raw, false)
}

fn decode(raw: &str, in_attr: bool) -> Result<String, Unsupported> {
    if !raw.contains('&') {
        return Ok(raw.to_string());
    }
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    let mut lit = 0;
    while i < b.len() {
        if b[i] != b'&' {
            i += 1;
            continue;
        }
        out.push_str(&raw[lit..i]);
        let (decoded, len) = reference(&raw[i..], in_attr)?;
        match decoded {
            Some(c) => out.push(c),
            None => out.push('&'),
        }
        i += len;
        lit = i;
    }
    out.push_str(&raw[lit..]);
    Ok(out)
}

/// Decodes one reference at the start of `s` (which starts with `&`): the character (None:
/// the `&` is literal) and the number of bytes consumed.
fn reference(s: &str, in_attr: bool) -> Result<(Option<char>, usize), Unsupported> {
    let b = s.as_bytes();
    if b.get(1) == Some(&b'#') {
        let hex = matches!(b.get(2), Some(b'x' | b'X'));
        let start = if hex { 3 } else { 2 };
        let digits = b[start..]
            .iter()
            .take_while(|c| {
                if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                }
            })
            .count();
        if digits == 0 {
            return Ok((None, 1));
        }
        let text = &s[start..start + digits];
        let value = u32::from_str_radix(text, if hex { 16 } else { 10 }).unwrap_or(u32::MAX);
        let mut len = start + digits;
        if b.get(len) == Some(&b';') {
            len += 1;
        }
        let value = match value {
            0 => 0xFFFD,
            0x80..=0x9F => C1[(value - 0x80) as usize],
            v => v,
        };
        return Ok((Some(char::from_u32(value).unwrap_or('\u{FFFD}')), len));
    }
    let run = b[1..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    if run == 0 {
        return Ok((None, 1));
    }
    let name = &s[1..1 + run];
    let next = b.get(1 + run).copied();
    if next == Some(b';') {
        return match NAMED.iter().find(|(n, _)| *n == name) {
            Some((_, c)) => Ok((Some(*c), run + 2)),
            None => Err(Unsupported),
        };
    }
    if LEGACY.contains(&name) {
        if in_attr && next == Some(b'=') {
            return Ok((None, 1));
        }
        let c = NAMED.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
        return Ok((c, run + 1));
    }
    // Could be a prefix match against the full table (`&notit;` is `¬it;`): not decidable here.
    Err(Unsupported)
}

/// Escapes `&` so lol_html's `set_attribute` (which escapes only `"`) produces a value that
/// decodes back to `s`.
pub(crate) fn encode_attr_amp(s: &str) -> String {
    s.replace('&', "&amp;")
}

/// Escapes text for foreign-content character data (SVG `<script>`): `&`, `<` and `>`.
pub(crate) fn encode_text(s: &str) -> String {
    html_escape::encode_text(s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_common_references() {
        assert_eq!(
            decode_attr("if(a &amp;&amp; b) f(&quot;x&quot;)").unwrap(),
            "if(a && b) f(\"x\")"
        );
        assert_eq!(decode_attr("&#60;&#x3C;&#X3c&lt&gt;").unwrap(), "<<<<>");
        assert_eq!(decode_attr("a & b &= c").unwrap(), "a & b &= c");
        assert_eq!(decode_attr("?x=1&amp=2").unwrap(), "?x=1&amp=2");
        assert_eq!(decode_text("&amp=2").unwrap(), "&=2");
        assert_eq!(
            decode_attr("&#0;&#x80;&#x110000;").unwrap(),
            "\u{FFFD}\u{20AC}\u{FFFD}"
        );
        assert_eq!(decode_attr("&#;").unwrap(), "&#;");
    }

    #[test]
    fn unknown_names_are_unsupported() {
        assert_eq!(decode_attr("&copy;"), Err(Unsupported));
        assert_eq!(decode_attr("&notin"), Err(Unsupported));
        assert_eq!(decode_attr("x&ltfoo"), Err(Unsupported));
    }

    #[test]
    fn round_trip() {
        let s = "a && b < \"c\"";
        assert_eq!(decode_text(&encode_text(s)).unwrap(), s);
        assert_eq!(
            decode_attr(&encode_attr_amp(s).replace('"', "&quot;")).unwrap(),
            s
        );
    }

    /// html-escape writes exactly what the hand-written escaper did: rewritten pages keep
    /// their bytes.
    #[test]
    fn encode_text_is_the_old_escaper() {
        fn old(s: &str) -> String {
            let mut out = String::new();
            for c in s.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    c => out.push(c),
                }
            }
            out
        }
        let mut samples: Vec<String> = (0u8..128).map(|b| char::from(b).to_string()).collect();
        samples.push("if (a < b && c > 'd') { e = \"f\"; } // &amp; é 🦀".into());
        for s in &samples {
            assert_eq!(encode_text(s), old(s), "{s:?}");
        }
    }
}
