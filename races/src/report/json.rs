//! JSON report (schema: `docs/races-json.md`, version [`super::JSON_VERSION`]).

use super::stream::{self, Batching};
use super::{AccessView, RaceReport, RaceView, ReportPlan, SourceProvider};
use crate::Analysis;
use shepherd_trace::Trace;

/// Renders the report as pretty JSON.
pub fn render(r: &RaceReport) -> String {
    // The view model holds only strings, numbers and booleans: serialisation cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Writes to `out` what [`render`] renders for `plan.into_report(trace, an)` with `sources`
/// attached, building the views of a few locations at a time: a long session's report is
/// tens of megabytes of JSON, twice that as views, and was held whole twice over. Large
/// reports render on two threads.
pub fn write(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
) -> std::io::Result<()> {
    write_batched(out, trace, an, plan, sources, Batching::DEFAULT)
}

/// [`write`], cutting and sharing the work as `batching` says.
pub(crate) fn write_batched(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
    batching: Batching,
) -> std::io::Result<()> {
    // `races` is the report's last field: the head renders with it empty, and each race is
    // printed as the pretty printer would nest it.
    let head = render(&plan.head);
    let Some(prefix) = head.strip_suffix("[]\n}") else {
        return out.write_all(head.as_bytes());
    };
    out.write_all(prefix.as_bytes())?;
    let batches = plan.batches(an, batching.races);
    stream::write_in_order(
        &mut stream::Plain(&mut *out),
        plan.shown.len(),
        batches.len(),
        batching,
        |memo, k, buf: &mut Vec<u8>| {
            let ks = batches.get(k).cloned().unwrap_or_default();
            for mut group in plan.groups_at(trace, an, ks) {
                memo.attach(&mut group, sources);
                for r in &group {
                    let first = k == 0 && buf.is_empty();
                    buf.extend_from_slice(if first { b"[\n    " } else { b",\n    " });
                    race(buf, r)?;
                }
            }
            Ok(())
        },
    )?;
    out.write_all(if batches.is_empty() {
        b"[]\n}"
    } else {
        b"\n  ]\n}"
    })
}

/// Appends race `r` to `buf` as the pretty printer nests it in the report's `races`.
///
/// Written by hand, byte for byte what serde_json's pretty printer writes for the derived
/// `Serialize` (`tests::races_print_as_serde_prints_them` holds them together): a long
/// session's report is tens of megabytes, and through serde every field was a formatter call
/// and every string was escaped a byte at a time (many-location bench report: ≈ 600 M of the
/// JSON report's ≈ 1 000 M instructions).
fn race(buf: &mut Vec<u8>, r: &RaceView) -> std::io::Result<()> {
    let mut o = Pretty {
        buf,
        depth: RACE_DEPTH,
        first: true,
    };
    o.open(b'{');
    o.key("id");
    o.num(r.id as u64);
    o.key("location");
    o.str(&r.location);
    o.key("location_name");
    o.str(&r.location_name);
    o.key("node");
    match &r.node {
        Some(n) => {
            o.open(b'{');
            o.key("number");
            o.num(u64::from(n.number));
            o.key("tag");
            o.str(&n.tag);
            o.key("selector");
            o.opt_str(n.selector.as_deref());
            o.key("id");
            o.opt_str(n.id.as_deref());
            o.key("classes");
            o.opt_str(n.classes.as_deref());
            o.key("name");
            o.str(&n.name);
            o.close(b'}');
        }
        None => o.raw(b"null"),
    }
    o.key("kind");
    o.str(&r.kind);
    o.key("covered");
    o.bool(r.covered);
    o.key("coverage");
    o.str(r.coverage);
    o.key("covered_by");
    match r.covered_by {
        Some(c) => o.num(c as u64),
        None => o.raw(b"null"),
    }
    o.key("tags");
    o.open(b'[');
    for t in &r.tags {
        o.item();
        o.str(t);
    }
    o.close(b']');
    o.key("harmful");
    o.bool(r.harmful);
    o.key("level");
    o.str(r.level);
    o.key("first");
    access(&mut o, &r.first);
    o.key("second");
    access(&mut o, &r.second);
    if let Some(e) = &r.explored {
        o.key("explored");
        o.open(b'{');
        o.key("verdict");
        o.str(&e.verdict);
        o.key("reason");
        o.str(&e.reason);
        o.key("sequence");
        match e.sequence {
            Some(q) => o.num(q),
            None => o.raw(b"null"),
        }
        o.close(b'}');
    }
    if !r.repaired_by.is_empty() {
        o.key("repaired_by");
        o.open(b'[');
        for p in &r.repaired_by {
            o.item();
            o.str(p);
        }
        o.close(b']');
    }
    o.close(b'}');
    Ok(())
}

/// One side of a race, as [`race`] writes it.
fn access(o: &mut Pretty, a: &AccessView) {
    o.open(b'{');
    o.key("action");
    o.num(u64::from(a.action));
    o.key("stable");
    o.str(&a.stable);
    o.key("type");
    o.str(a.ty);
    o.key("action_kind");
    o.str(&a.action_kind);
    o.key("access");
    o.str(a.access);
    o.key("source");
    o.opt_str(a.source.as_deref());
    o.key("access_source");
    o.opt_str(a.access_source.as_deref());
    o.key("scope_source");
    o.opt_str(a.scope_source.as_deref());
    o.key("scope");
    o.opt_str(a.scope.as_deref());
    o.key("scope_name");
    o.opt_str(a.scope_name.as_deref());
    o.key("value");
    o.opt_str(a.value.as_deref());
    o.key("code");
    match &a.code {
        Some(c) => {
            o.open(b'{');
            o.key("url");
            o.str(&c.url);
            o.key("line");
            o.num(c.line as u64);
            o.key("col");
            o.num(c.col as u64);
            o.key("lines");
            o.open(b'[');
            for l in &c.lines {
                o.item();
                o.open(b'{');
                o.key("line");
                o.num(l.line as u64);
                o.key("text");
                o.str(&l.text);
                o.close(b'}');
            }
            o.close(b']');
            o.key("caret");
            match c.caret {
                Some(k) => o.num(k as u64),
                None => o.raw(b"null"),
            }
            o.close(b'}');
        }
        None => o.raw(b"null"),
    }
    o.close(b'}');
}

/// serde_json's pretty printing (two spaces a level), written straight into a buffer.
struct Pretty<'b> {
    buf: &'b mut Vec<u8>,
    depth: usize,
    /// Nothing written yet in the innermost open object or array.
    first: bool,
}

impl Pretty<'_> {
    #[inline(always)]
    fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    #[inline(always)]
    fn newline(&mut self) {
        let n = 2 * self.depth;
        if n < LINE.len() {
            // A copy of known length (no call), cut back to the indentation.
            let end = self.buf.len() + 1 + n;
            self.buf.extend_from_slice(LINE);
            self.buf.truncate(end);
        } else {
            self.buf.push(b'\n');
            self.buf.resize(self.buf.len() + n, b' ');
        }
    }

    #[inline(always)]
    fn open(&mut self, bracket: u8) {
        self.depth += 1;
        self.first = true;
        self.buf.push(bracket);
    }

    #[inline(always)]
    fn close(&mut self, bracket: u8) {
        self.depth = self.depth.saturating_sub(1);
        if !self.first {
            self.newline();
        }
        self.buf.push(bracket);
        // The object or array just closed is a value of the one around it.
        self.first = false;
    }

    /// Starts an array element.
    #[inline(always)]
    fn item(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.newline();
    }

    /// Starts a member; keys are plain identifiers, nothing to escape.
    #[inline(always)]
    fn key(&mut self, k: &str) {
        self.item();
        // Inlined where `k` is a literal: copies of known length.
        self.buf.reserve(k.len() + 4);
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\": ");
    }

    fn num(&mut self, n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = n;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&digits[at..]);
    }

    fn bool(&mut self, b: bool) {
        self.raw(if b { b"true" } else { b"false" });
    }

    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.raw(b"null"),
        }
    }

    /// A string as serde_json escapes it: `"` and `\\` backslashed, control characters as
    /// `\b \t \n \f \r` or `\u00xx`, everything else verbatim. Eight bytes are tested at
    /// once; most strings have nothing to escape.
    fn str(&mut self, s: &str) {
        let b = s.as_bytes();
        self.buf.reserve(b.len() + 2);
        self.buf.push(b'"');
        let mut start = 0;
        let (words, rest) = b.as_chunks::<8>();
        for (w, word) in words.iter().enumerate() {
            if may_escape(u64::from_le_bytes(*word)) {
                for (j, &c) in word.iter().enumerate() {
                    if must_escape(c) {
                        start = self.escape(b, 8 * w + j, start);
                    }
                }
            }
        }
        let base = 8 * words.len();
        for (j, &c) in rest.iter().enumerate() {
            if must_escape(c) {
                start = self.escape(b, base + j, start);
            }
        }
        self.buf.extend_from_slice(&b[start..]);
        self.buf.push(b'"');
    }

    /// Escapes byte `k` of `b`, flushing the plain bytes from `start` before it; returns
    /// where the plain bytes start now.
    #[cold]
    fn escape(&mut self, b: &[u8], k: usize, start: usize) -> usize {
        let c = b[k];
        let short = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0A => b'n',
            0x0C => b'f',
            0x0D => b'r',
            _ => b'u',
        };
        self.buf.extend_from_slice(&b[start..k]);
        if short == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            self.buf.extend_from_slice(b"\\u00");
            self.buf.push(HEX[usize::from(c >> 4)]);
            self.buf.push(HEX[usize::from(c & 0xF)]);
        } else {
            self.buf.push(b'\\');
            self.buf.push(short);
        }
        k + 1
    }
}

/// Whether byte `c` needs escaping: below 0x20, `"` or `\\`.
#[inline(always)]
fn must_escape(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// Whether any byte of `w` may need escaping: below 0x20, `"` or `\\` (no misses; the
/// bytes of a flagged word are tested one by one).
#[inline]
fn may_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (below(w, 0x20) | below(quote, 1) | below(backslash, 1)) != 0
}

/// The depth of an element of the report's `races` array.
const RACE_DEPTH: usize = 2;

/// A line break and the indentation of up to fifteen levels (written whole, then cut).
const LINE: &[u8; 32] = b"\n                               ";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Explored;
    use crate::report::names::NodeView;
    use crate::report::sources::{Snippet, SourceLine};
    use serde::Serialize;
    use serde_json::ser::Formatter;
    use std::io::Write;

    /// The reference: serde_json's `PrettyFormatter` (two spaces a level) starting at the depth of the report's
    /// races: each race is printed straight into the report. Printing it alone and indenting every
    /// line after was a fifth of the JSON report's instructions.
    struct Nested {
        depth: usize,
        has_value: bool,
    }

    impl Nested {
        /// The depth of an element of the report's `races` array.
        fn races() -> Nested {
            Nested {
                depth: RACE_DEPTH,
                has_value: false,
            }
        }

        fn indent<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
            for _ in 0..self.depth {
                w.write_all(b"  ")?;
            }
            Ok(())
        }

        fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
            self.depth += 1;
            self.has_value = false;
            w.write_all(bracket)
        }

        fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
            self.depth = self.depth.saturating_sub(1);
            if self.has_value {
                w.write_all(b"\n")?;
                self.indent(w)?;
            }
            w.write_all(bracket)
        }

        fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
            w.write_all(if first { b"\n" } else { b",\n" })?;
            self.indent(w)
        }
    }

    impl Formatter for Nested {
        fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.open(w, b"[")
        }

        fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.close(w, b"]")
        }

        fn begin_array_value<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            self.item(w, first)
        }

        fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
            self.has_value = true;
            Ok(())
        }

        fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.open(w, b"{")
        }

        fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            self.close(w, b"}")
        }

        fn begin_object_key<W: ?Sized + Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            self.item(w, first)
        }

        fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
            w.write_all(b": ")
        }

        fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
            self.has_value = true;
            Ok(())
        }
    }

    /// Race `r` through serde with [`Nested`], as the report printed it before [`race`].
    fn race_serde(r: &RaceView) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, Nested::races());
        r.serialize(&mut ser).unwrap();
        buf
    }

    fn side(action: u32, text: &str, full: bool) -> AccessView {
        let some = |s: &str| full.then(|| s.to_string());
        AccessView {
            action,
            stable: format!("doc/{text}"),
            ty: "timer",
            action_kind: text.to_string(),
            access: "UPDATE",
            source: some(text),
            access_source: some("a.js:1:2"),
            scope_source: None,
            scope: some(text),
            scope_name: some(""),
            value: some(text),
            code: full.then(|| Snippet {
                url: format!("https://a.test/{text}"),
                line: 12,
                col: 3,
                lines: if text.is_empty() {
                    Vec::new()
                } else {
                    vec![
                        SourceLine {
                            line: 11,
                            text: text.to_string(),
                        },
                        SourceLine {
                            line: 12,
                            text: "\tx = 1;".to_string(),
                        },
                    ]
                },
                caret: (!text.is_empty()).then_some(7),
            }),
        }
    }

    /// Every field, present and absent, and every kind of character serde_json escapes or
    /// leaves alone, at every offset of an eight-byte word.
    #[test]
    fn races_print_as_serde_prints_them() {
        let mut texts: Vec<String> = vec![
            String::new(),
            "Global.x".into(),
            "a\"b\\c/d".into(),
            "é€𝄞 \u{7f}\u{80}".into(),
            "0123456789abcdef0123456789".into(),
        ];
        for c in (0u8..0x20).chain([b'"', b'\\', b' ', 0x7f]) {
            for at in 0..9 {
                let mut t = "x".repeat(at);
                t.push(char::from(c));
                t.push_str("yz");
                texts.push(t);
            }
        }
        for (i, text) in texts.iter().enumerate() {
            let full = i % 2 == 0;
            let r = RaceView {
                id: i * 1_000_003,
                location: text.clone(),
                location_name: format!("{text}.name"),
                node: full.then(|| NodeView {
                    number: u32::MAX - i as u32,
                    tag: "input".into(),
                    selector: Some(text.clone()),
                    id: None,
                    classes: Some("a b".into()),
                    name: text.clone(),
                }),
                kind: "WRITE-READ".into(),
                covered: full,
                coverage: "multi",
                covered_by: full.then_some(0),
                tags: if full {
                    vec!["never-read", "cookie"]
                } else {
                    Vec::new()
                },
                harmful: !full,
                level: "harmful",
                first: side(i as u32, text, full),
                second: side(0, text, !full),
                explored: (i % 3 == 0).then(|| Explored {
                    verdict: "harmful".into(),
                    reason: text.clone(),
                    sequence: (i % 2 == 0).then_some(u64::MAX),
                }),
                repaired_by: if i % 4 == 1 {
                    vec![text.clone(), "p".into()]
                } else {
                    Vec::new()
                },
            };
            let mut ours = Vec::new();
            race(&mut ours, &r).unwrap();
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                String::from_utf8(race_serde(&r)).unwrap(),
                "{text:?}"
            );
        }
    }
}
