//! Reading a JSONL trace that can be read at any offset (a file, bytes in memory) in parts,
//! on several threads. The input is cut at line starts; each part is parsed on its own thread
//! (the first on the caller's) into a [`Part`] that does not know the state it starts in (how
//! many strings and actions came before, which action is open, whether a header did): it
//! keeps string numbers of the file where string ids belong and records what it assumed. The
//! merge, in file order, checks those assumptions against the loader's state, interns the
//! part's strings and appends its records. A part that holds an error, or whose assumptions
//! do not hold, is read again by the sequential loader from where the previous part ended, so
//! every result and every error is the one `read_jsonl` gives.
//!
//! Interning a part's strings in one batch at the merge, with hashes computed by the part's
//! thread, is also cheaper than interning each where it is defined (the parser's traffic
//! evicts the string index from the caches): one part alone loads faster than the sequential
//! loader.

use super::late::Late;
use super::read::{
    JsonlLoader, LineErr, Sink, State, add_control, check_late_index, for_each_block, parse_block,
};
use crate::error::ReadError;
use crate::hash::FastState;
use crate::model::{Action, ActionId, Arc, Control, Header, NodeDesc, Op, Pos, StrId, Trace};
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// Below this size a trace is read in one part: threads and merges would cost more than they
/// save (a 1 MB trace loads in about 5 ms).
pub(crate) const PARALLEL_MIN_BYTES: u64 = 4 << 20;

/// At most this many parts. Each part but the first holds its records twice for a moment
/// (its own copy and the merged one), so more parts cost more memory while the gain shrinks.
const MAX_PARTS: usize = 4;

/// A part with fewer operations is merged on one thread (another costs more than it saves).
const PARALLEL_MERGE_MIN_OPS: usize = 1 << 16;

/// Read buffer per part.
const BUFFER: usize = 1 << 18;

/// How many parts to read an input of `len` bytes in.
pub(crate) fn parts_for(len: u64) -> usize {
    if len < PARALLEL_MIN_BYTES {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_PARTS)
}

/// Input that several threads can read at once, each at its own offset.
pub(crate) trait Source: Sync {
    /// Reads into `buf` from byte `pos`; 0 at the end of the input.
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize>;
}

impl Source for [u8] {
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        let rest = usize::try_from(pos)
            .ok()
            .and_then(|p| self.get(p..))
            .unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

#[cfg(unix)]
impl Source for std::fs::File {
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(self, buf, pos)
    }
}

/// Bytes `pos..end` of a source, counting what is read into `read` (for progress).
struct Range<'a, S: ?Sized> {
    src: &'a S,
    pos: u64,
    end: u64,
    read: Option<&'a AtomicU64>,
}

impl<S: Source + ?Sized> Read for Range<'_, S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end.saturating_sub(self.pos)).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let n = self.src.read_at(&mut buf[..want], self.pos)?;
        self.pos += n as u64;
        if let Some(read) = self.read {
            read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

fn reader<'a, S: Source + ?Sized>(
    src: &'a S,
    start: u64,
    end: u64,
    read: Option<&'a AtomicU64>,
) -> impl BufRead + 'a {
    BufReader::with_capacity(
        BUFFER,
        Range {
            src,
            pos: start,
            end,
            read,
        },
    )
}

/// The first line start at or after `cut` (0, or just after a `\n`), if there is one before
/// `len`.
fn line_start<S: Source + ?Sized>(src: &S, len: u64, cut: u64) -> io::Result<Option<u64>> {
    if cut == 0 {
        return Ok(Some(0));
    }
    let mut pos = cut - 1;
    let mut buf = [0u8; 4096];
    while pos < len {
        let n = src.read_at(&mut buf, pos)?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
            let start = pos + i as u64 + 1;
            return Ok((start < len).then_some(start));
        }
        pos += n as u64;
    }
    Ok(None)
}

/// Reads the JSONL trace of `src` (`len` bytes at the start; the last part reads to the end
/// even if the input grew) in parts cut at the line starts at or after `cuts`, each part after
/// the first on its own thread. `progress` gets `(bytes read, len)` now and then, always on
/// the calling thread.
pub(crate) fn read_parts<S: Source + ?Sized>(
    src: &S,
    len: u64,
    cuts: &[u64],
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Trace, ReadError> {
    let mut starts = vec![0u64];
    for &cut in cuts {
        let last = starts.last().copied().unwrap_or(0);
        if let Some(s) = line_start(src, len, cut.max(last))?
            && s > last
        {
            starts.push(s);
        }
    }
    let ranges: Vec<(u64, u64)> = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, starts.get(i + 1).copied().unwrap_or(u64::MAX)))
        .collect();
    let read = AtomicU64::new(0);
    // The first part known to hold an error: the parts after it are not needed.
    let stop = AtomicUsize::new(usize::MAX);
    let mut loader = JsonlLoader::new();
    let strings = estimate(len, BYTES_PER_STRING);
    loader.state.trace.strings.try_reserve(strings, 0);
    let _ = loader.state.strings.try_reserve(strings);
    let hasher = loader.state.trace.strings.hash_state().clone();
    std::thread::scope(|scope| {
        let (read, stop, hasher) = (&read, &stop, &hasher);
        let workers: Vec<_> = ranges
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, &(start, end))| {
                let (tx, rx) = mpsc::sync_channel(1);
                let handle = scope.spawn(move || {
                    let input = reader(src, start, end, Some(read));
                    let size = end.min(len).saturating_sub(start);
                    let part = Part::read(input, size, hasher.clone(), (i, stop), &mut || {});
                    let _ = tx.send(part);
                });
                (handle, rx)
            })
            .collect();
        // The first part's vectors become the trace's: reserved for the whole input.
        let end = ranges.first().map_or(u64::MAX, |r| r.1);
        let input = reader(src, 0, end, Some(read));
        let first = Part::read(input, len, hasher.clone(), (0, stop), &mut || {
            progress(read.load(Ordering::Relaxed), len)
        });
        let mut next = Some(first);
        let mut workers = workers.into_iter();
        for (i, &(start, end)) in ranges.iter().enumerate() {
            let part = match next.take() {
                Some(part) => Some(part),
                None => workers.next().and_then(|(handle, rx)| {
                    loop {
                        match rx.recv_timeout(Duration::from_millis(50)) {
                            Ok(part) => break Some(part),
                            Err(RecvTimeoutError::Timeout) => {
                                progress(read.load(Ordering::Relaxed), len);
                            }
                            Err(RecvTimeoutError::Disconnected) => match handle.join() {
                                Err(panic) => std::panic::resume_unwind(panic),
                                Ok(()) => break None,
                            },
                        }
                    }
                }),
            };
            if !part.is_some_and(|part| loader.absorb(part)) {
                // Read it again where it belongs: the sequential loader finds the error (the
                // first in the file, as the parts before had none) or the right result.
                let again = for_each_block(reader(src, start, end, None), |b| loader.lines(b));
                if let Err(e) = again {
                    stop.fetch_min(i, Ordering::Relaxed);
                    return Err(e);
                }
            }
        }
        Ok(())
    })?;
    progress(len, len);
    loader.finish()
}

/// Reads `bytes` as [`read_jsonl`](super::read_jsonl) does, in parts cut at the line starts
/// at or after the byte offsets `cuts` (ascending), each part after the first on its own
/// thread. `load_bytes` and `load_path` choose the cuts themselves; this is for tests and
/// measurements that need given ones.
pub fn read_jsonl_parts(bytes: &[u8], cuts: &[u64]) -> Result<Trace, ReadError> {
    read_parts(bytes, bytes.len() as u64, cuts, &mut |_, _| {})
}

/// Equal cuts for `parts` parts of `len` bytes.
pub(crate) fn even_cuts(len: u64, parts: usize) -> Vec<u64> {
    let parts = parts.max(1) as u64;
    (1..parts).map(|i| len / parts * i).collect()
}

/// Records per byte of a typical trace, to reserve the trace's vectors once instead of
/// growing them (each doubling copies and faults in the pages again): about 28 bytes per
/// operation, 160 per action, 85 per arc, 140 per string in the synthetic 115 000-action
/// traces and in recorded ones. The divisors are a little smaller so that most traces fit;
/// reserved and never used capacity costs address space, not resident memory.
const BYTES_PER_OP: u64 = 24;
const BYTES_PER_ACTION: u64 = 128;
const BYTES_PER_ARC: u64 = 64;
const BYTES_PER_STRING: u64 = 112;

fn estimate(bytes: u64, per: u64) -> usize {
    usize::try_from(bytes / per).unwrap_or(0)
}

/// A vector with room for `n` elements if the allocator grants it: the size comes from the
/// input's, and a huge input of blank lines must not abort the process.
fn reserved<T>(n: usize) -> Vec<T> {
    let mut v = Vec::new();
    let _ = v.try_reserve(n);
    v
}

impl JsonlLoader {
    /// Appends a part read ahead, if what it assumed about the state it starts in holds;
    /// false (and nothing changed) otherwise.
    fn absorb(&mut self, mut part: Part) -> bool {
        let st = &mut self.state;
        if part.failed || (part.needs_header && !st.seen_header) {
            return false;
        }
        let actions = st.trace.actions.len() as u64;
        if part.first_action.is_some_and(|a| a != actions) || part.early_heads > actions {
            return false;
        }
        if part.inherited_ops > 0 || part.inherited_end.is_some() {
            let Some(cur) = st.current else {
                return false;
            };
            if part.inherited_end.is_some_and(|a| a != u64::from(cur)) {
                return false;
            }
        }
        // Late operations of actions that began before the part: within what those had
        // logged when the late operation was read.
        let outer = part.first_action.unwrap_or(actions);
        for (i, l) in part.late.iter().enumerate() {
            if i >= part.early_late && u64::from(l.action) >= outer {
                continue;
            }
            let Some(action) = st.trace.actions.get(l.action as usize) else {
                return false;
            };
            let mut logged = action.ops.len() as u32;
            if st.current == Some(l.action) {
                let then = part.late_inherited.get(i).copied().unwrap_or(0);
                logged = logged.saturating_add(then);
            }
            if l.index > logged {
                return false;
            }
        }
        let known = st.strings.len() as u64;
        if part.outer_refs > known {
            return false;
        }
        let Some(new) = new_strings(st, &part.defs) else {
            return false;
        };
        // Every reference is below `outer_refs` or `defined_below`; both are now within the
        // table, so the rewrite below finds every number.
        if part.defined_below > known + new.len() as u64 {
            return false;
        }

        if !st.seen_header
            && let Some(header) = part.header.take()
        {
            st.seen_header = true;
            st.trace.header = header;
        }
        let ops0 = st.trace.ops.len() as u32;
        let actions0 = st.trace.actions.len();
        if part.inherited_ops > 0
            && let Some(a) = st
                .current
                .and_then(|c| st.trace.actions.get_mut(c as usize))
        {
            a.ops.end = ops0.wrapping_add(part.inherited_ops);
        }
        match part.open {
            Open::Inherited => {}
            Open::Closed => st.current = None,
            Open::Local(i) => st.current = part.actions.get(i).map(|a| a.id),
        }
        // The records are appended while the strings are interned: both take milliseconds
        // for a large part, and the copies do not depend on the ids (rewritten below when
        // numbers are not ids).
        let State {
            trace,
            strings: map,
            identity,
            ..
        } = st;
        let Trace {
            strings,
            ops,
            actions,
            arcs,
            ..
        } = trace;
        let (part_ops, part_actions, part_arcs) = (part.ops, part.actions, part.arcs);
        let parallel = ops0 > 0 && part_ops.len() >= PARALLEL_MERGE_MIN_OPS;
        let copy = move || {
            append(ops, part_ops);
            let at = actions.len();
            append(actions, part_actions);
            if ops0 > 0 {
                for a in actions.get_mut(at..).unwrap_or_default() {
                    a.ops = a.ops.start.wrapping_add(ops0)..a.ops.end.wrapping_add(ops0);
                }
            }
            append(arcs, part_arcs);
        };
        let mut intern = || {
            for &i in &new {
                let Some(d) = part.defs.get_mut(i as usize) else {
                    continue;
                };
                let n = StrId::try_from(map.len()).unwrap_or(StrId::MAX);
                let id = strings.intern_owned_hashed(std::mem::take(&mut d.text), d.hash);
                *identity &= id == n;
                map.push(id);
            }
        };
        if parallel {
            std::thread::scope(|scope| {
                scope.spawn(copy);
                intern();
            });
        } else {
            // The first part's records are moved, not copied.
            copy();
            intern();
        }
        // Numbers that are their own ids (the usual case) need no rewrite.
        if !st.identity {
            let map = &st.strings[..];
            let id = |n: StrId| map.get(n as usize).copied().unwrap_or(StrId::MAX);
            let t = &mut st.trace;
            for op in t.ops.get_mut(ops0 as usize..).unwrap_or_default() {
                *op = rewrite(op, id);
            }
            for a in t.actions.get_mut(actions0..).unwrap_or_default() {
                a.kind = id(a.kind);
                a.stable = id(a.stable);
            }
            for d in &mut part.nodes {
                d.tag = id(d.tag);
                d.path = d.path.map(id);
                d.id = d.id.map(id);
                d.classes = d.classes.map(id);
            }
            for c in &mut part.controls {
                c.offered = id(c.offered);
                c.done = id(c.done);
            }
            for l in &mut part.late {
                l.op = rewrite(&l.op, id);
            }
        }
        st.late.append(&mut part.late);
        for d in part.nodes {
            if st.described.insert(d.node) {
                st.trace.nodes.push(d);
            }
        }
        for c in part.controls {
            add_control(&mut st.trace.controls, &mut st.controls, c);
        }
        self.line_no += part.lines;
        self.offset += part.bytes;
        true
    }
}

/// Appends `src` to `dst`, taking `src`'s buffer when `dst` is empty (the first part's
/// vectors, reserved for the whole input, become the trace's).
fn append<T>(dst: &mut Vec<T>, mut src: Vec<T>) {
    if dst.is_empty() {
        *dst = src;
    } else {
        dst.append(&mut src);
    }
}

/// Which of `defs` (a part's string definitions, in file order) define new strings, in
/// number order; `None` when the sequential loader would reject one (defined out of order,
/// or sent again with a different text).
fn new_strings(st: &State, defs: &[Def]) -> Option<Vec<u32>> {
    let known = st.strings.len() as u64;
    let mut new: Vec<u32> = Vec::new();
    for (i, Def { n, text, .. }) in defs.iter().enumerate() {
        let n = u64::from(*n);
        let next = known + new.len() as u64;
        let same = if n == next {
            new.push(i as u32);
            true
        } else if n < known {
            st.strings
                .get(n as usize)
                .is_some_and(|&id| st.trace.strings.get(id) == text)
        } else if n < next {
            new.get((n - known) as usize)
                .and_then(|&j| defs.get(j as usize))
                .is_some_and(|d| d.text == *text)
        } else {
            false
        };
        if !same {
            return None;
        }
    }
    Some(new)
}

fn rewrite(op: &Op, id: impl Fn(StrId) -> StrId) -> Op {
    let pos = |p: Pos| p.get().map_or(Pos::NONE, |n| Pos::new(id(n)));
    match *op {
        Op::Read { loc, value, pos: p } => Op::Read {
            loc: id(loc),
            value: value.get().map(&id).into(),
            pos: pos(p),
        },
        Op::Write { loc, value, pos: p } => Op::Write {
            loc: id(loc),
            value: value.get().map(&id).into(),
            pos: pos(p),
        },
        Op::Enter { scope, src } => Op::Enter {
            scope: id(scope),
            src: src.map(&id),
        },
        Op::Exit => Op::Exit,
        Op::Exception { message, src } => Op::Exception {
            message: id(message),
            src: src.map(&id),
        },
    }
}

/// Which action a part's operations go to.
#[derive(Clone, Copy, Debug)]
enum Open {
    /// The one open where the part starts (none: an error the merge finds).
    Inherited,
    /// None: the part ended one.
    Closed,
    /// The part's action with this index.
    Local(usize),
}

/// A part of the input parsed without the state it starts in. Its records hold string numbers
/// of the file in place of string ids, and op ranges counted from the part's first op; the
/// fields after them say what the merge must check.
#[derive(Debug)]
struct Part {
    actions: Vec<Action>,
    arcs: Vec<Arc>,
    ops: Vec<Op>,
    nodes: Vec<NodeDesc>,
    described: HashSet<u32>,
    /// Controls reported in the part, in file order (the merge keeps each node's last).
    controls: Vec<Control>,
    /// The part's first header line, which is the trace's when none came before.
    header: Option<Header>,
    /// A record came before any header line in the part: one must have come before it.
    needs_header: bool,
    /// String definitions in file order.
    defs: Vec<Def>,
    /// The hasher of the trace's string table, to hash texts on this thread.
    hasher: FastState,
    /// One more than the largest string number defined in the part so far.
    defined_below: u64,
    /// One more than the largest string number used before the part defined it (0: none):
    /// those must be defined where the part starts.
    outer_refs: u64,
    /// The number of the part's first action, which must be the number of actions before.
    first_action: Option<u64>,
    /// One more than the largest arc head before the part's first action: those must have
    /// begun before the part.
    early_heads: u64,
    open: Open,
    /// Operations of the action open where the part starts (at the start of `ops`).
    inherited_ops: u32,
    /// The part ended the action open where it starts: `["n",a]` names it.
    inherited_end: Option<u64>,
    lines: u64,
    bytes: u64,
    /// Late operations in file order (string numbers as in `ops`). Those of an action that
    /// began in the part are checked there; the others at the merge.
    late: Vec<Late>,
    /// How many of `late` came before the part's first action began: their actions must
    /// have begun before the part.
    early_late: usize,
    /// For each of `late`, `inherited_ops` when it was read: what the action open where the
    /// part starts had logged in the part by then.
    late_inherited: Vec<u32>,
    /// The part holds an error, or reading it failed or stopped.
    failed: bool,
}

/// A string definition of a part.
#[derive(Debug)]
struct Def {
    n: u32,
    /// The text's hash in the trace's string table.
    hash: u64,
    text: String,
}

/// Why a part stopped early; the sequential loader tells the details when it reads it again.
struct Stopped;

impl From<io::Error> for Stopped {
    fn from(_: io::Error) -> Self {
        Stopped
    }
}

impl Part {
    /// Parses `input`, part number `index`, until its end, an error, or an error found in
    /// an earlier part (`stop`: the first part known to hold one), calling `block_done` after
    /// each block of lines. Its vectors are reserved for `len` bytes.
    fn read(
        input: impl BufRead,
        len: u64,
        hasher: FastState,
        (index, stop): (usize, &AtomicUsize),
        block_done: &mut dyn FnMut(),
    ) -> Part {
        let mut part = Part {
            header: None,
            needs_header: false,
            actions: reserved(estimate(len, BYTES_PER_ACTION)),
            arcs: reserved(estimate(len, BYTES_PER_ARC)),
            ops: reserved(estimate(len, BYTES_PER_OP)),
            nodes: Vec::new(),
            described: HashSet::new(),
            controls: Vec::new(),
            defs: reserved(estimate(len, BYTES_PER_STRING)),
            hasher,
            defined_below: 0,
            outer_refs: 0,
            first_action: None,
            early_heads: 0,
            open: Open::Inherited,
            inherited_ops: 0,
            inherited_end: None,
            lines: 0,
            bytes: 0,
            late: Vec::new(),
            early_late: 0,
            late_inherited: Vec::new(),
            failed: false,
        };
        let r = for_each_block(input, |block| {
            if stop.load(Ordering::Relaxed) < index {
                return Err(Stopped);
            }
            let mut lines = part.lines;
            parse_block(&mut part, block, &mut lines).map_err(|_| Stopped)?;
            part.lines = lines;
            part.bytes += block.len() as u64;
            block_done();
            Ok(())
        });
        part.failed = r.is_err();
        if part.failed {
            stop.fetch_min(index, Ordering::Relaxed);
        }
        part
    }
}

/// Cheap: the message is never shown (the sequential loader makes its own).
fn fail<T>(at: usize) -> Result<T, LineErr> {
    Err((at, String::new()))
}

impl Sink for Part {
    fn record_allowed(&mut self) -> bool {
        // Checked by the merge.
        self.needs_header |= self.header.is_none();
        true
    }

    fn header(&mut self, header: Header) {
        if self.header.is_none() {
            self.header = Some(header);
        }
    }

    fn define(&mut self, n: u64, _: usize, text: String) -> Result<(), LineErr> {
        let hash = self.hasher.hash_one(&text);
        self.defs.push(Def {
            n: n as u32,
            hash,
            text,
        });
        self.defined_below = self.defined_below.max(n + 1);
        Ok(())
    }

    #[inline]
    fn str_ref(&mut self, n: u64, _: usize) -> Result<StrId, LineErr> {
        if n >= self.defined_below {
            self.outer_refs = self.outer_refs.max(n + 1);
        }
        Ok(n as StrId)
    }

    fn begin(&mut self, a: u64, a_at: usize, mut action: Action) -> Result<(), LineErr> {
        let i = self.actions.len();
        let first = *self.first_action.get_or_insert(a);
        if a != first + i as u64 {
            return fail(a_at);
        }
        let at = self.ops.len() as u32;
        action.ops = at..at;
        self.actions.push(action);
        self.open = Open::Local(i);
        Ok(())
    }

    fn arc(&mut self, arc: Arc, h_at: usize) -> Result<(), LineErr> {
        let head = u64::from(arc.head);
        match self.first_action {
            Some(first) if head >= first + self.actions.len() as u64 => return fail(h_at),
            Some(_) => {}
            None => self.early_heads = self.early_heads.max(head + 1),
        }
        self.arcs.push(arc);
        Ok(())
    }

    #[inline]
    fn op(&mut self, op: Op, at: usize) -> Result<(), LineErr> {
        match self.open {
            Open::Inherited => self.inherited_ops += 1,
            Open::Local(i) => {
                let end = self.ops.len() as u32 + 1;
                if let Some(a) = self.actions.get_mut(i) {
                    a.ops.end = end;
                }
            }
            Open::Closed => return fail(at),
        }
        self.ops.push(op);
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
        if self.first_action.is_none() {
            self.early_late += 1;
        }
        if let Some(first) = self.first_action
            && a >= first
        {
            let Some(action) = self.actions.get((a - first) as usize) else {
                return fail(a_at);
            };
            if check_late_index(a, index, action.ops.len() as u32, i_at).is_err() {
                return fail(i_at);
            }
        }
        self.late.push(Late {
            action: a as ActionId,
            index,
            op,
        });
        self.late_inherited.push(self.inherited_ops);
        Ok(())
    }

    fn node(&mut self, desc: NodeDesc) {
        if self.described.insert(desc.node) {
            self.nodes.push(desc);
        }
    }

    fn control(&mut self, control: Control) {
        self.controls.push(control);
    }

    fn end(&mut self, a: u64, a_at: usize) -> Result<(), LineErr> {
        match self.open {
            Open::Inherited => self.inherited_end = Some(a),
            Open::Local(i) => {
                if self.actions.get(i).map(|x| u64::from(x.id)) != Some(a) {
                    return fail(a_at);
                }
            }
            Open::Closed => return fail(a_at),
        }
        self.open = Open::Closed;
        Ok(())
    }
}
