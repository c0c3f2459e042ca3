//! EventRacer's binary `ER_actionlog`: export (so EventRacer's `raceanalyzer` and its web UI can
//! read our traces) and import (so we can analyse EventRacer's traces).
//!
//! Layout (all integers little-endian `i32`; see `docs/trace-format.md` for the full story):
//!
//! ```text
//! File      := StringSet(vars) StringSet(scopes) ActionLog StringSet(js) StringSet(values) [Shepherd]
//! StringSet := nbytes, nbytes of NUL-terminated strings, bucket_count (> number of strings)
//! ActionLog := num_actions, num_arcs, num_arcs × (tail, head, duration_ms | -1),
//!              num_actions × (id, type, ncmds, ncmds × (command, location))
//! Shepherd  := "SHEPHERD" version StringSet(meta) page num_actions × (kind, stable)
//!              num_arcs × arc_kind  num_scopes × (scopes_id, is_exception, label, src | -1)
//!              [num_positions × (access ordinal, src)]   (versions 2 and 3)
//!              [num_nodes × (node, tag, path | -1, id | -1, classes | -1)]   (versions 3 and 4)
//!              [num_controls × (node, offered, done)]   (version 4)
//! ```
//!
//! String ids are byte offsets into their table. Commands: 0 `ENTER_SCOPE` (scopes id),
//! 1 `EXIT_SCOPE` (-1), 2 `READ_MEMORY` / 3 `WRITE_MEMORY` (vars id), 4 `TRIGGER_ARC` (id of the
//! triggered action), 5 `MEMORY_VALUE` (values id, right after the read or write it qualifies).
//!
//! Our model maps onto it as follows. Locations go to `vars`, value summaries to `values`.
//! Scope labels go to `scopes`, with the source position appended as `label @@ url:line:col`;
//! an exception becomes an empty scope `!exception: message[ @@ position]`. Fork arcs also get a
//! `TRIGGER_ARC` command at the end of their tail action. The `js` table stays empty: traces
//! carry positions, not script texts. Kinds, stable ids, the page URL, fork/join flags, the
//! source positions of reads and writes and the DOM node descriptions have no place in
//! EventRacer's layout, so they go to the `Shepherd` trailer, which EventRacer's readers never
//! reach (they stop after `values`).
//!
//! Import accepts what EventRacer's own writers produce: sparse action ids (remapped densely in
//! id order, the original ids kept in [`ErImport::original_ids`] and as stable ids `er:<id>`),
//! actions that appear only as arc endpoints, missing optional tables, string ids that point
//! inside a string (EventRacer reads the suffix). Every count is checked against the bytes
//! left before anything is allocated; errors name the byte offset of the offending field.

use crate::error::ReadError;
use crate::hash::FastState;
use crate::model::{
    Action, ActionId, ActionType, Arc, ArcKind, Control, Header, NodeDesc, Op, Pos, StrId, Trace,
    Val,
};
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

/// Magic that starts our trailer after the `values` table.
const TRAILER_MAGIC: &[u8; 8] = b"SHEPHERD";
/// Version of the trailer layout written when no access has a source position (readers of
/// version 1 can still read it).
const TRAILER_VERSION: i32 = 1;
/// Version of the trailer layout with access positions appended.
const TRAILER_VERSION_POS: i32 = 2;
/// Version of the trailer layout with access positions and node descriptions appended.
const TRAILER_VERSION_NODES: i32 = 3;
/// Version of the trailer layout with the exercised controls appended after the nodes.
const TRAILER_VERSION_CONTROLS: i32 = 4;
/// Separator between a scope label and its source position in the `scopes` table.
pub const SRC_SEPARATOR: &str = " @@ ";
/// Prefix of the empty scope that stands for an exception.
pub const EXCEPTION_PREFIX: &str = "!exception: ";

const ENTER_SCOPE: i32 = 0;
const EXIT_SCOPE: i32 = 1;
const READ_MEMORY: i32 = 2;
const WRITE_MEMORY: i32 = 3;
const TRIGGER_ARC: i32 = 4;
const MEMORY_VALUE: i32 = 5;

/// A trace imported from an `ER_actionlog`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErImport {
    /// The trace, with dense action ids.
    pub trace: Trace,
    /// `original_ids[dense id]` is the id the action had in the file.
    pub original_ids: Vec<i64>,
    /// Things that were tolerated (backwards arcs dropped, stray `MEMORY_VALUE`s, trailing
    /// bytes); worth showing to the user, never fatal.
    pub warnings: Vec<String>,
}

/// Heuristic format sniffing on the first bytes of a file (a few hundred are enough).
pub fn looks_like_jsonl(prefix: &[u8]) -> bool {
    let p = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let start = p
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(p.len());
    let p = &p[start..];
    let line = &p[..p.iter().position(|&b| b == b'\n').unwrap_or(p.len())];
    line.starts_with(b"{") && line.windows(14).any(|w| w == b"shepherd-trace")
}

// ---------------------------------------------------------------------------------------------
// Export

/// One string table being built: data bytes and the offset of each of our string ids.
struct TableOut {
    data: Vec<u8>,
    count: usize,
    /// Offset per string id of the trace, -1 when not yet in this table.
    by_id: Vec<i32>,
}

impl TableOut {
    fn new() -> TableOut {
        TableOut {
            data: Vec::new(),
            count: 0,
            by_id: Vec::new(),
        }
    }

    /// The offset of trace string `id` (text `s`), added on first use.
    fn add(&mut self, id: StrId, s: &str) -> io::Result<i32> {
        let i = id as usize;
        if let Some(&o) = self.by_id.get(i).filter(|&&o| o >= 0) {
            return Ok(o);
        }
        let o = self.push(s)?;
        if self.by_id.len() <= i {
            self.by_id.resize(i + 1, -1);
        }
        self.by_id[i] = o;
        Ok(o)
    }

    /// Appends `s` (no dedup) and returns its offset.
    fn push(&mut self, s: &str) -> io::Result<i32> {
        let off = i32::try_from(self.data.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "string table over 2 GiB"))?;
        // A NUL would cut the string short in EventRacer's reader.
        if s.contains('\0') {
            self.data
                .extend_from_slice(s.replace('\0', "\u{FFFD}").as_bytes());
        } else {
            self.data.extend_from_slice(s.as_bytes());
        }
        self.data.push(0);
        self.count += 1;
        Ok(off)
    }

    fn write(&self, out: &mut Vec<u8>) -> io::Result<()> {
        put(out, len_i32(self.data.len())?);
        out.extend_from_slice(&self.data);
        // EventRacer probes linearly and needs a free bucket: more buckets than strings.
        put(out, len_i32(self.count * 2 + 1)?);
        Ok(())
    }
}

fn put(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn len_i32(n: usize) -> io::Result<i32> {
    i32::try_from(n).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "count over 2^31"))
}

/// Writes `trace` as an `ER_actionlog` (with our trailer) to `out`.
pub fn write_er(trace: &Trace, mut out: impl Write) -> io::Result<()> {
    out.write_all(&er_bytes(trace)?)?;
    out.flush()
}

/// The `ER_actionlog` bytes of `trace`.
///
/// Arc delays above `i32::MAX` ms are clamped (browsers clamp them far lower).
pub fn to_er_bytes(trace: &Trace) -> Vec<u8> {
    // Only a trace with over 2^31 strings or commands can fail; such a trace cannot be built.
    er_bytes(trace).unwrap_or_default()
}

fn er_bytes(trace: &Trace) -> io::Result<Vec<u8>> {
    let s = |id: StrId| trace.strings.get(id);
    let mut vars = TableOut::new();
    let mut scopes = TableOut::new();
    let mut values = TableOut::new();
    let mut meta = TableOut::new();
    // (scopes offset, is exception, label, src) for every scope-table entry: exact decoding.
    let mut scope_decoding: Vec<(i32, bool, StrId, Option<StrId>)> = Vec::new();
    let mut scope_index: HashMap<(bool, StrId, Option<StrId>), i32> = HashMap::new();
    let mut scope_entry = |scopes: &mut TableOut,
                           decoding: &mut Vec<(i32, bool, StrId, Option<StrId>)>,
                           exception: bool,
                           label: StrId,
                           src: Option<StrId>|
     -> io::Result<i32> {
        if let Some(&off) = scope_index.get(&(exception, label, src)) {
            return Ok(off);
        }
        let text = if exception {
            with_src(&format!("{EXCEPTION_PREFIX}{}", s(label)), src.map(s))
        } else {
            with_src(s(label), src.map(s))
        };
        let off = scopes.push(&text)?;
        scope_index.insert((exception, label, src), off);
        decoding.push((off, exception, label, src));
        Ok(off)
    };

    // Fork arcs become TRIGGER_ARC commands of their tail, in arc order.
    let mut triggers: Vec<Vec<ActionId>> = vec![Vec::new(); trace.actions.len()];
    for a in &trace.arcs {
        if a.kind == ArcKind::Fork
            && let Some(t) = triggers.get_mut(a.tail as usize)
        {
            t.push(a.head);
        }
    }

    let mut log = Vec::with_capacity(16 + trace.arcs.len() * 12 + trace.ops.len() * 16);
    put(&mut log, len_i32(trace.actions.len())?);
    put(&mut log, len_i32(trace.arcs.len())?);
    for a in &trace.arcs {
        put(&mut log, a.tail as i32);
        put(&mut log, a.head as i32);
        put(
            &mut log,
            a.delay_ms
                .map_or(-1, |d| i32::try_from(d).unwrap_or(i32::MAX)),
        );
    }
    let mut cmds: Vec<(i32, i32)> = Vec::new();
    // (ordinal among all reads and writes, position) of every access that has a position.
    let mut positions: Vec<(i32, StrId)> = Vec::new();
    let mut accesses: usize = 0;
    for action in &trace.actions {
        cmds.clear();
        for op in trace.ops_of(action.id) {
            match *op {
                Op::Read { loc, value, pos } | Op::Write { loc, value, pos } => {
                    let kind = if matches!(op, Op::Read { .. }) {
                        READ_MEMORY
                    } else {
                        WRITE_MEMORY
                    };
                    cmds.push((kind, vars.add(loc, s(loc))?));
                    if let Some(v) = value.get() {
                        cmds.push((MEMORY_VALUE, values.add(v, s(v))?));
                    }
                    if let Some(p) = pos.get() {
                        positions.push((len_i32(accesses)?, p));
                    }
                    accesses += 1;
                }
                Op::Enter { scope, src } => {
                    let off = scope_entry(&mut scopes, &mut scope_decoding, false, scope, src)?;
                    cmds.push((ENTER_SCOPE, off));
                }
                Op::Exit => cmds.push((EXIT_SCOPE, -1)),
                Op::Exception { message, src } => {
                    let off = scope_entry(&mut scopes, &mut scope_decoding, true, message, src)?;
                    cmds.push((ENTER_SCOPE, off));
                    cmds.push((EXIT_SCOPE, -1));
                }
            }
        }
        for &head in triggers.get(action.id as usize).map_or(&[][..], |v| v) {
            cmds.push((TRIGGER_ARC, head as i32));
        }
        put(&mut log, action.id as i32);
        put(&mut log, action.ty as i32);
        put(&mut log, len_i32(cmds.len())?);
        for &(k, l) in &cmds {
            put(&mut log, k);
            put(&mut log, l);
        }
    }

    // Trailer: what EventRacer's layout has no room for. The meta table must be complete
    // before it is written, so the parts that refer to it are built first.
    let page = match &trace.header.page {
        Some(p) => meta.push(p)?,
        None => -1,
    };
    let mut per_action = Vec::with_capacity(trace.actions.len() * 8);
    for action in &trace.actions {
        put(&mut per_action, meta.add(action.kind, s(action.kind))?);
        put(&mut per_action, meta.add(action.stable, s(action.stable))?);
    }
    let mut per_scope = Vec::with_capacity(scope_decoding.len() * 16);
    for &(off, exception, label, src) in &scope_decoding {
        put(&mut per_scope, off);
        put(&mut per_scope, i32::from(exception));
        put(&mut per_scope, meta.add(label, s(label))?);
        put(&mut per_scope, src.map_or(Ok(-1), |p| meta.add(p, s(p)))?);
    }
    let mut per_pos = Vec::with_capacity(positions.len() * 8);
    for &(ordinal, p) in &positions {
        put(&mut per_pos, ordinal);
        put(&mut per_pos, meta.add(p, s(p))?);
    }
    let mut per_node = Vec::with_capacity(trace.nodes.len() * 20);
    for d in &trace.nodes {
        // The node number's bits (numbers are u32, the layout's words i32).
        put(&mut per_node, d.node as i32);
        put(&mut per_node, meta.add(d.tag, s(d.tag))?);
        for o in [d.path, d.id, d.classes] {
            put(&mut per_node, o.map_or(Ok(-1), |p| meta.add(p, s(p)))?);
        }
    }
    let mut per_control = Vec::with_capacity(trace.controls.len() * 12);
    for c in &trace.controls {
        put(&mut per_control, c.node as i32);
        put(&mut per_control, meta.add(c.offered, s(c.offered))?);
        put(&mut per_control, meta.add(c.done, s(c.done))?);
    }
    let mut trailer = Vec::with_capacity(
        64 + meta.data.len()
            + per_control.len()
            + per_action.len()
            + per_scope.len()
            + per_pos.len()
            + per_node.len()
            + trace.arcs.len() * 4,
    );
    trailer.extend_from_slice(TRAILER_MAGIC);
    // The oldest layout that holds everything, so older readers read what they can.
    let version = if !trace.controls.is_empty() {
        TRAILER_VERSION_CONTROLS
    } else if !trace.nodes.is_empty() {
        TRAILER_VERSION_NODES
    } else if !positions.is_empty() {
        TRAILER_VERSION_POS
    } else {
        TRAILER_VERSION
    };
    put(&mut trailer, version);
    meta.write(&mut trailer)?;
    put(&mut trailer, page);
    put(&mut trailer, len_i32(trace.actions.len())?);
    trailer.extend_from_slice(&per_action);
    put(&mut trailer, len_i32(trace.arcs.len())?);
    for a in &trace.arcs {
        put(&mut trailer, if a.kind == ArcKind::Fork { 0 } else { 1 });
    }
    put(&mut trailer, len_i32(scope_decoding.len())?);
    trailer.extend_from_slice(&per_scope);
    if version >= TRAILER_VERSION_POS {
        put(&mut trailer, len_i32(positions.len())?);
        trailer.extend_from_slice(&per_pos);
    }
    if version >= TRAILER_VERSION_NODES {
        put(&mut trailer, len_i32(trace.nodes.len())?);
        trailer.extend_from_slice(&per_node);
    }
    if version >= TRAILER_VERSION_CONTROLS {
        put(&mut trailer, len_i32(trace.controls.len())?);
        trailer.extend_from_slice(&per_control);
    }

    let mut out = Vec::with_capacity(
        vars.data.len() + scopes.data.len() + values.data.len() + log.len() + trailer.len() + 40,
    );
    vars.write(&mut out)?;
    scopes.write(&mut out)?;
    out.extend_from_slice(&log);
    TableOut::new().write(&mut out)?; // js: no script texts in our traces
    values.write(&mut out)?;
    out.extend_from_slice(&trailer);
    Ok(out)
}

fn with_src(label: &str, src: Option<&str>) -> String {
    match src {
        Some(p) => format!("{label}{SRC_SEPARATOR}{p}"),
        None => label.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// Import

/// Bounds-checked little-endian reader over the whole file.
struct In<'a> {
    b: &'a [u8],
    pos: usize,
}

impl In<'_> {
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, ReadError> {
        Err(ReadError::Er {
            offset: at as u64,
            message: message.into(),
        })
    }

    fn left(&self) -> usize {
        self.b.len() - self.pos
    }

    fn i32(&mut self, what: &str) -> Result<i32, ReadError> {
        match self.b.get(self.pos..self.pos + 4) {
            Some(&[a, b, c, d]) => {
                self.pos += 4;
                Ok(i32::from_le_bytes([a, b, c, d]))
            }
            _ => self.err(
                self.pos,
                format!("file ends inside {what} ({} bytes left)", self.left()),
            ),
        }
    }

    /// A count of elements of `size` bytes each that must fit in the rest of the file.
    fn count(&mut self, what: &str, size: usize) -> Result<usize, ReadError> {
        let at = self.pos;
        let n = self.i32(what)?;
        let Ok(n) = usize::try_from(n) else {
            return self.err(at, format!("negative {what}: {n}"));
        };
        if n.saturating_mul(size) > self.left() {
            return self.err(
                at,
                format!(
                    "{what} {n} needs {} bytes but only {} are left",
                    n.saturating_mul(size),
                    self.left()
                ),
            );
        }
        Ok(n)
    }
}

/// A string table read from the file.
struct TableIn<'a> {
    name: &'static str,
    /// Offset of the data in the file.
    at: usize,
    data: &'a [u8],
    /// The data as text, when it is all valid UTF-8 (checked once, not string by string).
    text: Option<&'a str>,
    /// How many strings the data holds (NULs).
    strings: usize,
}

impl<'a> TableIn<'a> {
    fn read(
        input: &mut In<'a>,
        name: &'static str,
        warnings: &mut Vec<String>,
    ) -> Result<Self, ReadError> {
        let nbytes = input.count(&format!("{name} table size"), 1)?;
        let at = input.pos;
        let data = &input.b[at..at + nbytes];
        input.pos += nbytes;
        if data.last().is_some_and(|&b| b != 0) {
            return input.err(
                at + nbytes - 1,
                format!("{name} table does not end with NUL"),
            );
        }
        let buckets_at = input.pos;
        let buckets = input.i32(&format!("{name} bucket count"))?;
        let strings = data.iter().filter(|&&b| b == 0).count();
        if buckets < 0 {
            return input.err(
                buckets_at,
                format!("negative {name} bucket count {buckets}"),
            );
        }
        if (buckets as usize) <= strings && strings > 0 {
            warnings.push(format!(
                "{name} table: {buckets} hash buckets for {strings} strings (EventRacer needs more buckets than strings)"
            ));
        }
        Ok(TableIn {
            name,
            at,
            data,
            text: std::str::from_utf8(data).ok(),
            strings,
        })
    }

    fn empty(name: &'static str) -> Self {
        TableIn {
            name,
            at: 0,
            data: &[],
            text: Some(""),
            strings: 0,
        }
    }

    /// The text at byte offset `id` (verbatim up to the NUL; invalid UTF-8 replaced).
    fn text(&self, id: i32, field_at: usize) -> Result<std::borrow::Cow<'a, str>, ReadError> {
        let data = self.data;
        let Some(rest) = usize::try_from(id)
            .ok()
            .filter(|&i| i < data.len())
            .map(|i| &data[i..])
        else {
            return Err(ReadError::Er {
                offset: field_at as u64,
                message: format!(
                    "{} id {id} outside the table ({} bytes at byte {})",
                    self.name,
                    data.len(),
                    self.at
                ),
            });
        };
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        // An offset inside a character (EventRacer reads the suffix) is no boundary: such
        // a text is read as any invalid UTF-8 is.
        let start = data.len() - rest.len();
        match self.text.and_then(|t| t.get(start..start + end)) {
            Some(t) => Ok(std::borrow::Cow::Borrowed(t)),
            None => Ok(String::from_utf8_lossy(&rest[..end])),
        }
    }
}

struct RawAction {
    id: i32,
    id_at: usize,
    ty: i32,
    /// Offset in the file of the first command.
    cmds_at: usize,
    ncmds: usize,
}

/// Our trailer, parsed but not yet applied.
struct Trailer<'a> {
    meta: TableIn<'a>,
    page: Option<(i32, usize)>,
    /// Offset of the first (kind, stable) pair and how many there are.
    actions_at: usize,
    num_actions: usize,
    /// Fork (0) / join (1) per logged arc, with the offset of each.
    arc_kinds: Vec<(usize, i32)>,
    /// Scopes-table offset → (is exception, label meta id, src meta id or -1, offset of entry).
    scopes: HashMap<i32, (bool, i32, i32, usize)>,
    /// (access ordinal, position meta id, offset of the entry), ordinals strictly increasing.
    positions: Vec<(u32, i32, usize)>,
    /// Offset of the first node description and how many there are (20 bytes each).
    nodes_at: usize,
    num_nodes: usize,
    /// Offset of the first control and how many there are (12 bytes each).
    controls_at: usize,
    num_controls: usize,
}

fn read_trailer<'a>(input: &mut In<'a>) -> Result<Trailer<'a>, ReadError> {
    input.pos += TRAILER_MAGIC.len();
    let v_at = input.pos;
    let version = input.i32("the trailer version")?;
    if !(TRAILER_VERSION..=TRAILER_VERSION_CONTROLS).contains(&version) {
        return input.err(v_at, format!("unknown Shepherd trailer version {version}"));
    }
    let mut ignored = Vec::new();
    let meta = TableIn::read(input, "trailer", &mut ignored)?;
    let page_at = input.pos;
    let page = input.i32("the trailer page")?;
    let num_actions = input.count("trailer action count", 8)?;
    let actions_at = input.pos;
    input.pos += num_actions * 8;
    let num_arcs = input.count("trailer arc count", 4)?;
    let mut arc_kinds = Vec::with_capacity(num_arcs);
    for _ in 0..num_arcs {
        let at = input.pos;
        arc_kinds.push((at, input.i32("trailer arc kind")?));
    }
    let num_scopes = input.count("trailer scope count", 16)?;
    let mut scopes = HashMap::with_capacity(num_scopes);
    for _ in 0..num_scopes {
        let at = input.pos;
        let off = input.i32("trailer scope")?;
        let exception = input.i32("trailer scope")? != 0;
        let label = input.i32("trailer scope")?;
        let src = input.i32("trailer scope")?;
        scopes.insert(off, (exception, label, src, at));
    }
    let mut positions = Vec::new();
    if version >= TRAILER_VERSION_POS {
        let n = input.count("trailer position count", 8)?;
        positions.reserve_exact(n);
        for _ in 0..n {
            let at = input.pos;
            let ordinal = input.i32("trailer position")?;
            let src = input.i32("trailer position")?;
            let ordinal = match (u32::try_from(ordinal), positions.last()) {
                (Ok(o), None) => o,
                (Ok(o), Some(&(prev, _, _))) if o > prev => o,
                _ => {
                    return input.err(
                        at,
                        format!("trailer position for access {ordinal} is out of order"),
                    );
                }
            };
            positions.push((ordinal, src, at));
        }
    }
    let (mut num_nodes, mut nodes_at) = (0, input.pos);
    if version >= TRAILER_VERSION_NODES {
        num_nodes = input.count("trailer node count", 20)?;
        nodes_at = input.pos;
        input.pos += num_nodes * 20;
    }
    let (mut num_controls, mut controls_at) = (0, input.pos);
    if version >= TRAILER_VERSION_CONTROLS {
        num_controls = input.count("trailer control count", 12)?;
        controls_at = input.pos;
        input.pos += num_controls * 12;
    }
    if input.left() > 0 {
        return input.err(
            input.pos,
            format!("{} bytes after the trailer", input.left()),
        );
    }
    Ok(Trailer {
        meta,
        page: (page >= 0).then_some((page, page_at)),
        actions_at,
        num_actions,
        arc_kinds,
        scopes,
        positions,
        nodes_at,
        num_nodes,
        controls_at,
        num_controls,
    })
}

fn word(bytes: &[u8], at: usize) -> i32 {
    match bytes.get(at..at + 4) {
        Some(&[a, b, c, d]) => i32::from_le_bytes([a, b, c, d]),
        // Callers only read ranges checked by `In::count`.
        _ => 0,
    }
}

/// Reads an `ER_actionlog` file held in memory.
pub fn read_er(bytes: &[u8]) -> Result<ErImport, ReadError> {
    let mut warnings = Vec::new();
    let mut input = In { b: bytes, pos: 0 };
    let vars = TableIn::read(&mut input, "vars", &mut warnings)?;
    let scopes = TableIn::read(&mut input, "scopes", &mut warnings)?;

    let num_actions = input.count("action count", 12)?;
    let num_arcs = input.count("arc count", 12)?;
    let mut raw_arcs = Vec::with_capacity(num_arcs);
    for _ in 0..num_arcs {
        let at = input.pos;
        let tail = input.i32("an arc")?;
        let head = input.i32("an arc")?;
        let dur = input.i32("an arc")?;
        if tail < 0 || head < 0 {
            return input.err(at, format!("arc {tail} -> {head} has a negative end"));
        }
        raw_arcs.push((at, tail, head, dur));
    }
    let mut raw = Vec::with_capacity(num_actions.min(input.left() / 12));
    // Operations to come, at most: every command but values and triggers (an exception's
    // enter and exit make one), so the operations are allocated once, at their size.
    let mut max_ops = 0usize;
    for _ in 0..num_actions {
        let id_at = input.pos;
        let id = input.i32("an action header")?;
        let ty_at = input.pos;
        let ty = input.i32("an action header")?;
        let ncmds = input.count("command count", 8)?;
        if id < 0 {
            return input.err(id_at, format!("negative action id {id}"));
        }
        if !(0..=4).contains(&ty) {
            warnings.push(format!(
                "action {id} (byte {ty_at}) has unknown type {ty}; read as unknown"
            ));
        }
        raw.push(RawAction {
            id,
            id_at,
            ty,
            cmds_at: input.pos,
            ncmds,
        });
        max_ops += (0..ncmds)
            .filter(|&k| (ENTER_SCOPE..=WRITE_MEMORY).contains(&word(bytes, input.pos + k * 8)))
            .count();
        input.pos += ncmds * 8;
    }
    // The two trailing tables are optional (EventRacer checks for the end of the file).
    if input.left() > 0 {
        TableIn::read(&mut input, "js", &mut warnings)?;
    }
    let values = if input.left() > 0 {
        TableIn::read(&mut input, "values", &mut warnings)?
    } else {
        TableIn::empty("values")
    };
    let trailer = if input.b[input.pos..].starts_with(TRAILER_MAGIC) {
        Some(read_trailer(&mut input)?)
    } else {
        if input.left() > 0 {
            warnings.push(format!(
                "{} unknown bytes after the tables at byte {} ignored",
                input.left(),
                input.pos
            ));
        }
        None
    };

    // Dense ids: every action and every arc endpoint, in original id order. (Ours and most
    // of EventRacer's files number their actions 0, 1, 2… already, and need no sort.)
    let n = raw.len();
    let in_order = raw.iter().enumerate().all(|(i, a)| a.id as usize == i)
        && raw_arcs
            .iter()
            .all(|&(_, tail, head, _)| (tail as usize) < n && (head as usize) < n);
    let ids: Vec<i64> = if in_order {
        (0..n as i64).collect()
    } else {
        let mut ids = Vec::with_capacity(raw.len() + raw_arcs.len() * 2);
        ids.extend(raw.iter().map(|a| i64::from(a.id)));
        for &(_, tail, head, _) in &raw_arcs {
            ids.push(i64::from(tail));
            ids.push(i64::from(head));
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    // (Ids and endpoints are not negative: checked as they were read.)
    let dense = |id: i32| {
        if in_order {
            id as ActionId
        } else {
            ids.binary_search(&i64::from(id))
                .map_or(0, |i| i as ActionId)
        }
    };
    let mut slots: Vec<Option<usize>> = vec![None; ids.len()];
    for (i, a) in raw.iter().enumerate() {
        let d = dense(a.id) as usize;
        if slots[d].is_some() {
            return input.err(a.id_at, format!("action id {} appears twice", a.id));
        }
        slots[d] = Some(i);
    }
    if let Some(t) = &trailer {
        // Our writer exports every action, densely, so the trailer describes them all.
        if t.num_actions != ids.len() || raw.len() != ids.len() {
            return input.err(
                t.actions_at.saturating_sub(4),
                format!(
                    "trailer describes {} actions, the log has {}",
                    t.num_actions,
                    ids.len()
                ),
            );
        }
        if t.arc_kinds.len() != raw_arcs.len() {
            return input.err(
                t.actions_at + t.num_actions * 8,
                format!(
                    "trailer describes {} arcs, the log has {}",
                    t.arc_kinds.len(),
                    raw_arcs.len()
                ),
            );
        }
    }

    let mut trace = Trace {
        header: Header {
            version: crate::model::FORMAT_VERSION,
            page: None,
        },
        ..Trace::default()
    };
    // Every size is bounded by the file's (checked counts), so these reservations are too.
    let _ = trace.ops.try_reserve_exact(max_ops);
    let _ = trace.actions.try_reserve_exact(ids.len());
    let _ = trace.arcs.try_reserve_exact(raw_arcs.len());
    let meta = trailer.as_ref().map(|t| &t.meta);
    // (Without our trailer, stable ids are made up, one per action, and kinds are scope
    // labels. Not more: room reserved in the index is touched, whether used or not.)
    trace.strings.try_reserve(
        vars.strings + scopes.strings * 2 + values.strings + meta.map_or(ids.len(), |m| m.strings),
        vars.data.len()
            + scopes.data.len()
            + values.data.len()
            + meta.map_or(ids.len() * 12, |m| m.data.len()),
    );
    if let Some(t) = &trailer
        && let Some((page, at)) = t.page
    {
        trace.header.page = Some(t.meta.text(page, at)?.into_owned());
    }
    let mut cx = Importer {
        bytes,
        vars: &vars,
        scopes: &scopes,
        values: &values,
        trailer: trailer.as_ref(),
        vars_ids: Ids::new(&vars),
        values_ids: Ids::new(&values),
        meta_ids: meta.map_or_else(Ids::default, Ids::new),
        scope_cache: HashMap::default(),
        triggered: HashSet::default(),
        warnings: &mut warnings,
        accesses: 0,
        next_pos: 0,
    };
    for (d, slot) in slots.iter().enumerate() {
        // With our trailer, kind and stable id are interned before the ops, as the builder
        // and the JSONL reader do, so a trace read back numbers its strings the same way.
        let named = match &trailer {
            Some(t) => {
                let at = t.actions_at + d * 8;
                Some((
                    cx.meta(&mut trace, word(bytes, at), at)?,
                    cx.meta(&mut trace, word(bytes, at + 4), at + 4)?,
                ))
            }
            None => None,
        };
        let start = trace.ops.len() as u32;
        let (ty, first_scope) = match slot {
            None => (ActionType::Unknown, None),
            Some(i) => {
                let a = &raw[*i];
                let first = cx.commands(a, &mut trace)?;
                (ActionType::from_code(i64::from(a.ty)), first)
            }
        };
        let (kind, stable) = match named {
            Some(n) => n,
            None => (
                first_scope.unwrap_or_else(|| trace.strings.intern("")),
                trace.strings.intern(&format!("er:{}", ids[d])),
            ),
        };
        trace.actions.push(Action {
            id: d as ActionId,
            ty,
            kind,
            stable,
            ops: start..trace.ops.len() as u32,
        });
    }

    if let Some(t) = &trailer
        && let Some(&(ordinal, _, at)) = t.positions.get(cx.next_pos)
    {
        return input.err(
            at,
            format!(
                "trailer position for access {ordinal}, the log has {} accesses",
                cx.accesses
            ),
        );
    }
    if let Some(t) = &trailer {
        let mut seen = std::collections::HashSet::with_capacity(t.num_nodes);
        for k in 0..t.num_nodes {
            let at = t.nodes_at + k * 20;
            let node = word(bytes, at) as u32;
            if !seen.insert(node) {
                return input.err(at, format!("node {node} described twice"));
            }
            let tag = cx.meta(&mut trace, word(bytes, at + 4), at + 4)?;
            let mut opt = |off: usize| match word(bytes, at + off) {
                -1 => Ok(None),
                id => cx.meta(&mut trace, id, at + off).map(Some),
            };
            let (path, id, classes) = (opt(8)?, opt(12)?, opt(16)?);
            trace.nodes.push(NodeDesc {
                node,
                tag,
                path,
                id,
                classes,
            });
        }
        let mut seen = std::collections::HashSet::with_capacity(t.num_controls);
        for k in 0..t.num_controls {
            let at = t.controls_at + k * 12;
            let node = word(bytes, at) as u32;
            if !seen.insert(node) {
                return input.err(at, format!("control {node} listed twice"));
            }
            let offered = cx.meta(&mut trace, word(bytes, at + 4), at + 4)?;
            let done = cx.meta(&mut trace, word(bytes, at + 8), at + 8)?;
            trace.controls.push(Control {
                node,
                offered,
                done,
            });
        }
    }
    let triggered = std::mem::take(&mut cx.triggered);
    for (i, &(at, tail, head, dur)) in raw_arcs.iter().enumerate() {
        if tail >= head {
            warnings.push(format!(
                "arc {tail} -> {head} at byte {at} does not go forward; dropped"
            ));
            continue;
        }
        let delay_ms = u32::try_from(dur).ok();
        let kind = match trailer.as_ref().map(|t| t.arc_kinds[i]) {
            Some((_, 0)) => ArcKind::Fork,
            Some((_, 1)) => ArcKind::Join,
            Some((k_at, k)) => return input.err(k_at, format!("unknown arc kind {k}")),
            None if delay_ms.is_some() || triggered.contains(&(tail, head)) => ArcKind::Fork,
            None => ArcKind::Join,
        };
        trace.arcs.push(Arc {
            tail: dense(tail),
            head: dense(head),
            kind,
            delay_ms,
        });
    }
    Ok(ErImport {
        trace,
        original_ids: ids,
        warnings,
    })
}

/// Bytes of a table per entry of [`Ids::coarse`].
const COARSE: usize = 64;

/// Table offset → interned id, for the offsets seen so far.
///
/// Commands name strings by their offset in the table. The offsets of the table's strings
/// are found once (in order), with a coarse index by offset, so the string at an offset is a
/// short walk from its index entry, and the offsets a log names in order (a long session
/// makes its objects as it goes) are looked up in order, near one another. A map keyed by
/// offset scattered them: a cache miss each, a fifth of the load (276 000 names). Offsets
/// inside a string (EventRacer reads the suffix) go to a map.
#[derive(Default)]
struct Ids {
    /// Offset of each string of the table, ascending.
    starts: Vec<u32>,
    /// Per [`COARSE`] bytes of the table: the first string starting in them or later.
    coarse: Vec<u32>,
    /// Per string: its interned id, `StrId::MAX` until seen.
    ids: Vec<StrId>,
    /// Offsets that are not a string's start.
    inside: HashMap<i32, StrId, FastState>,
}

impl Ids {
    fn new(table: &TableIn) -> Ids {
        let data = table.data;
        let mut starts = Vec::new();
        // The counts come from the file's size, so these succeed unless the file is huge.
        let _ = starts.try_reserve_exact(table.strings);
        let mut at = 0;
        while at < data.len() {
            // Tables are at most 2 GiB (`In::count` read their size as an `i32`).
            starts.push(at as u32);
            at += data[at..]
                .iter()
                .position(|&b| b == 0)
                .map_or(data.len(), |n| n + 1);
        }
        let mut coarse = Vec::new();
        let _ = coarse.try_reserve_exact(data.len() / COARSE + 1);
        let mut k = 0;
        for block in 0..data.len().div_ceil(COARSE) {
            while starts
                .get(k)
                .is_some_and(|&s| (s as usize) < block * COARSE)
            {
                k += 1;
            }
            coarse.push(k as u32);
        }
        let mut ids = Vec::new();
        let _ = ids.try_reserve_exact(starts.len());
        ids.resize(starts.len(), StrId::MAX);
        Ids {
            starts,
            coarse,
            ids,
            inside: HashMap::default(),
        }
    }

    /// The slot of offset `id`: the string starting there, or `None` for an offset inside
    /// a string or outside the table.
    fn slot(&self, id: i32) -> Option<usize> {
        let off = u32::try_from(id).ok()?;
        let mut k = *self.coarse.get(off as usize / COARSE)? as usize;
        while let Some(&s) = self.starts.get(k) {
            if s >= off {
                return (s == off).then_some(k);
            }
            k += 1;
        }
        None
    }

    fn get(&self, id: i32) -> Option<StrId> {
        match self.slot(id) {
            Some(k) => self.ids.get(k).copied().filter(|&s| s != StrId::MAX),
            None => self.inside.get(&id).copied(),
        }
    }

    fn insert(&mut self, id: i32, s: StrId) {
        match self.slot(id) {
            Some(k) => {
                if let Some(slot) = self.ids.get_mut(k) {
                    *slot = s;
                }
            }
            None => {
                self.inside.insert(id, s);
            }
        }
    }
}

/// State shared while turning commands into ops.
struct Importer<'a, 'w> {
    bytes: &'a [u8],
    vars: &'a TableIn<'a>,
    scopes: &'a TableIn<'a>,
    values: &'a TableIn<'a>,
    trailer: Option<&'a Trailer<'a>>,
    /// Offset → interned id, per table, for the offsets seen so far (a map, not a slot per
    /// byte of the table: that was four bytes per byte of `vars`, 23 MB for 276 000 names).
    vars_ids: Ids,
    values_ids: Ids,
    meta_ids: Ids,
    /// Scopes-table offset → decoded entry.
    scope_cache: HashMap<i32, (bool, StrId, Option<StrId>), FastState>,
    /// (tail, head) pairs announced by a TRIGGER_ARC: those arcs are forks.
    triggered: HashSet<(i32, i32), FastState>,
    warnings: &'w mut Vec<String>,
    /// Reads and writes imported so far (their ordinal in the trailer's position list).
    accesses: u32,
    /// Index of the next unused entry of the trailer's position list.
    next_pos: usize,
}

impl Importer<'_, '_> {
    /// Interns the string at offset `id` of a table once.
    fn cached(
        ids: &mut Ids,
        table: &TableIn,
        trace: &mut Trace,
        id: i32,
        at: usize,
    ) -> Result<StrId, ReadError> {
        if let Some(s) = ids.get(id) {
            return Ok(s);
        }
        let s = trace.strings.intern(&table.text(id, at)?);
        // `text` succeeded, so `id` is inside the table.
        ids.insert(id, s);
        Ok(s)
    }

    fn var(&mut self, trace: &mut Trace, id: i32, at: usize) -> Result<StrId, ReadError> {
        Self::cached(&mut self.vars_ids, self.vars, trace, id, at)
    }

    fn value(&mut self, trace: &mut Trace, id: i32, at: usize) -> Result<StrId, ReadError> {
        Self::cached(&mut self.values_ids, self.values, trace, id, at)
    }

    fn meta(&mut self, trace: &mut Trace, id: i32, at: usize) -> Result<StrId, ReadError> {
        match self.trailer {
            Some(t) => Self::cached(&mut self.meta_ids, &t.meta, trace, id, at),
            None => Ok(trace.strings.intern("")),
        }
    }

    /// The trailer's position of the access being imported (interned after its location and
    /// value, as the JSONL reader does), and counts it.
    fn position(&mut self, trace: &mut Trace) -> Result<Pos, ReadError> {
        let n = self.accesses;
        self.accesses = n.saturating_add(1);
        let Some(t) = self.trailer else {
            return Ok(Pos::NONE);
        };
        match t.positions.get(self.next_pos) {
            Some(&(ordinal, src, at)) if ordinal == n => {
                self.next_pos += 1;
                Ok(Pos::new(self.meta(trace, src, at + 4)?))
            }
            _ => Ok(Pos::NONE),
        }
    }

    /// Decodes a scopes-table entry: (is exception, label, src).
    fn scope(
        &mut self,
        trace: &mut Trace,
        id: i32,
        at: usize,
    ) -> Result<(bool, StrId, Option<StrId>), ReadError> {
        if let Some(&d) = self.scope_cache.get(&id) {
            return Ok(d);
        }
        let decoded = match self.trailer.and_then(|t| t.scopes.get(&id)) {
            Some(&(exception, label, src, entry_at)) => {
                let l = self.meta(trace, label, entry_at + 8)?;
                let s = if src >= 0 {
                    Some(self.meta(trace, src, entry_at + 12)?)
                } else {
                    None
                };
                // The entry must still name a real scope string.
                self.scopes.text(id, entry_at)?;
                (exception, l, s)
            }
            None => {
                let text = self.scopes.text(id, at)?;
                let (exception, rest) = match text.strip_prefix(EXCEPTION_PREFIX) {
                    Some(rest) => (true, rest),
                    None => (false, &*text),
                };
                let (l, p) = split_src(rest);
                let l = trace.strings.intern(l);
                let p = p.map(|p| trace.strings.intern(p));
                (exception, l, p)
            }
        };
        self.scope_cache.insert(id, decoded);
        Ok(decoded)
    }

    /// Appends one action's commands as ops; returns its first scope label (EventRacer keeps
    /// the finer kind of an action there).
    fn commands(&mut self, a: &RawAction, trace: &mut Trace) -> Result<Option<StrId>, ReadError> {
        let bytes = self.bytes;
        let cmd = |k: usize| {
            let at = a.cmds_at + k * 8;
            (at, word(bytes, at), word(bytes, at + 4))
        };
        let mut first_scope = None;
        let mut k = 0;
        while k < a.ncmds {
            let (at, kind, loc) = cmd(k);
            k += 1;
            match kind {
                ENTER_SCOPE => {
                    let (exception, label, src) = self.scope(trace, loc, at + 4)?;
                    let exit_follows = k < a.ncmds && cmd(k).1 == EXIT_SCOPE;
                    if exception && exit_follows {
                        trace.ops.push(Op::Exception {
                            message: label,
                            src,
                        });
                        k += 1;
                    } else {
                        let scope = if exception {
                            // Not our encoding after all: keep the text whole.
                            let t = self.scopes.text(loc, at + 4)?;
                            trace.strings.intern(split_src(&t).0)
                        } else {
                            label
                        };
                        first_scope.get_or_insert(scope);
                        trace.ops.push(Op::Enter { scope, src });
                    }
                }
                EXIT_SCOPE => trace.ops.push(Op::Exit),
                READ_MEMORY | WRITE_MEMORY => {
                    let loc = self.var(trace, loc, at + 4)?;
                    let mut value = Val::NONE;
                    if k < a.ncmds {
                        let (vat, vk, vloc) = cmd(k);
                        if vk == MEMORY_VALUE {
                            value = Val::new(self.value(trace, vloc, vat + 4)?);
                            k += 1;
                        }
                    }
                    let pos = self.position(trace)?;
                    trace.ops.push(if kind == READ_MEMORY {
                        Op::Read { loc, value, pos }
                    } else {
                        Op::Write { loc, value, pos }
                    });
                }
                TRIGGER_ARC => {
                    if loc >= 0 {
                        self.triggered.insert((a.id, loc));
                    }
                }
                MEMORY_VALUE => self.warnings.push(format!(
                    "MEMORY_VALUE at byte {at} follows no read or write; ignored"
                )),
                _ => {
                    return Err(ReadError::Er {
                        offset: at as u64,
                        message: format!("unknown command kind {kind} in action {}", a.id),
                    });
                }
            }
        }
        Ok(first_scope)
    }
}

/// `label @@ src` → (`label`, Some(`src`)), split at the last separator.
fn split_src(text: &str) -> (&str, Option<&str>) {
    match text.rfind(SRC_SEPARATOR) {
        Some(i) => (&text[..i], Some(&text[i + SRC_SEPARATOR.len()..])),
        None => (text, None),
    }
}
