//! Character-encoding detection for HTML responses, following the HTML spec's sniffing order:
//! BOM, then the `Content-Type` charset, then the `<meta>` prescan of the first 1024 bytes,
//! then the default (windows-1252).

use encoding_rs::{Encoding, REPLACEMENT, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED};

/// Number of bytes the `<meta>` prescan looks at (HTML spec).
pub(crate) const PRESCAN_BYTES: usize = 1024;

/// Where the document's encoding came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodingSource {
    /// A byte-order mark.
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta charset>` or `<meta http-equiv=content-type>` in the first 1024 bytes.
    Meta,
    /// Nothing declared: the spec's default. The browser may guess differently, so the
    /// instrumenter only rewrites pure-ASCII code in such documents.
    Default,
}

/// Result of [`detect_encoding`].
#[derive(Debug, Clone, Copy)]
pub struct DetectedEncoding {
    /// The encoding the browser decodes the document with.
    pub encoding: &'static Encoding,
    /// How it was found.
    pub source: EncodingSource,
}

impl DetectedEncoding {
    /// Whether the browser is certain of the encoding (anything but the default guess).
    pub fn is_certain(&self) -> bool {
        self.source != EncodingSource::Default
    }
}

/// Detects the encoding of an HTML document from its first bytes (at least
/// [`PRESCAN_BYTES`] of them when available) and its `Content-Type` header value.
pub fn detect_encoding(head: &[u8], content_type: Option<&str>) -> DetectedEncoding {
    if let Some((enc, _)) = Encoding::for_bom(head) {
        return DetectedEncoding {
            encoding: enc,
            source: EncodingSource::Bom,
        };
    }
    if let Some(enc) = content_type.and_then(charset_from_content_type) {
        return DetectedEncoding {
            encoding: enc,
            source: EncodingSource::Header,
        };
    }
    let end = head.len().min(PRESCAN_BYTES);
    if let Some(enc) = prescan(&head[..end]) {
        return DetectedEncoding {
            encoding: enc,
            source: EncodingSource::Meta,
        };
    }
    DetectedEncoding {
        encoding: WINDOWS_1252,
        source: EncodingSource::Default,
    }
}

/// The encoding named by the `charset` parameter of a `Content-Type` value, if valid.
pub(crate) fn charset_from_content_type(ct: &str) -> Option<&'static Encoding> {
    charset_param(ct).and_then(|(_, v)| Encoding::for_label(v.as_bytes()))
}

/// The unquoted value of the `charset` parameter of a `Content-Type` value (`utf-8` for
/// `text/javascript; charset="utf-8"`), whether or not it names a known encoding. Lenient like
/// browsers: parameters that do not parse are skipped.
pub fn charset_label(content_type: &str) -> Option<String> {
    charset_param(content_type).map(|(_, v)| v)
}

/// Finds the `charset` parameter: returns its byte range in `ct` and its unquoted value.
fn charset_param(ct: &str) -> Option<(std::ops::Range<usize>, String)> {
    let mut offset = 0;
    for (i, part) in ct.split(';').enumerate() {
        let start = offset;
        offset += part.len() + 1;
        if i == 0 {
            continue;
        }
        let trimmed = part.trim_start();
        let lead = part.len() - trimmed.len();
        let Some((name, value)) = trimmed.split_once('=') else {
            continue;
        };
        if !name.trim().eq_ignore_ascii_case("charset") {
            continue;
        }
        let v = value.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(v);
        return Some((start + lead..start + part.len(), v.to_string()));
    }
    None
}

/// Rewrites a `Content-Type` value for a document that was transcoded to UTF-8: the `charset`
/// parameter becomes `utf-8` (added when absent). The UTF-8 BOM the instrumenter writes already
/// overrides the header in browsers; this keeps other consumers honest.
pub fn adjust_content_type(content_type: &str) -> String {
    match charset_param(content_type) {
        Some((range, _)) => {
            let mut out = String::with_capacity(content_type.len());
            out.push_str(&content_type[..range.start]);
            out.push_str("charset=utf-8");
            out.push_str(&content_type[range.end..]);
            out
        }
        None => format!("{}; charset=utf-8", content_type.trim_end()),
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, 0x09 | 0x0A | 0x0C | 0x0D | 0x20)
}

/// The HTML spec's "prescan a byte stream to determine its encoding".
pub(crate) fn prescan(input: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.starts_with(b"<!--") {
            // The dashes of `<!--` may be those of the closing `-->` (`<!-->`).
            match find(&input[pos + 2..], b"-->") {
                Some(i) => pos = pos + 2 + i + 3,
                None => return None,
            }
            continue;
        }
        if rest.len() >= 6
            && rest[..5].eq_ignore_ascii_case(b"<meta")
            && (is_ws(rest[5]) || rest[5] == b'/')
        {
            pos += 6;
            match meta_charset(input, &mut pos) {
                MetaResult::Found(enc) => return Some(enc),
                MetaResult::Next => continue,
                MetaResult::Eof => return None,
            }
        }
        if rest.len() >= 2
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic()
                || (rest[1] == b'/' && rest.len() >= 3 && rest[2].is_ascii_alphabetic()))
        {
            pos += 1;
            while pos < input.len() && !is_ws(input[pos]) && input[pos] != b'>' {
                pos += 1;
            }
            loop {
                match get_attribute(input, &mut pos) {
                    Attr::Some(..) => {}
                    Attr::None => break,
                    Attr::Eof => return None,
                }
            }
            pos += 1;
            continue;
        }
        if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            match input[pos..].iter().position(|&b| b == b'>') {
                Some(i) => pos += i + 1,
                None => return None,
            }
            continue;
        }
        pos += 1;
    }
    None
}

enum MetaResult {
    Found(&'static Encoding),
    Next,
    Eof,
}

fn meta_charset(input: &[u8], pos: &mut usize) -> MetaResult {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut got_pragma = false;
    let mut need_pragma: Option<bool> = None;
    let mut charset: Option<&'static Encoding> = None;
    loop {
        let (name, value) = match get_attribute(input, pos) {
            Attr::Some(n, v) => (n, v),
            Attr::None => break,
            Attr::Eof => return MetaResult::Eof,
        };
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        match name.as_slice() {
            b"http-equiv" if value.eq_ignore_ascii_case(b"content-type") => got_pragma = true,
            b"content" => {
                if charset.is_none()
                    && let Some(enc) = charset_from_meta_content(&value)
                {
                    charset = Some(enc);
                    need_pragma = Some(true);
                }
            }
            b"charset" => {
                charset = Encoding::for_label(&value);
                need_pragma = Some(false);
            }
            _ => {}
        }
    }
    *pos += 1;
    match (need_pragma, charset) {
        (None, _) | (_, None) => MetaResult::Next,
        (Some(true), _) if !got_pragma => MetaResult::Next,
        (_, Some(enc)) => {
            let enc = if enc == UTF_16BE || enc == UTF_16LE {
                UTF_8
            } else if enc == X_USER_DEFINED {
                WINDOWS_1252
            } else {
                enc
            };
            MetaResult::Found(enc)
        }
    }
}

enum Attr {
    Some(Vec<u8>, Vec<u8>),
    None,
    Eof,
}

/// The spec's "get an attribute" (names and values lowercased as the spec says).
fn get_attribute(input: &[u8], pos: &mut usize) -> Attr {
    let at = |p: usize| input.get(p).copied();
    while let Some(b) = at(*pos) {
        if is_ws(b) || b == b'/' {
            *pos += 1;
        } else {
            break;
        }
    }
    match at(*pos) {
        None => return Attr::Eof,
        Some(b'>') => return Attr::None,
        _ => {}
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        let Some(b) = at(*pos) else { return Attr::Eof };
        if b == b'=' && !name.is_empty() {
            *pos += 1;
            break;
        }
        if is_ws(b) {
            while at(*pos).is_some_and(is_ws) {
                *pos += 1;
            }
            match at(*pos) {
                None => return Attr::Eof,
                Some(b'=') => {
                    *pos += 1;
                    break;
                }
                Some(_) => return Attr::Some(name, value),
            }
        }
        if b == b'/' || b == b'>' {
            return Attr::Some(name, value);
        }
        name.push(b.to_ascii_lowercase());
        *pos += 1;
    }
    while at(*pos).is_some_and(is_ws) {
        *pos += 1;
    }
    let Some(b) = at(*pos) else { return Attr::Eof };
    if b == b'"' || b == b'\'' {
        *pos += 1;
        loop {
            let Some(c) = at(*pos) else { return Attr::Eof };
            *pos += 1;
            if c == b {
                return Attr::Some(name, value);
            }
            value.push(c.to_ascii_lowercase());
        }
    }
    if b == b'>' {
        return Attr::Some(name, value);
    }
    loop {
        let Some(c) = at(*pos) else { return Attr::Eof };
        if is_ws(c) || c == b'>' {
            return Attr::Some(name, value);
        }
        value.push(c.to_ascii_lowercase());
        *pos += 1;
    }
}

/// The spec's "extracting a character encoding from a meta element" (the `content` value).
fn charset_from_meta_content(s: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    loop {
        let i = find_ci(&s[pos..], b"charset")?;
        pos += i + 7;
        while s.get(pos).copied().is_some_and(is_ws) {
            pos += 1;
        }
        if s.get(pos) == Some(&b'=') {
            pos += 1;
            break;
        }
    }
    while s.get(pos).copied().is_some_and(is_ws) {
        pos += 1;
    }
    match s.get(pos).copied() {
        None => None,
        Some(q @ (b'"' | b'\'')) => {
            let end = s[pos + 1..].iter().position(|&c| c == q)?;
            Encoding::for_label(&s[pos + 1..pos + 1 + end])
        }
        Some(_) => {
            let end = s[pos..]
                .iter()
                .position(|&c| is_ws(c) || c == b';')
                .unwrap_or(s.len() - pos);
            Encoding::for_label(&s[pos..pos + end])
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// Whether lol_html can parse the encoding directly; other encodings are transcoded to UTF-8
/// (UTF-16, ISO-2022-JP) or passed through untouched (`replacement`).
pub(crate) fn needs_transcoding(enc: &'static Encoding) -> bool {
    enc != REPLACEMENT && lol_html::AsciiCompatibleEncoding::new(enc).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn order_bom_header_meta_default() {
        let meta = b"<!doctype html><meta charset=shift_jis>";
        assert_eq!(
            detect_encoding(
                b"\xEF\xBB\xBF<meta charset=shift_jis>",
                Some("text/html; charset=windows-1251")
            )
            .encoding,
            UTF_8
        );
        assert_eq!(
            detect_encoding(meta, Some("text/html; charset=windows-1251")).encoding,
            WINDOWS_1251
        );
        let d = detect_encoding(meta, Some("text/html"));
        assert_eq!((d.encoding, d.source), (SHIFT_JIS, EncodingSource::Meta));
        let d = detect_encoding(b"<p>hi", None);
        assert_eq!(
            (d.encoding, d.source),
            (WINDOWS_1252, EncodingSource::Default)
        );
        assert_eq!(detect_encoding(b"\xFF\xFE<\0", None).encoding, UTF_16LE);
    }

    #[test]
    fn prescan_cases() {
        assert_eq!(
            prescan(b"<meta http-equiv=Content-Type content='text/html; charset=\"euc-jp\"'>"),
            Some(encoding_rs::EUC_JP)
        );
        // content without the pragma does not count
        assert_eq!(prescan(b"<meta content='text/html; charset=euc-jp'>"), None);
        // inside a comment
        assert_eq!(
            prescan(b"<!-- <meta charset=koi8-r> --><meta charset=utf-8>"),
            Some(UTF_8)
        );
        // attributes of other tags are skipped, `>` inside quotes too
        assert_eq!(
            prescan(b"<div title='<meta charset=koi8-r>'><meta charset=gbk>"),
            Some(encoding_rs::GBK)
        );
        // utf-16 in meta means utf-8
        assert_eq!(prescan(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(
            prescan(b"<meta charset=bogus><meta charset=big5>"),
            Some(encoding_rs::BIG5)
        );
        assert_eq!(prescan(b"<meta charset"), None);
        assert_eq!(
            prescan(b"<!-->x<meta charset=big5>"),
            Some(encoding_rs::BIG5)
        );
    }

    #[test]
    fn charset_labels() {
        assert_eq!(
            charset_label("text/javascript; charset=\"UTF-8\"").as_deref(),
            Some("UTF-8")
        );
        assert_eq!(
            charset_label("text/html;x=1; Charset=windows-1251 ").as_deref(),
            Some("windows-1251")
        );
        assert_eq!(charset_label("text/html; charset"), None);
        assert_eq!(
            charset_label("charset=utf-8"),
            None,
            "the type is not a parameter"
        );
    }

    #[test]
    fn content_type_rewrite() {
        assert_eq!(
            adjust_content_type("text/html; charset=UTF-16"),
            "text/html; charset=utf-8"
        );
        assert_eq!(
            adjust_content_type("text/html;charset=\"utf-16le\";x=1"),
            "text/html;charset=utf-8;x=1"
        );
        assert_eq!(adjust_content_type("text/html"), "text/html; charset=utf-8");
    }
}
