//! Source lines for report positions: what a report asks for script text ([`SourceProvider`])
//! and the providers (none, a map, a recording's page texts). A position is `url:line:col`
//! (`docs/trace-format.md`, "Source positions"): for external scripts and modules `url` names
//! a file the recording has; for inline code it is `<document url>#inline-<K>`, where `K` is
//! the first 18 bits of the SHA-256 of the inline script's (or handler's) original text and
//! `line:col` count from the start of that text. [`PageSources`] finds that text in the
//! document and reports the document's own line numbers, so users see the HTML file as they
//! wrote it.
//!
//! Finding inline code in HTML, and its key, belong to the instrumenter (they must match what
//! its HTML rewriter and JS pass did): this crate only gets them injected as an
//! [`InlineFinder`] (the CLI passes `shepherd_instrument::inline_code`).

use serde::Serialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Lines shown before and after the line of a position.
pub const CONTEXT_LINES: usize = 2;

/// Longest line kept in a snippet (longer ones are cut, minified code stays readable).
const MAX_LINE_CHARS: usize = 240;

/// Characters shown on each side of the position's column when its line is longer than
/// [`MAX_LINE_CHARS`] (minified code: the racing expression, not the line's start).
pub const COLUMN_WINDOW: usize = 60;

/// Where the HTML report gets script text from (the recording will provide it; a trace alone
/// only has positions).
pub trait SourceProvider {
    /// The text of the resource at `url`, if known.
    fn source(&self, url: &str) -> Option<Cow<'_, str>>;

    /// The lines around position `pos` (`url:line:col`). The default looks `url` up with
    /// [`source`](Self::source); [`PageSources`] also resolves inline code (`#inline-<key>`).
    fn snippet(&self, pos: &str) -> Option<Snippet> {
        let (url, line, col) = split_position(pos)?;
        Snippet::of_text(url, &self.source(url)?, line, col)
    }

    /// Position `pos` (`url:line:col`) of the code the browser ran (a script as the proxy
    /// instrumented it, where an uncaught exception is reported) in the script's own text.
    /// `None`: no mapping known (positions of accesses are already in the text's terms).
    fn original(&self, _pos: &str) -> Option<String> {
        None
    }
}

/// No sources: reports show positions only.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSources;

impl SourceProvider for NoSources {
    fn source(&self, _url: &str) -> Option<Cow<'_, str>> {
        None
    }
}

impl SourceProvider for HashMap<String, String> {
    fn source(&self, url: &str) -> Option<Cow<'_, str>> {
        self.get(url).map(|s| Cow::Borrowed(s.as_str()))
    }
}

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
    /// Where the column is in the text of the position's line: a 0-based character index, for
    /// a caret under it; `None` when the column lies beyond the line. Lines longer than
    /// [`MAX_LINE_CHARS`] show [`COLUMN_WINDOW`] characters each side of the column, with `…`
    /// where they were cut.
    pub caret: Option<usize>,
}

impl Snippet {
    /// The text of the position's own line.
    pub fn hit(&self) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.line == self.line)
            .map(|l| l.text.as_str())
    }

    /// What goes before a `^` under the column on the position's line: spaces, and tabs where
    /// the line has tabs, so the caret lines up in any tab setting.
    pub fn caret_pad(&self) -> Option<String> {
        let c = self.caret?;
        Some(
            self.hit()?
                .chars()
                .take(c)
                .map(|ch| if ch == '\t' { '\t' } else { ' ' })
                .collect(),
        )
    }

    /// The lines around `line` of `text` (None when `text` has fewer lines).
    pub fn of_text(url: &str, text: &str, line: usize, col: usize) -> Option<Snippet> {
        if line == 0 {
            return None;
        }
        let from = line.saturating_sub(CONTEXT_LINES).max(1);
        let mut lines = Vec::new();
        let mut caret = None;
        for (i, l) in text.lines().enumerate().skip(from - 1) {
            let n = i + 1;
            if n > line.saturating_add(CONTEXT_LINES) {
                break;
            }
            let t = if n == line {
                let (t, c) = around_column(l, col);
                caret = c;
                t
            } else {
                let mut t: String = l.chars().take(MAX_LINE_CHARS).collect();
                if t.len() < l.len() {
                    t.push('…');
                }
                t
            };
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
            caret,
        })
    }
}

/// The text of `line` to show for 1-based column `col` (UTF-16 code units, as JavaScript
/// counts), and the character index of the column in it: the whole line when it is short,
/// else [`COLUMN_WINDOW`] characters each side of the column between `…`s.
fn around_column(line: &str, col: usize) -> (String, Option<usize>) {
    let chars: Vec<char> = line.chars().collect();
    // Character index of the column: count UTF-16 units up to it.
    let want = col.saturating_sub(1);
    let mut units = 0;
    let mut at = None;
    for (i, c) in chars.iter().enumerate() {
        if units >= want {
            at = Some(i);
            break;
        }
        units += c.len_utf16();
    }
    if at.is_none() && units == want {
        at = Some(chars.len()); // just past the end (an access at the end of the line)
    }
    if chars.len() <= MAX_LINE_CHARS {
        return (line.to_owned(), at);
    }
    let Some(at) = at else {
        let mut t: String = chars[..MAX_LINE_CHARS].iter().collect();
        t.push('…');
        return (t, None);
    };
    let start = at.saturating_sub(COLUMN_WINDOW);
    let end = (at + COLUMN_WINDOW).min(chars.len());
    let mut t = String::new();
    if start > 0 {
        t.push('…');
    }
    t.extend(&chars[start..end]);
    if end < chars.len() {
        t.push('…');
    }
    (t, Some(at - start + usize::from(start > 0)))
}

/// Splits `url:line:col` from the right (URLs contain colons).
pub fn split_position(p: &str) -> Option<(&str, usize, usize)> {
    let mut it = p.rsplitn(3, ':');
    let col = it.next()?.parse().ok()?;
    let line = it.next()?.parse().ok()?;
    Some((it.next()?, line, col))
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
    /// Key `K` of the text, as in its positions (`#inline-<K hex>`).
    pub key: u32,
    /// 1-based document line where the text starts.
    pub line: usize,
    /// 1-based column (UTF-16 code units) where the text starts.
    pub col: usize,
    /// The text (so positions of the code the browser ran map back into it:
    /// [`SourceProvider::original`]).
    pub text: String,
    /// How the instrumenter read the text.
    pub kind: CodeKind,
}

/// How the instrumenter reads a text: what a [`PositionMapper`] needs to make the same code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodeKind {
    /// A script file (classic, else a module).
    File,
    /// An inline classic script.
    Script,
    /// An inline module.
    Module,
    /// The body of an `on*` attribute.
    Handler,
    /// The body of a `javascript:` URL.
    JsUrl,
}

/// Every piece of inline code of an HTML document, in document order.
pub type InlineFinder = fn(&str) -> Vec<InlineCode>;

/// Position `(line, col)` (1-based) of the code made from a text of this kind, mapped back
/// into that text ([`SourceProvider::original`]).
pub type PositionMapper = fn(&str, CodeKind, u32, u32) -> Option<(u32, u32)>;

/// Script texts and documents by URL (the recording's responses), resolving inline positions
/// to the document's lines with an injected [`InlineFinder`]. Documents are scanned for inline
/// code on first use. Without a finder, inline positions get no lines.
#[derive(Debug, Default)]
pub struct PageSources {
    texts: HashMap<String, String>,
    finder: Option<InlineFinder>,
    mapper: Option<PositionMapper>,
    inline: Mutex<HashMap<String, Arc<Vec<InlineCode>>>>,
    // Positions mapped so far: a mapping runs the whole pass on the script, and a report asks
    // for one exception's position several times (its text, its code lines).
    mapped: Mutex<HashMap<String, Option<String>>>,
}

impl PageSources {
    /// Sources from a URL → text map (no inline finder yet).
    pub fn new(texts: HashMap<String, String>) -> PageSources {
        PageSources {
            texts,
            finder: None,
            mapper: None,
            inline: Mutex::new(HashMap::new()),
            mapped: Mutex::new(HashMap::new()),
        }
    }

    /// Resolves inline positions with `finder` (replacing any earlier one).
    pub fn with_inline_finder(mut self, finder: InlineFinder) -> PageSources {
        self.finder = Some(finder);
        self.inline
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self
    }

    /// Maps positions of instrumented scripts back into their texts with `mapper`.
    pub fn with_position_mapper(mut self, mapper: PositionMapper) -> PageSources {
        self.mapper = Some(mapper);
        self.mapped
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self
    }

    /// Number of texts known.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// True when no text is known.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }

    /// The inline code of document `url` (scanned once; None without a finder).
    fn inline_of(&self, url: &str) -> Option<Arc<Vec<InlineCode>>> {
        let finder = self.finder?;
        let text = self.texts.get(url)?;
        let mut cache = self.inline.lock().unwrap_or_else(|e| e.into_inner());
        Some(
            cache
                .entry(url.to_owned())
                .or_insert_with(|| Arc::new(finder(text)))
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

    fn original(&self, pos: &str) -> Option<String> {
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = mapped.get(pos) {
            return known.clone();
        }
        let found = self.map_position(pos);
        mapped.insert(pos.to_owned(), found.clone());
        found
    }
}

impl PageSources {
    /// [`SourceProvider::original`], uncached. A position in inline code (`#inline-<K>`, in
    /// the terms of its instrumented text: the runtime places an exception in the inline code
    /// whose registration precedes it in the document) maps through that code's own text.
    fn map_position(&self, pos: &str) -> Option<String> {
        let (url, line, col) = split_position(pos)?;
        let mapper = self.mapper?;
        let blocks;
        let (text, kind) = match split_inline(url) {
            Some((doc, key)) => {
                blocks = self.inline_of(doc)?;
                let b = blocks.iter().find(|b| b.key == key)?;
                (b.text.as_str(), b.kind)
            }
            None => (self.texts.get(url)?.as_str(), CodeKind::File),
        };
        let (l, c) = mapper(
            text,
            kind,
            u32::try_from(line).ok()?,
            u32::try_from(col).ok()?,
        )?;
        Some(format!("{url}:{l}:{c}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PAGE: &str = "<!doctype html>\n<title>a <script> in a title</title>\n<!-- <script>x = 1</script> -->\n<script>\nvar a = 1;\n  a++;\n</script>\n<button id=b onclick=\"go(&quot;x&quot;)\" onmouseover='\n  hover()'>go</button>\n";

    /// Keys of PAGE's inline script and `onclick` handler (any numbers: the finder is a table).
    const SCRIPT: u32 = 0x3fa2c;
    const CLICK: u32 = 0x1b;

    static MAPPINGS: AtomicUsize = AtomicUsize::new(0);

    /// Maps line 2 of a script file or an inline script to its line 9, column + 1; handlers'
    /// line 2 to line 1.
    fn shift(_text: &str, kind: CodeKind, line: u32, col: u32) -> Option<(u32, u32)> {
        MAPPINGS.fetch_add(1, Ordering::SeqCst);
        match kind {
            CodeKind::Handler => (line == 2).then_some((1, col)),
            _ => (line == 2).then_some((9, col + 1)),
        }
    }

    #[test]
    fn positions_of_instrumented_scripts_map_back_with_the_mapper() {
        let texts = HashMap::from([
            ("https://a.test/app.js".to_string(), "x();\n".to_string()),
            ("https://a.test/".to_string(), PAGE.to_string()),
        ]);
        let plain = PageSources::new(texts.clone());
        assert_eq!(
            plain.original("https://a.test/app.js:2:7"),
            None,
            "no mapper"
        );
        let s = PageSources::new(texts).with_position_mapper(shift);
        assert_eq!(
            s.original("https://a.test/app.js:2:7").as_deref(),
            Some("https://a.test/app.js:9:8")
        );
        // Asked again (a witness's text and its code lines): mapped once.
        let before = MAPPINGS.load(Ordering::SeqCst);
        assert_eq!(
            s.original("https://a.test/app.js:2:7").as_deref(),
            Some("https://a.test/app.js:9:8")
        );
        assert_eq!(MAPPINGS.load(Ordering::SeqCst), before);
        assert_eq!(
            s.original("https://a.test/app.js:3:1"),
            None,
            "nothing maps there"
        );
        assert_eq!(s.original("https://b.test/x.js:2:7"), None, "unknown text");
        assert_eq!(
            s.original(&format!("https://a.test/{INLINE_MARKER}1b:2:7")),
            None,
            "inline code without a finder: no text to map through"
        );
    }

    /// A position in inline code's instrumented text maps through the code's own text (which
    /// the finder gives), as the code's kind, and stays in inline terms.
    #[test]
    fn positions_of_inline_code_map_back_through_their_text() {
        let doc = "https://a.test/p/";
        let s = PageSources::new(sources())
            .with_inline_finder(table_finder)
            .with_position_mapper(shift);
        assert_eq!(
            s.original(&format!("{doc}#inline-{SCRIPT:x}:2:7"))
                .as_deref(),
            Some(format!("{doc}#inline-{SCRIPT:x}:9:8").as_str())
        );
        assert_eq!(
            s.original(&format!("{doc}#inline-{CLICK:x}:2:7"))
                .as_deref(),
            Some(format!("{doc}#inline-{CLICK:x}:1:7").as_str())
        );
        assert_eq!(s.original(&format!("{doc}#inline-3:2:7")), None);
    }

    static SCANS: AtomicUsize = AtomicUsize::new(0);

    /// What the instrumenter's finder reports for PAGE (`shepherd_instrument::inline_code`
    /// is tested on the same kind of page in its own crate).
    fn table_finder(html: &str) -> Vec<InlineCode> {
        SCANS.fetch_add(1, Ordering::Relaxed);
        if html != PAGE {
            return Vec::new();
        }
        let at = |key, line, col, text: &str, kind| InlineCode {
            key,
            line,
            col,
            text: text.to_string(),
            kind,
        };
        vec![
            at(SCRIPT, 4, 9, "\nvar a = 1;\n  a++;\n", CodeKind::Script),
            at(CLICK, 8, 23, "go(\"x\")", CodeKind::Handler),
            at(CLICK, 8, 55, "\n  hover()", CodeKind::Handler),
        ]
    }

    fn sources() -> HashMap<String, String> {
        let mut texts = HashMap::new();
        texts.insert("https://a.test/p/".to_owned(), PAGE.to_owned());
        texts.insert(
            "https://a.test/p/app.js".to_owned(),
            "// app\nwindow.x = 2;\n".to_owned(),
        );
        texts
    }

    #[test]
    fn positions_and_inline_urls_split() {
        assert_eq!(
            split_inline("https://a.test/p?q#inline-3fa2c"),
            Some(("https://a.test/p?q", 0x3fa2c))
        );
        assert_eq!(split_inline("https://a.test/#inline-"), None);
        assert_eq!(split_inline("https://a.test/#inline-xyz"), None);
        assert_eq!(split_inline("https://a.test/#inline-123456"), None);
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
        let s = PageSources::new(sources()).with_inline_finder(table_finder);
        let before = SCANS.load(Ordering::Relaxed);
        // Line 3 col 3 of the inline script = document line 6 (`  a++;`).
        let snip = s.snippet(&format!("{doc}#inline-{SCRIPT:x}:3:3")).unwrap();
        assert_eq!((snip.url.as_str(), snip.line, snip.col), (doc, 6, 3));
        assert_eq!(snip.hit(), Some("  a++;"));
        assert_eq!(snip.lines.first().map(|l| l.line), Some(4));
        assert_eq!(snip.lines.last().map(|l| l.line), Some(8));
        // Line 1 of a handler: the column is shifted by where the attribute value starts; of
        // several blocks with one key, the first stands for all.
        let snip = s.snippet(&format!("{doc}#inline-{CLICK:x}:1:1")).unwrap();
        assert_eq!((snip.line, snip.col), (8, 23));
        assert!(snip.hit().unwrap().contains("onclick"));
        // External scripts: their own lines.
        let snip = s.snippet("https://a.test/p/app.js:2:1").unwrap();
        assert_eq!(snip.hit(), Some("window.x = 2;"));
        // Unknown key, unknown file, eval code, a line past the end: nothing.
        assert!(s.snippet(&format!("{doc}#inline-3:1:1")).is_none());
        assert!(s.snippet("https://b.test/x.js:1:1").is_none());
        assert!(s.snippet("https://b.test/#inline-1b:1:1").is_none());
        assert!(s.snippet("eval-3fa2c:1:1").is_none());
        assert!(s.snippet("https://a.test/p/app.js:9:1").is_none());
        // Absurd numbers from a hand-edited trace: no snippet, no overflow.
        let max = usize::MAX;
        assert!(
            s.snippet(&format!("https://a.test/p/app.js:{max}:{max}"))
                .is_none()
        );
        assert!(
            s.snippet(&format!("{doc}#inline-{CLICK:x}:{max}:1"))
                .is_none()
        );
        assert!(
            s.snippet(&format!("{doc}#inline-{CLICK:x}:1:{max}"))
                .is_some()
        );
        assert!(s.snippet(&format!("{doc}#inline-{CLICK:x}:0:0")).is_none());
        // The document was scanned once (only this test uses the table finder).
        assert_eq!(SCANS.load(Ordering::Relaxed) - before, 1);
    }

    #[test]
    fn minified_lines_show_the_column_neighbourhood() {
        // One 10 000-character line; the access `racy.v=1` sits at column 5001.
        let mut line = "x=0;".repeat(2500);
        line.replace_range(5000..5008, "racy.v=1");
        let text = format!("/*! bundle */\n{line}\n");
        let s = Snippet::of_text("https://a.test/app.min.js", &text, 2, 5001).unwrap();
        let hit = s.hit().unwrap();
        assert!(hit.contains("racy.v=1"), "{hit}");
        assert!(hit.starts_with('…') && hit.ends_with('…'), "{hit}");
        assert_eq!(hit.chars().count(), 2 * COLUMN_WINDOW + 2);
        let caret = s.caret.unwrap();
        let at: String = hit.chars().skip(caret).take(8).collect();
        assert_eq!(at, "racy.v=1");
        // The line before is short and shown whole.
        assert_eq!(s.lines[0].text, "/*! bundle */");
        // Near the start: no leading ellipsis, the caret counts from the line's start.
        let s = Snippet::of_text("u", &text, 2, 3).unwrap();
        assert!(s.hit().unwrap().starts_with("x=0;x=0"));
        assert_eq!(s.caret, Some(2));
        // Near the end: no trailing ellipsis.
        let s = Snippet::of_text("u", &text, 2, 10_000).unwrap();
        assert!(s.hit().unwrap().starts_with('…') && s.hit().unwrap().ends_with("x=0;"));
        assert_eq!(s.caret, Some(COLUMN_WINDOW + 1));
        // Past the end: the line's start, no caret.
        let s = Snippet::of_text("u", &text, 2, 20_000).unwrap();
        assert!(s.hit().unwrap().starts_with("x=0;"));
        assert_eq!(s.caret, None);
    }

    #[test]
    fn columns_count_utf16_units() {
        // `🦀` is two UTF-16 units: column 4 is the `b` after it.
        let s = Snippet::of_text("u", "a🦀b", 1, 4).unwrap();
        assert_eq!(s.caret, Some(2));
        let long = format!("{}🦀b{}", "é".repeat(300), "c".repeat(300));
        let s = Snippet::of_text("u", &long, 1, 303).unwrap();
        let hit = s.hit().unwrap();
        assert_eq!(hit.chars().nth(s.caret.unwrap()), Some('b'), "{hit}");
    }

    #[test]
    fn without_a_finder_inline_positions_get_no_lines() {
        let s = PageSources::new(sources());
        assert!(s.snippet("https://a.test/p/#inline-3fa2c:3:3").is_none());
        let snip = s.snippet("https://a.test/p/app.js:2:1").unwrap();
        assert_eq!(snip.hit(), Some("window.x = 2;"));
        // A plain position in the document itself still shows its lines.
        let snip = s.snippet("https://a.test/p/:6:3").unwrap();
        assert_eq!(snip.hit(), Some("  a++;"));
    }
}
