//! `javascript:` URLs: what the browser runs when one is followed, and how to write code back
//! so the browser runs exactly that.

/// The script body of a `javascript:` URL (attribute value already entity-decoded), or None
/// when the value is not a `javascript:` URL or its body is not UTF-8 after percent-decoding.
///
/// Mirrors the URL parser: leading/trailing C0 controls and spaces are stripped, tabs and
/// newlines anywhere are removed, the scheme is case-insensitive, and the body is percent-decoded
/// when the URL is evaluated.
pub(crate) fn js_url_body(value: &str) -> Option<String> {
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    let cleaned: String = trimmed
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme = cleaned.get(..11)?;
    if !scheme.eq_ignore_ascii_case("javascript:") {
        return None;
    }
    let body: Vec<u8> = percent_encoding::percent_decode(&cleaned.as_bytes()[11..]).collect();
    String::from_utf8(body).ok()
}

/// A `javascript:` URL whose evaluation runs `code`: `%` and the characters the URL parser
/// would drop (tab, newlines, trailing spaces) are percent-encoded.
pub(crate) fn js_url_encode(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + 16);
    out.push_str("javascript:");
    let keep = code.trim_end_matches(|c: char| c <= ' ').len();
    for (i, c) in code.char_indices() {
        match c {
            '%' => out.push_str("%25"),
            '\t' => out.push_str("%09"),
            '\n' => out.push_str("%0A"),
            '\r' => out.push_str("%0D"),
            c if i >= keep || (c < ' ') => {
                out.push_str(&format!("%{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        assert_eq!(js_url_body(" JavaScript:a()").as_deref(), Some("a()"));
        assert_eq!(
            js_url_body("java\tscript:a%28%29\n;b").as_deref(),
            Some("a();b")
        );
        assert_eq!(js_url_body("javascript:'100%'").as_deref(), Some("'100%'"));
        assert_eq!(js_url_body("https://x/"), None);
        assert_eq!(js_url_body("javascript:%FF"), None);
    }

    #[test]
    fn encode_round_trip() {
        for code in ["a('%41')\n", "x=`a\tb`", "void 0  ", "s='\u{1}'"] {
            assert_eq!(js_url_body(&js_url_encode(code)).as_deref(), Some(code));
        }
    }
}
