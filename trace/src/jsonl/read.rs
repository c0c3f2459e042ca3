//! Streaming JSONL reader. Records have a handful of fixed shapes, so each line is parsed by a
//! small hand-written scanner (no `serde_json::Value` per record); only the rare header line
//! goes through serde. One reused line buffer, one allocation per defined string.

use crate::error::ReadError;
use crate::model::{
    Action, ActionId, ActionType, Arc, ArcKind, FORMAT_VERSION, Header, Op, StrId, Trace,
};
use std::io::BufRead;

/// Reads a whole JSONL trace from `input`, line by line.
pub fn read_jsonl(mut input: impl BufRead) -> Result<Trace, ReadError> {
    let mut loader = JsonlLoader::new();
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        loader.line(&line)?;
    }
    loader.finish()
}

/// Incremental JSONL loader: feed it lines (for example upload batches as they arrive), then
/// [`finish`](Self::finish). Errors name the line number and the byte offset counted over
/// everything fed so far.
#[derive(Debug)]
pub struct JsonlLoader {
    trace: Trace,
    /// File string number → interned id (files may define the same text twice).
    strings: Vec<StrId>,
    /// Action open for ops, if any.
    current: Option<ActionId>,
    seen_header: bool,
    line_no: u64,
    offset: u64,
}

impl Default for JsonlLoader {
    fn default() -> Self {
        Self::new()
    }
}

/// A format error inside one line: byte index in the line and message.
type LineErr = (usize, String);

impl JsonlLoader {
    /// An empty loader.
    pub fn new() -> JsonlLoader {
        JsonlLoader {
            trace: Trace::default(),
            strings: Vec::new(),
            current: None,
            seen_header: false,
            line_no: 0,
            offset: 0,
        }
    }

    /// Consumes one line (with or without its `\n`).
    pub fn line(&mut self, line: &[u8]) -> Result<(), ReadError> {
        self.line_no += 1;
        let start = self.offset;
        self.offset += line.len() as u64;
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match self.parse_line(line) {
            Ok(()) => Ok(()),
            Err((at, message)) => Err(ReadError::Jsonl {
                line: self.line_no,
                offset: start + at as u64,
                message,
            }),
        }
    }

    /// The trace read so far. An action still open (trace cut at unload) is kept as is.
    pub fn finish(self) -> Result<Trace, ReadError> {
        if !self.seen_header {
            return Err(ReadError::Jsonl {
                line: self.line_no,
                offset: self.offset,
                message: "empty trace: no header line".into(),
            });
        }
        Ok(self.trace)
    }

    fn parse_line(&mut self, line: &[u8]) -> Result<(), LineErr> {
        let mut c = Cursor { b: line, i: 0 };
        c.ws();
        match c.peek() {
            None => Ok(()), // blank line (e.g. between concatenated batches)
            Some(b'{') => self.header(line, c.i),
            Some(b'[') if !self.seen_header => {
                Err((c.i, "no header line before the first record".into()))
            }
            Some(b'[') => {
                c.i += 1;
                self.record(&mut c)
            }
            Some(_) => Err((c.i, "expected a record `[...]` or a header `{...}`".into())),
        }
    }

    fn header(&mut self, line: &[u8], at: usize) -> Result<(), LineErr> {
        #[derive(serde::Deserialize)]
        struct Raw {
            format: String,
            version: u32,
            #[serde(default)]
            page: Option<String>,
        }
        let raw: Raw =
            serde_json::from_slice(&line[at..]).map_err(|e| (at, format!("bad header: {e}")))?;
        if raw.format != "shepherd-trace" {
            return Err((
                at,
                format!("not a shepherd trace (format {:?})", raw.format),
            ));
        }
        if raw.version == 0 || raw.version > FORMAT_VERSION {
            return Err((
                at,
                format!(
                    "trace format version {} is not supported (this reader knows 1..={FORMAT_VERSION})",
                    raw.version
                ),
            ));
        }
        // A header after the first one starts another upload batch of the same page.
        if !self.seen_header {
            self.seen_header = true;
            self.trace.header = Header {
                version: raw.version,
                page: raw.page,
            };
        }
        Ok(())
    }

    fn record(&mut self, c: &mut Cursor) -> Result<(), LineErr> {
        c.ws();
        let tag_at = c.i;
        let tag = c.short_tag()?;
        match tag {
            b's' => {
                let n_at = c.pos_after_comma()?;
                let n = c.uint()?;
                c.comma()?;
                let text = c.string()?;
                c.close()?;
                let known = self.strings.len() as u64;
                if n == known {
                    let id = self.trace.strings.intern(&text);
                    self.strings.push(id);
                } else if n < known {
                    // Re-sent by a later batch: fine when it says the same thing.
                    let id = self.strings[n as usize];
                    if self.trace.strings.get(id) != text {
                        return Err((n_at, format!("string {n} redefined with different text")));
                    }
                } else {
                    return Err((
                        n_at,
                        format!("string {n} defined out of order (expected {known})"),
                    ));
                }
            }
            b'b' => {
                let a_at = c.pos_after_comma()?;
                let a = c.uint()?;
                c.comma()?;
                let ty_at = c.i;
                let ty = c.uint()?;
                let ty = match ty {
                    0 => ActionType::Unknown,
                    1 => ActionType::Timer,
                    2 => ActionType::UserInterface,
                    3 => ActionType::Network,
                    4 => ActionType::Continuation,
                    _ => return Err((ty_at, format!("unknown action type {ty}"))),
                };
                c.comma()?;
                let kind = self.str_ref(c)?;
                c.comma()?;
                let stable = self.str_ref(c)?;
                c.close()?;
                let expected = self.trace.actions.len() as u64;
                if a != expected {
                    return Err((
                        a_at,
                        format!("action {a} begins out of order (expected {expected})"),
                    ));
                }
                let at = self.trace.ops.len() as u32;
                self.trace.actions.push(Action {
                    id: a as ActionId,
                    ty,
                    kind,
                    stable,
                    ops: at..at,
                });
                self.current = Some(a as ActionId);
            }
            b'a' => {
                let t_at = c.pos_after_comma()?;
                let tail = c.uint()?;
                c.comma()?;
                let h_at = c.i;
                let head = c.uint()?;
                c.comma()?;
                let k_at = c.i;
                let kind = match c.short_tag()? {
                    b'f' => ArcKind::Fork,
                    b'j' => ArcKind::Join,
                    k => return Err((k_at, format!("unknown arc kind {:?}", k as char))),
                };
                let delay_ms = if c.more()? {
                    let d_at = c.i;
                    let d = c.uint()?;
                    Some(u32::try_from(d).map_err(|_| (d_at, format!("delay {d} too large")))?)
                } else {
                    None
                };
                c.close()?;
                if tail >= head {
                    return Err((
                        t_at,
                        format!("arc {tail} -> {head}: the tail must be smaller"),
                    ));
                }
                if head >= self.trace.actions.len() as u64 {
                    return Err((
                        h_at,
                        format!("arc {tail} -> {head}: action {head} has not begun"),
                    ));
                }
                self.trace.arcs.push(Arc {
                    tail: tail as ActionId,
                    head: head as ActionId,
                    kind,
                    delay_ms,
                });
            }
            b'r' | b'w' => {
                c.comma()?;
                let loc = self.str_ref(c)?;
                let value = self.opt_str_ref(c)?;
                c.close()?;
                let op = if tag == b'r' {
                    Op::Read { loc, value }
                } else {
                    Op::Write { loc, value }
                };
                self.push_op(op, tag_at)?;
            }
            b'e' => {
                c.comma()?;
                let scope = self.str_ref(c)?;
                let src = self.opt_str_ref(c)?;
                c.close()?;
                self.push_op(Op::Enter { scope, src }, tag_at)?;
            }
            b'x' => {
                c.close()?;
                self.push_op(Op::Exit, tag_at)?;
            }
            b'!' => {
                c.comma()?;
                let message = self.str_ref(c)?;
                let src = self.opt_str_ref(c)?;
                c.close()?;
                self.push_op(Op::Exception { message, src }, tag_at)?;
            }
            b'n' => {
                let a_at = c.pos_after_comma()?;
                let a = c.uint()?;
                c.close()?;
                if self.current.map(u64::from) != Some(a) {
                    return Err((
                        a_at,
                        match self.current {
                            Some(cur) => format!("end of action {a} while action {cur} is open"),
                            None => format!("end of action {a} while no action is open"),
                        },
                    ));
                }
                self.current = None;
            }
            t => return Err((tag_at, format!("unknown record tag {:?}", t as char))),
        }
        c.ws();
        if c.i != c.b.len() {
            return Err((c.i, "unexpected data after the record".into()));
        }
        Ok(())
    }

    fn push_op(&mut self, op: Op, at: usize) -> Result<(), LineErr> {
        let Some(cur) = self.current else {
            return Err((at, "operation outside an action".into()));
        };
        self.trace.ops.push(op);
        let end = self.trace.ops.len() as u32;
        if let Some(a) = self.trace.actions.get_mut(cur as usize) {
            a.ops.end = end;
        }
        Ok(())
    }

    fn str_ref(&self, c: &mut Cursor) -> Result<StrId, LineErr> {
        let at = c.i;
        let n = c.uint()?;
        match self.strings.get(n as usize) {
            Some(&id) => Ok(id),
            None => Err((at, format!("string {n} used before its definition"))),
        }
    }

    fn opt_str_ref(&self, c: &mut Cursor) -> Result<Option<StrId>, LineErr> {
        if c.more()? {
            Ok(Some(self.str_ref(c)?))
        } else {
            Ok(None)
        }
    }
}

/// A byte cursor over one line.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.i += 1;
        }
    }

    /// Expects `,` and returns the position of the next token.
    fn pos_after_comma(&mut self) -> Result<usize, LineErr> {
        self.comma()?;
        Ok(self.i)
    }

    fn comma(&mut self) -> Result<(), LineErr> {
        self.ws();
        if self.peek() == Some(b',') {
            self.i += 1;
            self.ws();
            Ok(())
        } else {
            Err((self.i, self.unexpected("`,` (record too short?)")))
        }
    }

    /// True and past the comma when another element follows; false before `]`.
    fn more(&mut self) -> Result<bool, LineErr> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                self.ws();
                Ok(true)
            }
            Some(b']') => Ok(false),
            _ => Err((self.i, self.unexpected("`,` or `]`"))),
        }
    }

    fn close(&mut self) -> Result<(), LineErr> {
        self.ws();
        match self.peek() {
            Some(b']') => {
                self.i += 1;
                Ok(())
            }
            Some(b',') => Err((self.i, "too many elements in the record".into())),
            _ => Err((self.i, self.unexpected("`]`"))),
        }
    }

    fn unexpected(&self, want: &str) -> String {
        match self.peek() {
            Some(b) if b.is_ascii_graphic() => format!("expected {want}, found `{}`", b as char),
            Some(b) => format!("expected {want}, found byte 0x{b:02x}"),
            None => format!("expected {want}, found the end of the line"),
        }
    }

    fn uint(&mut self) -> Result<u64, LineErr> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            v = match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(v) if v <= u64::from(u32::MAX) => v,
                _ => return Err((start, "number too large".into())),
            };
            self.i += 1;
        }
        if self.i == start {
            return Err((start, self.unexpected("a non-negative integer")));
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return Err((start, "expected an integer".into()));
        }
        Ok(v)
    }

    /// A one-character JSON string (`"b"`), returned as its byte.
    fn short_tag(&mut self) -> Result<u8, LineErr> {
        let at = self.i;
        match self.b.get(self.i..self.i + 3) {
            Some(&[b'"', t, b'"']) if t != b'\\' && t != b'"' && t.is_ascii() => {
                self.i += 3;
                Ok(t)
            }
            _ => {
                // Longer or escaped: decode it properly to say what it was.
                let s = self.string()?;
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(ch), None) if ch.is_ascii() => Ok(ch as u8),
                    _ => Err((at, format!("unknown tag {s:?}"))),
                }
            }
        }
    }

    /// A JSON string, unescaped.
    fn string(&mut self) -> Result<String, LineErr> {
        let open = self.i;
        if self.peek() != Some(b'"') {
            return Err((self.i, self.unexpected("a string")));
        }
        self.i += 1;
        let start = self.i;
        // Fast path: no escapes.
        while let Some(b) = self.peek() {
            match b {
                b'"' => {
                    let raw = &self.b[start..self.i];
                    self.i += 1;
                    return match std::str::from_utf8(raw) {
                        Ok(s) => Ok(s.to_owned()),
                        Err(e) => {
                            Err((start + e.valid_up_to(), "invalid UTF-8 in a string".into()))
                        }
                    };
                }
                b'\\' => break,
                0..=0x1f => return Err((self.i, "control character in a string".into())),
                _ => self.i += 1,
            }
        }
        let mut out: Vec<u8> = self.b[start..self.i].to_vec();
        loop {
            let Some(b) = self.peek() else {
                return Err((open, "unterminated string".into()));
            };
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let esc_at = self.i - 1;
                    let Some(e) = self.peek() else {
                        return Err((open, "unterminated string".into()));
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let hi = self.hex4(esc_at)?;
                            let ch = if (0xD800..0xDC00).contains(&hi) {
                                if self.b.get(self.i..self.i + 2) != Some(b"\\u") {
                                    return Err((esc_at, "unpaired surrogate".into()));
                                }
                                self.i += 2;
                                let lo = self.hex4(esc_at)?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err((esc_at, "unpaired surrogate".into()));
                                }
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            } else {
                                char::from_u32(hi)
                            };
                            let Some(ch) = ch else {
                                return Err((esc_at, "unpaired surrogate".into()));
                            };
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => return Err((esc_at, "invalid escape in a string".into())),
                    }
                }
                0..=0x1f => return Err((self.i - 1, "control character in a string".into())),
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| (open, "invalid UTF-8 in a string".into()))
    }

    fn hex4(&mut self, esc_at: usize) -> Result<u32, LineErr> {
        let Some(digits) = self.b.get(self.i..self.i + 4) else {
            return Err((esc_at, "truncated \\u escape".into()));
        };
        let mut v = 0u32;
        for &d in digits {
            let x = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err((esc_at, "bad \\u escape".into())),
            };
            v = v * 16 + u32::from(x);
        }
        self.i += 4;
        Ok(v)
    }
}
