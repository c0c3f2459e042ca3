//! Source lines for report positions. A position is `url:line:col` (`docs/trace-format.md`,
//! "Source positions"): for external scripts and modules `url` names a file the recording has;
//! for inline code it is `<document url>#inline-<K>`, where `K` is the first 18 bits of the
//! SHA-256 of the inline script's (or handler's) original text and `line:col` count from the
//! start of that text. [`PageSources`] finds that text in the document and reports the
//! document's own line numbers, so users see the HTML file as they wrote it.

use super::SourceProvider;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Lines shown before and after the line of a position.
pub const CONTEXT_LINES: usize = 2;

/// Longest line kept in a snippet (longer ones are cut, minified code stays readable).
const MAX_LINE_CHARS: usize = 240;

/// One numbered line of a snippet.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SourceLine {
    /// 1-based line number in the file named by [`Snippet::url`].
    pub line: usize,
    /// The line's text (cut to a few hundred characters).
    pub text: String,
}

/// The source lines around a position.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Snippet {
    /// The file the lines come from: the script's URL, or the document's URL for inline code.
    pub url: String,
    /// 1-based line of the position in that file.
    pub line: usize,
    /// 1-based column of the position in that line (UTF-16 code units, as JavaScript counts).
    pub col: usize,
    /// The line of the position with up to [`CONTEXT_LINES`] lines around it.
    pub lines: Vec<SourceLine>,
}

impl Snippet {
    /// The text of the position's own line.
    pub fn hit(&self) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.line == self.line)
            .map(|l| l.text.as_str())
    }

    /// The lines around `line` of `text` (None when `text` has fewer lines).
    pub fn of_text(url: &str, text: &str, line: usize, col: usize) -> Option<Snippet> {
        if line == 0 {
            return None;
        }
        let from = line.saturating_sub(CONTEXT_LINES).max(1);
        let mut lines = Vec::new();
        for (i, l) in text.lines().enumerate().skip(from - 1) {
            let n = i + 1;
            if n > line.saturating_add(CONTEXT_LINES) {
                break;
            }
            let mut t: String = l.chars().take(MAX_LINE_CHARS).collect();
            if t.len() < l.len() {
                t.push('…');
            }
            lines.push(SourceLine { line: n, text: t });
        }
        if !lines.iter().any(|l| l.line == line) {
            return None;
        }
        Some(Snippet {
            url: url.to_owned(),
            line,
            col,
            lines,
        })
    }
}

/// Splits `url:line:col` from the right (URLs contain colons).
pub fn split_position(p: &str) -> Option<(&str, usize, usize)> {
    let mut it = p.rsplitn(3, ':');
    let col = it.next()?.parse().ok()?;
    let line = it.next()?.parse().ok()?;
    Some((it.next()?, line, col))
}

/// The script key of `text`: the first 18 bits of its SHA-256 (what the JS pass computes).
pub fn script_key(text: &str) -> u32 {
    let d = Sha256::digest(text.as_bytes());
    ((u32::from(d[0]) << 10) | (u32::from(d[1]) << 2) | (u32::from(d[2]) >> 6)) & 0x3_ffff
}

/// Marker between a document URL and the key of inline code in a position's URL.
pub const INLINE_MARKER: &str = "#inline-";

/// `(document url, key)` of an inline position URL.
pub fn split_inline(url: &str) -> Option<(&str, u32)> {
    let i = url.rfind(INLINE_MARKER)?;
    let hex = &url[i + INLINE_MARKER.len()..];
    if hex.is_empty() || hex.len() > 5 {
        return None;
    }
    let k = u32::from_str_radix(hex, 16).ok()?;
    Some((&url[..i], k))
}

/// A piece of inline code in a document: where its text starts and its key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineCode {
    /// Key of the original text ([`script_key`]).
    pub key: u32,
    /// 1-based document line where the text starts.
    pub line: usize,
    /// 1-based column (UTF-16 code units) where the text starts.
    pub col: usize,
}

/// Script texts and documents by URL (the recording's responses), resolving inline positions
/// to the document's lines. Documents are scanned for inline code on first use.
#[derive(Debug, Default)]
pub struct PageSources {
    texts: HashMap<String, String>,
    inline: Mutex<HashMap<String, Arc<Vec<InlineCode>>>>,
}

impl PageSources {
    /// Sources from a URL → text map.
    pub fn new(texts: HashMap<String, String>) -> PageSources {
        PageSources {
            texts,
            inline: Mutex::new(HashMap::new()),
        }
    }

    /// Number of texts known.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when no text is known.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The inline code of document `url` (scanned once).
    fn inline_of(&self, url: &str) -> Option<Arc<Vec<InlineCode>>> {
        let text = self.texts.get(url)?;
        let mut cache = self.inline.lock().unwrap_or_else(|e| e.into_inner());
        Some(
            cache
                .entry(url.to_owned())
                .or_insert_with(|| Arc::new(inline_code(text)))
                .clone(),
        )
    }
}

impl SourceProvider for PageSources {
    fn source(&self, url: &str) -> Option<Cow<'_, str>> {
        self.texts.get(url).map(|s| Cow::Borrowed(s.as_str()))
    }

    fn snippet(&self, pos: &str) -> Option<Snippet> {
        let (url, line, col) = split_position(pos)?;
        let Some((doc, key)) = split_inline(url) else {
            return Snippet::of_text(url, self.texts.get(url)?, line, col);
        };
        let blocks = self.inline_of(doc)?;
        // Several blocks may share a key (the same handler on many elements): the first one
        // stands for all, their texts are equal.
        let b = blocks.iter().find(|b| b.key == key)?;
        // Positions come from files: no arithmetic on them may overflow.
        let doc_line = b.line.checked_add(line.checked_sub(1)?)?;
        let doc_col = if line == 1 {
            b.col.saturating_add(col).saturating_sub(1)
        } else {
            col
        };
        Snippet::of_text(doc, self.texts.get(doc)?, doc_line, doc_col)
    }
}

// ---- finding inline code in HTML ---------------------------------------------------------------
//
// A small tokenizer, enough to find what the HTML rewriter hands to the JS pass: the text of
// `<script>` elements without `src` (raw text up to `</script`), `on*` attribute values
// (entity-decoded) and `javascript:` URLs in attributes (the URL's body). Comments and the raw
// text of `<style>`, `<textarea>`, `<title>`, `<xmp>` are skipped. A text this scanner reads
// differently from the browser simply gets no lines in the report.

/// Every piece of inline code of an HTML document, in document order.
pub fn inline_code(html: &str) -> Vec<InlineCode> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut lines = LineIndex::new(html);
    let mut i = 0;
    while let Some(off) = memchr(b'<', &b[i..]) {
        i += off;
        if b[i..].starts_with(b"<!--") {
            i = find(b, i + 4, b"-->").map_or(b.len(), |e| e + 3);
            continue;
        }
        let Some(&c) = b.get(i + 1) else { break };
        if !c.is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let name_start = i + 1;
        let mut j = name_start;
        while j < b.len() && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>') {
            j += 1;
        }
        let name = html[name_start..j].to_ascii_lowercase();
        let (attrs, end) = attributes(html, j);
        for a in &attrs {
            let Some(code) = attr_code(&a.name, &a.raw) else {
                continue;
            };
            let (line, col) = lines.at(a.value_at);
            out.push(InlineCode {
                key: script_key(&code),
                line,
                col,
            });
        }
        i = end;
        let raw_text_end = |tag: &[u8]| -> (usize, usize) {
            // Content up to `</tag` (case-insensitive); the end of the document when unclosed.
            let mut k = end;
            loop {
                match find(b, k, b"</") {
                    Some(at)
                        if b.len() >= at + 2 + tag.len()
                            && b[at + 2..at + 2 + tag.len()].eq_ignore_ascii_case(tag) =>
                    {
                        return (at, at + 2 + tag.len());
                    }
                    Some(at) => k = at + 2,
                    None => return (b.len(), b.len()),
                }
            }
        };
        match name.as_str() {
            "script" => {
                let (text_end, after) = raw_text_end(b"script");
                let has_src = attrs.iter().any(|a| a.name == "src");
                let is_js = attrs
                    .iter()
                    .find(|a| a.name == "type")
                    .is_none_or(|a| is_js_type(&decode_entities(&a.raw)));
                let text = &html[end..text_end];
                if !has_src && is_js && !text.trim().is_empty() {
                    let (line, col) = lines.at(end);
                    out.push(InlineCode {
                        key: script_key(text),
                        line,
                        col,
                    });
                }
                i = after;
            }
            "style" | "textarea" | "title" | "xmp" | "noembed" | "noframes" => {
                i = raw_text_end(name.as_bytes()).1;
            }
            _ => {}
        }
    }
    out
}

fn is_js_type(t: &str) -> bool {
    let t = t.trim().to_ascii_lowercase();
    t.is_empty()
        || t == "module"
        || t.ends_with("javascript")
        || t.ends_with("ecmascript")
        || t == "text/jscript"
        || t.starts_with("text/javascript")
}

/// The code an attribute holds: handler bodies, `javascript:` URL bodies.
fn attr_code(name: &str, raw: &str) -> Option<String> {
    let value = decode_entities(raw);
    if name.len() > 2 && name.starts_with("on") {
        return (!value.trim().is_empty()).then_some(value);
    }
    js_url_body(&value)
}

/// The body of a `javascript:` URL, as the URL parser gives it (see the HTML rewriter).
fn js_url_body(value: &str) -> Option<String> {
    let trimmed = value.trim_matches(|c: char| c <= ' ');
    let cleaned: String = trimmed
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let scheme = cleaned.get(..11)?;
    if !scheme.eq_ignore_ascii_case("javascript:") {
        return None;
    }
    let b = &cleaned.as_bytes()[11..];
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

struct Attr {
    name: String,
    raw: String,
    /// Byte offset of the value's first character in the document.
    value_at: usize,
}

/// Attributes of a start tag whose name ends at `i`; returns them and the offset after `>`.
fn attributes(html: &str, mut i: usize) -> (Vec<Attr>, usize) {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    loop {
        while i < b.len() && (ws(b[i]) || b[i] == b'/') {
            i += 1;
        }
        if i >= b.len() {
            return (out, b.len());
        }
        if b[i] == b'>' {
            return (out, i + 1);
        }
        let ns = i;
        i += 1; // a name may start with `=`
        while i < b.len() && !ws(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
            i += 1;
        }
        let name = html[ns..i].to_ascii_lowercase();
        while i < b.len() && ws(b[i]) {
            i += 1;
        }
        if b.get(i) != Some(&b'=') {
            out.push(Attr {
                name,
                raw: String::new(),
                value_at: i,
            });
            continue;
        }
        i += 1;
        while i < b.len() && ws(b[i]) {
            i += 1;
        }
        let (vs, ve, next) = match b.get(i) {
            Some(&q @ (b'"' | b'\'')) => {
                let e = memchr(q, &b[i + 1..]).map_or(b.len(), |e| i + 1 + e);
                (i + 1, e, (e + 1).min(b.len()))
            }
            _ => {
                let mut e = i;
                while e < b.len() && !ws(b[e]) && b[e] != b'>' {
                    e += 1;
                }
                (i, e, e)
            }
        };
        out.push(Attr {
            name,
            raw: html.get(vs..ve).unwrap_or("").to_owned(),
            value_at: vs,
        });
        i = next;
    }
}

/// Character references: numeric ones and the few named ones code uses in attributes. An
/// unknown name stays as written (the key then differs and no lines are shown).
fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let (ch, len) = entity(rest);
        match ch {
            Some(c) => {
                out.push_str(c.as_ref());
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character a reference at the start of `s` stands for, and its length.
fn entity(s: &str) -> (Option<Cow<'static, str>>, usize) {
    let body = &s[1..];
    if let Some(num) = body.strip_prefix('#') {
        let (digits, radix, skip) = match num.strip_prefix(['x', 'X']) {
            Some(h) => (h, 16, 3),
            None => (num, 10, 2),
        };
        let n = digits.chars().take_while(|c| c.is_digit(radix)).count();
        if n == 0 {
            return (None, 0);
        }
        let v = u32::from_str_radix(&digits[..n.min(8)], radix).unwrap_or(0xFFFD);
        let c = char::from_u32(v)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{FFFD}');
        let semi = usize::from(digits[n..].starts_with(';'));
        return (Some(Cow::Owned(c.to_string())), skip + n + semi);
    }
    const NAMED: &[(&str, &str)] = &[
        ("amp;", "&"),
        ("lt;", "<"),
        ("gt;", ">"),
        ("quot;", "\""),
        ("apos;", "'"),
        ("nbsp;", "\u{a0}"),
        ("amp", "&"),
        ("lt", "<"),
        ("gt", ">"),
        ("quot", "\""),
    ];
    for (name, val) in NAMED {
        if body.starts_with(name) {
            return (Some(Cow::Borrowed(val)), 1 + name.len());
        }
    }
    (None, 0)
}

fn memchr(c: u8, b: &[u8]) -> Option<usize> {
    b.iter().position(|&x| x == c)
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| from + p)
}

/// Byte offset → (line, UTF-16 column), both 1-based; queries come in increasing order (an
/// earlier offset restarts from the top).
struct LineIndex<'a> {
    text: &'a str,
    /// Offset up to which newlines were counted, and the line number there.
    pos: usize,
    line: usize,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        LineIndex {
            text,
            pos: 0,
            line: 1,
        }
    }

    fn at(&mut self, off: usize) -> (usize, usize) {
        let b = self.text.as_bytes();
        let off = off.min(b.len());
        if off < self.pos {
            self.pos = 0;
            self.line = 1;
        }
        self.line += b[self.pos..off].iter().filter(|&&c| c == b'\n').count();
        self.pos = off;
        let line_start = b[..off]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let col = self
            .text
            .get(line_start..off)
            .map_or(0, |s| s.encode_utf16().count());
        (self.line, col + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!doctype html>\n<title>a <script> in a title</title>\n<!-- <script>x = 1</script> -->\n<script>\nvar a = 1;\n  a++;\n</script>\n<button id=b onclick=\"go(&quot;x&quot;)\" onmouseover='\n  hover()'>go</button>\n<a href=\"JavaScript:%20void(go())\">x</a><script src=app.js></script><script type=text/plain>no</script>\n<SCRIPT type=module>import 'x';</SCRIPT>";

    #[test]
    fn finds_inline_scripts_handlers_and_js_urls() {
        let found = inline_code(PAGE);
        let want = [
            ("\nvar a = 1;\n  a++;\n", 4, 9),
            ("go(\"x\")", 8, 23),
            ("\n  hover()", 8, 55),
            (" void(go())", 10, 10),
            ("import 'x';", 11, 21),
        ];
        assert_eq!(found.len(), want.len(), "{found:?}");
        for (f, (text, line, col)) in found.iter().zip(want) {
            assert_eq!(
                f,
                &InlineCode {
                    key: script_key(text),
                    line,
                    col
                },
                "{text:?}"
            );
        }
    }

    #[test]
    fn keys_are_the_passes_18_bits() {
        // sha256("") = e3b0c442…: 0xe3 << 10 | 0xb0 << 2 | 0xc4 >> 6.
        assert_eq!(script_key(""), (0xe3 << 10) | (0xb0 << 2) | (0xc4 >> 6));
        assert!(script_key("x = 1") < 1 << 18);
        assert_eq!(
            split_inline("https://a.test/p?q#inline-3fa2c"),
            Some(("https://a.test/p?q", 0x3fa2c))
        );
        assert_eq!(split_inline("https://a.test/#inline-"), None);
        assert_eq!(split_inline("https://a.test/#inline-xyz"), None);
        assert_eq!(split_inline("https://a.test/app.js"), None);
        assert_eq!(
            split_position("https://a.test:8080/x.js:12:3"),
            Some(("https://a.test:8080/x.js", 12, 3))
        );
        assert_eq!(split_position("eval-3fa:1"), None);
    }

    #[test]
    fn inline_positions_show_document_lines() {
        let doc = "https://a.test/p/";
        let mut texts = HashMap::new();
        texts.insert(doc.to_owned(), PAGE.to_owned());
        texts.insert(
            "https://a.test/p/app.js".to_owned(),
            "// app\nwindow.x = 2;\n".to_owned(),
        );
        let s = PageSources::new(texts);
        // Line 3 col 3 of the inline script = document line 6 (`  a++;`).
        let k = script_key("\nvar a = 1;\n  a++;\n");
        let snip = s.snippet(&format!("{doc}#inline-{k:x}:3:3")).unwrap();
        assert_eq!((snip.url.as_str(), snip.line, snip.col), (doc, 6, 3));
        assert_eq!(snip.hit(), Some("  a++;"));
        assert_eq!(snip.lines.first().map(|l| l.line), Some(4));
        assert_eq!(snip.lines.last().map(|l| l.line), Some(8));
        // Line 1 of a handler: the column is shifted by where the attribute value starts.
        let k = script_key("go(\"x\")");
        let snip = s.snippet(&format!("{doc}#inline-{k:x}:1:1")).unwrap();
        assert_eq!((snip.line, snip.col), (8, 23));
        assert!(snip.hit().unwrap().contains("onclick"));
        // External scripts: their own lines.
        let snip = s.snippet("https://a.test/p/app.js:2:1").unwrap();
        assert_eq!(snip.hit(), Some("window.x = 2;"));
        // Unknown key, unknown file, eval code, a line past the end: nothing.
        assert!(s.snippet(&format!("{doc}#inline-3:1:1")).is_none() || script_key("") == 3);
        assert!(s.snippet("https://b.test/x.js:1:1").is_none());
        assert!(s.snippet("eval-3fa2c:1:1").is_none());
        assert!(s.snippet("https://a.test/p/app.js:9:1").is_none());
        // Absurd numbers from a hand-edited trace: no snippet, no overflow.
        let max = usize::MAX;
        assert!(
            s.snippet(&format!("https://a.test/p/app.js:{max}:{max}"))
                .is_none()
        );
        let k = script_key("go(\"x\")");
        assert!(s.snippet(&format!("{doc}#inline-{k:x}:{max}:1")).is_none());
        assert!(s.snippet(&format!("{doc}#inline-{k:x}:1:{max}")).is_some());
        assert!(s.snippet(&format!("{doc}#inline-{k:x}:0:0")).is_none());
    }

    #[test]
    fn odd_markup_never_panics() {
        for html in [
            "<",
            "<a",
            "<a b",
            "<a b=",
            "<a b='",
            "<script>",
            "<script",
            "<!--",
            "<a onclick=x",
            "<a onclick=\"&#x;&#99999999999;&#0;&amp\">",
            "é<script>é</script>",
            "<p =x>",
        ] {
            let _ = inline_code(html);
        }
        assert_eq!(decode_entities("&#x41;&#66&lt;&bogus;&amp"), "AB<&bogus;&");
    }
}
