//! Streaming JSONL reader. Records have a handful of fixed shapes, so each line is parsed by a
//! small hand-written scanner (no `serde_json::Value` per record); only the rare header line
//! goes through serde. One reused line buffer, one allocation per defined string.

use super::late::{Late, place};
use crate::error::ReadError;
use crate::model::{
    Action, ActionId, ActionType, Arc, ArcKind, Control, FORMAT_VERSION, Header, NodeDesc, Op, Pos,
    StrId, Trace,
};
use std::collections::{HashMap, HashSet};
use std::io::BufRead;

/// Reads a whole JSONL trace from `input`, line by line.
///
/// Lines are parsed where they lie in `input`'s buffer; only a line that straddles two buffer
/// fills is copied. Wrap files in a `BufReader` (a large capacity such as 256 KiB helps).
pub fn read_jsonl(input: impl BufRead) -> Result<Trace, ReadError> {
    let mut loader = JsonlLoader::new();
    for_each_block(input, |block| loader.lines(block))?;
    loader.finish()
}

/// Hands `input` to `f` as blocks of complete lines, each where it lies in `input`'s buffer;
/// only a line that straddles two buffer fills is copied. The last block may end without a
/// `\n` (end of input) and may be empty.
pub(super) fn for_each_block<E: From<std::io::Error>>(
    mut input: impl BufRead,
    mut f: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let n = buf.len();
        let mut start = 0;
        if !carry.is_empty() {
            match buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    carry.extend_from_slice(&buf[..=i]);
                    f(&carry)?;
                    carry.clear();
                    start = i + 1;
                }
                None => {
                    carry.extend_from_slice(buf);
                    input.consume(n);
                    continue;
                }
            }
        }
        let rest = &buf[start..];
        let complete = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        f(&rest[..complete])?;
        carry.extend_from_slice(&rest[complete..]);
        input.consume(n);
    }
    f(&carry)
}

/// Incremental JSONL loader: feed it lines (for example upload batches as they arrive), then
/// [`finish`](Self::finish). Errors name the line number and the byte offset counted over
/// everything fed so far.
#[derive(Debug)]
pub struct JsonlLoader {
    pub(super) state: State,
    pub(super) line_no: u64,
    pub(super) offset: u64,
}

/// What the loader has built from the lines fed so far.
#[derive(Debug)]
pub(super) struct State {
    pub(super) trace: Trace,
    /// File string number → interned id (files may define the same text twice).
    pub(super) strings: Vec<StrId>,
    /// Action open for ops, if any.
    pub(super) current: Option<ActionId>,
    /// Nodes described so far (a repeated description is ignored).
    pub(super) described: HashSet<u32>,
    /// Node number → index in `trace.controls` (a later report of a control replaces it).
    pub(super) controls: HashMap<u32, usize>,
    pub(super) seen_header: bool,
    /// Every string number so far is its own id (files whose texts are all distinct, as our
    /// writer and the runtime make them): merging a part read ahead then needs no rewrite.
    pub(super) identity: bool,
    /// Late operations, placed into their actions when the loader finishes.
    pub(super) late: Vec<Late>,
}

impl Default for JsonlLoader {
    fn default() -> Self {
        Self::new()
    }
}

/// A format error inside one block: byte index in the block and message.
pub(super) type LineErr = (usize, String);

impl JsonlLoader {
    /// An empty loader.
    pub fn new() -> JsonlLoader {
        JsonlLoader {
            state: State {
                trace: Trace::default(),
                strings: Vec::new(),
                current: None,
                described: HashSet::new(),
                controls: HashMap::new(),
                seen_header: false,
                identity: true,
                late: Vec::new(),
            },
            line_no: 0,
            offset: 0,
        }
    }

    /// Consumes one line (with or without its `\n`).
    pub fn line(&mut self, line: &[u8]) -> Result<(), ReadError> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        if line.contains(&b'\n') {
            self.line_no += 1;
            let at = line.iter().position(|&b| b == b'\n').unwrap_or(0);
            return Err(ReadError::Jsonl {
                line: self.line_no,
                offset: self.offset + at as u64,
                message: "a line handed to JsonlLoader::line contains a newline".into(),
            });
        }
        self.lines(line)?;
        // The newline that was stripped (or implied) still counts for offsets.
        self.offset += 1;
        Ok(())
    }

    /// Consumes complete lines: `block` holds whole `\n`-terminated lines, except that the
    /// last one may lack its `\n` (end of input).
    pub fn lines(&mut self, block: &[u8]) -> Result<(), ReadError> {
        if let Err((at, message)) = parse_block(&mut self.state, block, &mut self.line_no) {
            return Err(ReadError::Jsonl {
                line: self.line_no,
                offset: self.offset + at as u64,
                message,
            });
        }
        self.offset += block.len() as u64;
        Ok(())
    }

    /// The trace read so far. An action still open (trace cut at unload) is kept as is.
    pub fn finish(self) -> Result<Trace, ReadError> {
        if !self.state.seen_header {
            return Err(ReadError::Jsonl {
                line: self.line_no,
                offset: self.offset,
                message: "empty trace: no header line".into(),
            });
        }
        let State {
            mut trace, late, ..
        } = self.state;
        place(&mut trace, late);
        Ok(trace)
    }
}

/// Where parsed records go. The parser is shared: the sequential loader ([`State`]) applies
/// each record to the trace at once; a later part of a large file, parsed ahead on another
/// thread (`super::parallel`), keeps its records and defers the checks that need the state
/// at its start to the merge.
pub(super) trait Sink {
    /// Called before each record: false when no header line came before it (an error).
    fn record_allowed(&mut self) -> bool;
    /// A valid header line.
    fn header(&mut self, header: Header);
    /// `["s",n,text]`; `n_at` is where `n` is.
    fn define(&mut self, n: u64, n_at: usize, text: String) -> Result<(), LineErr>;
    /// A reference to string number `n`, at `at`.
    fn str_ref(&mut self, n: u64, at: usize) -> Result<StrId, LineErr>;
    /// `["b",a,...]`; `a_at` is where `a` is.
    fn begin(&mut self, a: u64, a_at: usize, action: Action) -> Result<(), LineErr>;
    /// An arc whose tail is smaller than its head; `h_at` is where the head is.
    fn arc(&mut self, arc: Arc, h_at: usize) -> Result<(), LineErr>;
    /// An operation whose record starts at `at`.
    fn op(&mut self, op: Op, at: usize) -> Result<(), LineErr>;
    /// A late operation of action `a` (at `a_at`) after its first `index` (at `i_at`).
    fn late(&mut self, a: u64, a_at: usize, index: u32, i_at: usize, op: Op)
    -> Result<(), LineErr>;
    /// A node description.
    fn node(&mut self, desc: NodeDesc);
    /// A control's coverage.
    fn control(&mut self, control: Control);
    /// `["n",a]`; `a_at` is where `a` is.
    fn end(&mut self, a: u64, a_at: usize) -> Result<(), LineErr>;
}

/// Adds `control` to `list`, replacing an earlier report of the same node (`index`: node →
/// position in `list`): a tool reports a control again as it exercises it.
pub(super) fn add_control(
    list: &mut Vec<Control>,
    index: &mut HashMap<u32, usize>,
    control: Control,
) {
    match index.get(&control.node) {
        Some(&i) if i < list.len() => list[i] = control,
        _ => {
            index.insert(control.node, list.len());
            list.push(control);
        }
    }
}

/// Parses the complete lines of `block` into `sink`, counting them in `line_no`.
pub(super) fn parse_block<S: Sink>(
    sink: &mut S,
    block: &[u8],
    line_no: &mut u64,
) -> Result<(), LineErr> {
    let mut c = Cursor { b: block, i: 0 };
    while c.i < block.len() {
        *line_no += 1;
        let line_start = c.i;
        parse_line(sink, &mut c)?;
        // `parse_line` stops on the `\n` (or the end of the block).
        debug_assert!(c.i >= line_start);
        c.i += 1;
    }
    Ok(())
}

/// Parses the line at the cursor and leaves the cursor on its `\n` (or the block's end).
fn parse_line<S: Sink>(sink: &mut S, c: &mut Cursor) -> Result<(), LineErr> {
    c.ws();
    match c.peek() {
        None => {} // blank line (e.g. between concatenated batches)
        Some(b'{') => {
            let end = c.b[c.i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(c.b.len(), |e| c.i + e);
            sink.header(header(&c.b[c.i..end], c.i)?);
            c.i = end;
            return Ok(());
        }
        Some(b'[') if !sink.record_allowed() => {
            return Err((c.i, "no header line before the first record".into()));
        }
        Some(b'[') => {
            c.i += 1;
            record(sink, c)?;
        }
        Some(_) => return Err((c.i, "expected a record `[...]` or a header `{...}`".into())),
    }
    c.ws();
    if c.peek().is_some() {
        return Err((c.i, "unexpected data after the record".into()));
    }
    Ok(())
}

fn header(line: &[u8], at: usize) -> Result<Header, LineErr> {
    #[derive(serde::Deserialize)]
    struct Raw {
        format: String,
        version: u32,
        #[serde(default)]
        page: Option<String>,
    }
    let raw: Raw = serde_json::from_slice(line).map_err(|e| (at, format!("bad header: {e}")))?;
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
    Ok(Header {
        version: raw.version,
        page: raw.page,
    })
}

fn record<S: Sink>(sink: &mut S, c: &mut Cursor) -> Result<(), LineErr> {
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
            sink.define(n, n_at, text)?;
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
            let kind = str_ref(sink, c)?;
            c.comma()?;
            let stable = str_ref(sink, c)?;
            c.close()?;
            let action = Action {
                id: a as ActionId,
                ty,
                kind,
                stable,
                ops: 0..0,
            };
            sink.begin(a, a_at, action)?;
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
            let arc = Arc {
                tail: tail as ActionId,
                head: head as ActionId,
                kind,
                delay_ms,
            };
            sink.arc(arc, h_at)?;
        }
        b'r' | b'w' => {
            let op = access(sink, c, tag == b'r')?;
            sink.op(op, tag_at)?;
        }
        b'R' | b'W' => {
            // `["R",A,I,L…]`: a read (`W`: write) of action A after its first I operations,
            // logged once A had ended (version 5; the rest as in `r` and `w`).
            let a_at = c.pos_after_comma()?;
            let a = c.uint()?;
            c.comma()?;
            let i_at = c.i;
            // `uint` stops at u32::MAX.
            let index = c.uint()? as u32;
            let op = access(sink, c, tag == b'R')?;
            sink.late(a, a_at, index, i_at, op)?;
        }
        b'e' => {
            c.comma()?;
            let scope = str_ref(sink, c)?;
            let src = opt_str_ref(sink, c)?;
            c.close()?;
            sink.op(Op::Enter { scope, src }, tag_at)?;
        }
        b'x' => {
            c.close()?;
            sink.op(Op::Exit, tag_at)?;
        }
        b'!' => {
            c.comma()?;
            let message = str_ref(sink, c)?;
            let src = opt_str_ref(sink, c)?;
            c.close()?;
            sink.op(Op::Exception { message, src }, tag_at)?;
        }
        b'd' => {
            // `["d",N,T]` with up to three optional elements P, I, C, each a string
            // number or `null` (version 3).
            c.comma()?;
            // `uint` stops at u32::MAX.
            let node = c.uint()? as u32;
            c.comma()?;
            let tag = str_ref(sink, c)?;
            let mut rest = [None; 3];
            for slot in &mut rest {
                if !c.more()? {
                    break;
                }
                if !c.null() {
                    *slot = Some(str_ref(sink, c)?);
                }
            }
            c.close()?;
            let [path, id, classes] = rest;
            sink.node(NodeDesc {
                node,
                tag,
                path,
                id,
                classes,
            });
        }
        b'c' => {
            // `["c",N,O,D]` (version 4).
            c.comma()?;
            let node = c.uint()? as u32;
            c.comma()?;
            let offered = str_ref(sink, c)?;
            c.comma()?;
            let done = str_ref(sink, c)?;
            c.close()?;
            sink.control(Control {
                node,
                offered,
                done,
            });
        }
        b'n' => {
            let a_at = c.pos_after_comma()?;
            let a = c.uint()?;
            c.close()?;
            sink.end(a, a_at)?;
        }
        t => return Err((tag_at, format!("unknown record tag {:?}", t as char))),
    }
    Ok(())
}

/// The rest of a read or write record after its tag (and, for a late one, its action and
/// index): `,L]`, `,L,V]`, `,L,V|null,P]` (version 2 added P).
#[inline]
fn access<S: Sink>(sink: &mut S, c: &mut Cursor, read: bool) -> Result<Op, LineErr> {
    c.comma()?;
    let loc = str_ref(sink, c)?;
    let mut value = None;
    let mut pos = Pos::NONE;
    if c.more()? {
        if !c.null() {
            value = Some(str_ref(sink, c)?);
        }
        if c.more()? {
            pos = Pos::new(str_ref(sink, c)?);
        }
    }
    c.close()?;
    Ok(if read {
        Op::Read {
            loc,
            value: value.into(),
            pos,
        }
    } else {
        Op::Write {
            loc,
            value: value.into(),
            pos,
        }
    })
}

#[inline]
fn str_ref<S: Sink>(sink: &mut S, c: &mut Cursor) -> Result<StrId, LineErr> {
    let at = c.i;
    let n = c.uint()?;
    sink.str_ref(n, at)
}

#[inline]
fn opt_str_ref<S: Sink>(sink: &mut S, c: &mut Cursor) -> Result<Option<StrId>, LineErr> {
    if c.more()? {
        Ok(Some(str_ref(sink, c)?))
    } else {
        Ok(None)
    }
}

impl Sink for State {
    #[inline]
    fn record_allowed(&mut self) -> bool {
        self.seen_header
    }

    fn header(&mut self, header: Header) {
        // A header after the first one starts another upload batch of the same page.
        if !self.seen_header {
            self.seen_header = true;
            self.trace.header = header;
        }
    }

    fn define(&mut self, n: u64, n_at: usize, text: String) -> Result<(), LineErr> {
        let known = self.strings.len() as u64;
        if n == known {
            let id = self.trace.strings.intern_owned(text);
            self.identity &= u64::from(id) == n;
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
        Ok(())
    }

    #[inline]
    fn str_ref(&mut self, n: u64, at: usize) -> Result<StrId, LineErr> {
        match self.strings.get(n as usize) {
            Some(&id) => Ok(id),
            None => Err(undefined_string(at, n)),
        }
    }

    fn begin(&mut self, a: u64, a_at: usize, mut action: Action) -> Result<(), LineErr> {
        let expected = self.trace.actions.len() as u64;
        if a != expected {
            return Err((
                a_at,
                format!("action {a} begins out of order (expected {expected})"),
            ));
        }
        let at = self.trace.ops.len() as u32;
        action.ops = at..at;
        self.trace.actions.push(action);
        self.current = Some(a as ActionId);
        Ok(())
    }

    fn arc(&mut self, arc: Arc, h_at: usize) -> Result<(), LineErr> {
        if u64::from(arc.head) >= self.trace.actions.len() as u64 {
            return Err((
                h_at,
                format!(
                    "arc {} -> {}: action {} has not begun",
                    arc.tail, arc.head, arc.head
                ),
            ));
        }
        self.trace.arcs.push(arc);
        Ok(())
    }

    #[inline]
    fn op(&mut self, op: Op, at: usize) -> Result<(), LineErr> {
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

    fn late(
        &mut self,
        a: u64,
        a_at: usize,
        index: u32,
        i_at: usize,
        op: Op,
    ) -> Result<(), LineErr> {
        let Some(action) = self.trace.actions.get(a as usize) else {
            return Err((
                a_at,
                format!("late operation of action {a}, which has not begun"),
            ));
        };
        check_late_index(a, index, action.ops.len() as u32, i_at)?;
        self.late.push(Late {
            action: a as ActionId,
            index,
            op,
        });
        Ok(())
    }

    fn node(&mut self, desc: NodeDesc) {
        // Re-sent by a later batch: the first description stands.
        if self.described.insert(desc.node) {
            self.trace.nodes.push(desc);
        }
    }

    fn control(&mut self, control: Control) {
        add_control(&mut self.trace.controls, &mut self.controls, control);
    }

    fn end(&mut self, a: u64, a_at: usize) -> Result<(), LineErr> {
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
        Ok(())
    }
}

/// A late operation's place must be within what its action has logged (`logged`).
pub(super) fn check_late_index(a: u64, index: u32, logged: u32, at: usize) -> Result<(), LineErr> {
    if index > logged {
        return Err((
            at,
            format!("late operation after {index} operations of action {a}, which logged {logged}"),
        ));
    }
    Ok(())
}

#[cold]
fn undefined_string(at: usize, n: u64) -> LineErr {
    (at, format!("string {n} used before its definition"))
}

/// A byte cursor over one line.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    /// The byte at the cursor; `None` at the end of the line (its `\n`) or of the block.
    #[inline]
    fn peek(&self) -> Option<u8> {
        match self.b.get(self.i) {
            Some(b'\n') | None => None,
            Some(&b) => Some(b),
        }
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// Expects `,` and returns the position of the next token.
    fn pos_after_comma(&mut self) -> Result<usize, LineErr> {
        self.comma()?;
        Ok(self.i)
    }

    #[inline]
    fn comma(&mut self) -> Result<(), LineErr> {
        // Fast path: JSON.stringify and our writer put no blanks around commas.
        if self.b.get(self.i) == Some(&b',')
            && !matches!(self.b.get(self.i + 1), Some(b' ' | b'\t' | b'\r'))
        {
            self.i += 1;
            return Ok(());
        }
        self.comma_slow()
    }

    #[cold]
    fn comma_slow(&mut self) -> Result<(), LineErr> {
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
    #[inline]
    fn more(&mut self) -> Result<bool, LineErr> {
        match self.b.get(self.i) {
            Some(b']') => return Ok(false),
            Some(b',') if !matches!(self.b.get(self.i + 1), Some(b' ' | b'\t' | b'\r')) => {
                self.i += 1;
                return Ok(true);
            }
            _ => {}
        }
        self.more_slow()
    }

    #[cold]
    fn more_slow(&mut self) -> Result<bool, LineErr> {
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

    /// Consumes a JSON `null` when one is at the cursor.
    #[inline]
    fn null(&mut self) -> bool {
        if self.b.get(self.i..self.i + 4) == Some(b"null") {
            self.i += 4;
            true
        } else {
            false
        }
    }

    #[inline]
    fn close(&mut self) -> Result<(), LineErr> {
        if self.b.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(());
        }
        self.close_slow()
    }

    #[cold]
    fn close_slow(&mut self) -> Result<(), LineErr> {
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

    #[cold]
    #[inline(never)]
    fn unexpected(&self, want: &str) -> String {
        match self.peek() {
            Some(b) if b.is_ascii_graphic() => format!("expected {want}, found `{}`", b as char),
            Some(b) => format!("expected {want}, found byte 0x{b:02x}"),
            None => format!("expected {want}, found the end of the line"),
        }
    }

    #[inline]
    fn uint(&mut self) -> Result<u64, LineErr> {
        let b = self.b;
        let start = self.i;
        let mut i = start;
        let mut v: u64 = 0;
        while i < b.len() {
            let d = b[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        let n = i - start;
        let fraction = i < b.len() && matches!(b[i], b'.' | b'e' | b'E');
        if n == 0 || n > 10 || v > u64::from(u32::MAX) || fraction {
            return Err(self.bad_uint(start, n, fraction));
        }
        self.i = i;
        Ok(v)
    }

    #[cold]
    fn bad_uint(&self, start: usize, digits: usize, fraction: bool) -> LineErr {
        if digits == 0 {
            (start, self.unexpected("a non-negative integer"))
        } else if fraction {
            (start, "expected an integer".into())
        } else {
            (start, "number too large".into())
        }
    }

    /// A one-character JSON string (`"b"`), returned as its byte.
    #[inline]
    fn short_tag(&mut self) -> Result<u8, LineErr> {
        match self.b.get(self.i..self.i + 3) {
            Some(&[b'"', t, b'"']) if t != b'\\' && t != b'"' && t.is_ascii() => {
                self.i += 3;
                Ok(t)
            }
            _ => self.short_tag_slow(),
        }
    }

    /// Longer or escaped: decode it properly to say what it was.
    #[cold]
    fn short_tag_slow(&mut self) -> Result<u8, LineErr> {
        let at = self.i;
        let s = self.string()?;
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(ch), None) if ch.is_ascii() => Ok(ch as u8),
            _ => Err((at, format!("unknown tag {s:?}"))),
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
        // Fast path: no escapes. Stops on `"`, `\`, or a control byte (the line's `\n` too).
        let rest = self.b.get(start..).unwrap_or_default();
        let n = rest
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
            .unwrap_or(rest.len());
        self.i = start + n;
        match rest.get(n) {
            Some(b'"') => {
                self.i += 1;
                return match std::str::from_utf8(&rest[..n]) {
                    Ok(s) => Ok(s.to_owned()),
                    Err(e) => Err((start + e.valid_up_to(), "invalid UTF-8 in a string".into())),
                };
            }
            Some(b'\\') => {}
            None | Some(b'\n') => return Err((open, "unterminated string".into())),
            Some(_) => return Err((self.i, "control character in a string".into())),
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
