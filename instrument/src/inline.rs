//! Where the inline code of an HTML document starts, and its key: what reports need to show
//! the document's own lines for a position `<document url>#inline-<K>:line:col`
//! (`docs/trace-format.md`, "Source positions").
//!
//! The HTML rewriter hands the JS pass the text of `<script>` elements without `src`, handler
//! attribute values and `javascript:` URL bodies; `K` is [`script_key`] of exactly that text.
//! Finding the same texts again reuses the rewriter's own rules (which elements hold
//! JavaScript, which attributes are handlers or navigation URLs, entity decoding, the
//! `javascript:` body), so the two cannot drift apart. The scan itself is a small tokenizer
//! rather than lol_html, because positions need byte offsets into the document, which lol_html
//! does not give. A text this scanner reads differently from the browser simply gets no lines
//! in a report.

use crate::attrs::js_url_body;
use crate::entities;
use crate::mode::ScriptKind;
use crate::script_type::{is_event_handler, is_navigation_url_attr, script_kind};
use shepherd_instrument_js::script_key;

/// One piece of inline code in a document: its key and where its text starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineCode {
    /// [`script_key`] of the text the JS pass was given.
    pub key: u32,
    /// 1-based document line where the text starts.
    pub line: usize,
    /// 1-based column (UTF-16 code units, as JavaScript counts) where the text starts.
    pub col: usize,
    /// The text the JS pass was given (so positions of the code it made map back into it).
    pub text: String,
    /// How the pass read it: a classic or module script, a handler body, a `javascript:` URL.
    pub kind: ScriptKind,
}

/// Every piece of inline code of an HTML document, in document order. Comments and the raw
/// text of `<style>`, `<textarea>`, `<title>`, `<xmp>`, `<noembed>`, `<noframes>` are skipped.
/// Foreign-content (`<svg>`) scripts are read like HTML ones: when their text holds character
/// references, their key does not match and they get no lines.
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
            let Some((code, kind)) = attr_code(&a.name, &a.raw) else {
                continue;
            };
            let (line, col) = lines.at(a.value_at);
            out.push(InlineCode {
                key: script_key(&code),
                line,
                col,
                text: code,
                kind,
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
                let text = &html[end..text_end];
                if let Some(kind) = inline_js(&attrs)
                    && !text.trim().is_empty()
                {
                    let (line, col) = lines.at(end);
                    out.push(InlineCode {
                        key: script_key(text),
                        line,
                        col,
                        text: text.to_owned(),
                        kind,
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

/// The kind of a `<script>` with these attributes when it has inline JavaScript (no `src`, a
/// JavaScript `type`/`language`), decided as the HTML rewriter decides it.
fn inline_js(attrs: &[Attr]) -> Option<ScriptKind> {
    // The first of duplicate attributes counts, as in the browser.
    let get = |n: &str| attrs.iter().find(|a| a.name == n);
    let decoded = |n: &str| get(n).map(|a| entities::decode_attr(&a.raw).unwrap_or(a.raw.clone()));
    if get("src").is_some() {
        return None;
    }
    script_kind(decoded("type").as_deref(), decoded("language").as_deref())
}

/// The code an attribute holds, as the HTML rewriter gives it to the JS pass: handler bodies,
/// `javascript:` URL bodies. An unknown character reference makes the rewriter keep the
/// attribute as it is (no positions), so nothing is found either.
fn attr_code(name: &str, raw: &str) -> Option<(String, ScriptKind)> {
    let handler = is_event_handler(name);
    if !(handler || is_navigation_url_attr(name)) || raw.trim().is_empty() {
        return None;
    }
    let value = entities::decode_attr(raw).ok()?;
    if handler {
        Some((value, ScriptKind::Handler))
    } else {
        Some((js_url_body(&value)?, ScriptKind::JsUrl))
    }
}

/// One attribute of a start tag, value undecoded.
struct Attr {
    /// Lowercased name.
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
            ("\nvar a = 1;\n  a++;\n", 4, 9, ScriptKind::Script),
            ("go(\"x\")", 8, 23, ScriptKind::Handler),
            ("\n  hover()", 8, 55, ScriptKind::Handler),
            (" void(go())", 10, 10, ScriptKind::JsUrl),
            ("import 'x';", 11, 21, ScriptKind::Module),
        ];
        assert_eq!(found.len(), want.len(), "{found:?}");
        for (f, (text, line, col, kind)) in found.iter().zip(want) {
            assert_eq!(
                f,
                &InlineCode {
                    key: script_key(text),
                    line,
                    col,
                    text: text.to_string(),
                    kind,
                },
                "{text:?}"
            );
        }
    }

    /// Only what the rewriter instruments is found: known handler names, navigation URL
    /// attributes, JavaScript types, values without unknown references.
    #[test]
    fn follows_the_rewriters_rules() {
        let html = "<p onboarding=\"x()\" data-x=\"javascript:y()\" onclick=\"&copy;\" onload=\" \">\
                    <script type=\"text/javascript; charset=utf-8\">a()</script>\
                    <script language=vbscript>b()</script>\
                    <script type=\"&#x6d;odule\">c()</script>\
                    <script> </script>\
                    <form action=\"javascript:d()\">";
        let keys: Vec<u32> = inline_code(html).iter().map(|c| c.key).collect();
        assert_eq!(keys, [script_key("c()"), script_key("d()")]);
    }

    /// The races crate's report fixture injects a table finder: these are the entries the real
    /// finder gives for its document (the keys are those in its `trace.jsonl`).
    #[test]
    fn agrees_with_the_races_report_fixture() {
        let html = include_str!("../../races/tests/positions/index.html");
        let found = inline_code(html);
        let want = [(0x2a609, 4, 9), (0x31183, 11, 25), (0xfaf, 12, 9)];
        let got: Vec<(u32, usize, usize)> = found.iter().map(|c| (c.key, c.line, c.col)).collect();
        assert_eq!(got, want);
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
    }
}
