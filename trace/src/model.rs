//! In-memory trace: flat vectors so that a 100 000-action trace loads with a handful of
//! allocations. Ids are dense indices; strings are interned once per trace.

use std::collections::HashMap;
use std::ops::Range;

/// Version of the JSONL trace format this crate writes (`docs/trace-format.md`). Version 2
/// added the source position of reads and writes (`["r",L,V|null,P]`), version 3 the node
/// descriptions (`["d",N,T,P,I,C]`), version 4 the controls a tool exercised
/// (`["c",N,O,D]`), version 5 the late operations (`["R",A,I,L…]`, `["W",A,I,L…]`); readers
/// accept 1 to 5.
pub const FORMAT_VERSION: u32 = 5;

/// Index of an event action: dense, allocated when the action *begins*, so id order is
/// execution order. Every arc goes from a smaller to a larger id.
pub type ActionId = u32;

/// Index into [`Strings`].
pub type StrId = u32;

/// An optional source position (`url:line:col`, interned) of a read or write, in four bytes:
/// traces hold millions of accesses, and `Option<StrId>` would take eight.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pos(u32);

impl Pos {
    /// No position (uninstrumented callers, old traces).
    pub const NONE: Pos = Pos(u32::MAX);

    /// The position whose text is string `id`. `StrId::MAX` cannot be a position (no table
    /// reaches 2^32 strings) and reads as none.
    pub const fn new(id: StrId) -> Pos {
        Pos(id)
    }

    /// The position's string id, if any.
    #[inline]
    pub const fn get(self) -> Option<StrId> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }

    /// True when there is no position.
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == u32::MAX
    }
}

/// No position.
impl Default for Pos {
    fn default() -> Pos {
        Pos::NONE
    }
}

impl From<Option<StrId>> for Pos {
    fn from(id: Option<StrId>) -> Pos {
        id.map_or(Pos::NONE, Pos::new)
    }
}

impl std::fmt::Debug for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.get() {
            Some(id) => write!(f, "Pos({id})"),
            None => f.write_str("Pos::NONE"),
        }
    }
}

/// An optional value summary (interned) of a read or write, in four bytes like [`Pos`]: with
/// `Option<StrId>` an [`Op`] took 20 bytes instead of 16, and a long session's trace holds
/// over a million of them.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Val(u32);

impl Val {
    /// No value summary.
    pub const NONE: Val = Val(u32::MAX);

    /// The value summary whose text is string `id`. `StrId::MAX` cannot be one (no table
    /// reaches 2^32 strings) and reads as none.
    pub const fn new(id: StrId) -> Val {
        Val(id)
    }

    /// The summary's string id, if any.
    #[inline]
    pub const fn get(self) -> Option<StrId> {
        if self.0 == u32::MAX {
            None
        } else {
            Some(self.0)
        }
    }

    /// True when there is no value summary.
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == u32::MAX
    }
}

/// No value summary.
impl Default for Val {
    fn default() -> Val {
        Val::NONE
    }
}

impl From<Option<StrId>> for Val {
    fn from(id: Option<StrId>) -> Val {
        id.map_or(Val::NONE, Val::new)
    }
}

impl std::fmt::Debug for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.get() {
            Some(id) => write!(f, "Val({id})"),
            None => f.write_str("Val::NONE"),
        }
    }
}

/// EventRacer's coarse action types (the numeric values are the `ER_actionlog` codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum ActionType {
    /// Parsing, script execution and anything else (`_` in EventRacer's output).
    Unknown = 0,
    /// Timer and interval ticks, animation frames, idle callbacks.
    Timer = 1,
    /// User and UI events.
    UserInterface = 2,
    /// Network: XHR, fetch, resource load/error, WebSocket messages.
    Network = 3,
    /// Continuations: promise jobs resolved by host tasks, messages, observers.
    Continuation = 4,
}

impl ActionType {
    /// The type for an `ER_actionlog` code; unknown codes map to `Unknown`.
    pub fn from_code(code: i64) -> ActionType {
        match code {
            1 => ActionType::Timer,
            2 => ActionType::UserInterface,
            3 => ActionType::Network,
            4 => ActionType::Continuation,
            _ => ActionType::Unknown,
        }
    }
}

/// Why one action happens before another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArcKind {
    /// The tail caused the head (registered the timer, sent the request, inserted the script…).
    Fork,
    /// An ordering the browser guarantees without causation (parse chunk k before k+1, FIFO
    /// queues, `load` after the resources it waits for).
    Join,
}

/// A happens-before arc `tail → head` with `tail < head`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arc {
    /// The earlier action.
    pub tail: ActionId,
    /// The later action.
    pub head: ActionId,
    /// Fork or join.
    pub kind: ArcKind,
    /// Timer delay in milliseconds for timer forks (EventRacer's timed arcs); `None` otherwise.
    pub delay_ms: Option<u32>,
}

/// One operation inside an action, in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read of a shared location, with a summary of the value read when known and the source
    /// position (`url:line:col`) of the reading code when the instrumentation knows it.
    Read {
        /// Location name.
        loc: StrId,
        /// Value summary.
        value: Val,
        /// Source position of the access.
        pos: Pos,
    },
    /// Write of a shared location, with a summary of the value written when known and the
    /// source position of the writing code when known.
    Write {
        /// Location name.
        loc: StrId,
        /// Value summary.
        value: Val,
        /// Source position of the access.
        pos: Pos,
    },
    /// Enter a scope (function call, `fire:click @ …`, `script …`), with its source position
    /// (`url:line:col`) when known.
    Enter { scope: StrId, src: Option<StrId> },
    /// Leave the innermost scope.
    Exit,
    /// An exception escaped to the event loop (uncaught error or unhandled rejection).
    Exception { message: StrId, src: Option<StrId> },
}

/// One event action: an atomic turn of the page's event loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// Dense id (execution order).
    pub id: ActionId,
    /// Coarse type.
    pub ty: ActionType,
    /// Finer kind, e.g. `script`, `parse`, `event:click`, `timer`, `fetch` (interned; read it
    /// as an [`ActionKind`](crate::kind::ActionKind) with [`Trace::kind_of`]).
    pub kind: StrId,
    /// Identity that survives re-execution of the same prefix (interned), e.g.
    /// `doc/script:2:https://a.test/app.js`.
    pub stable: StrId,
    /// This action's operations: a range into [`Trace::ops`].
    pub ops: Range<u32>,
}

/// Interned strings of one trace: location names, scope labels, values, kinds, stable ids.
///
/// Each text is stored once, all of them end to end in one buffer (a trace of a long session
/// holds a few hundred thousand short names: one allocation and a `String` each took three
/// times the bytes of the texts); the index maps half of a seeded 64-bit hash of the text to
/// its id, so interning costs one hash of the bytes and a copy of a new text. Two texts with
/// the same hash are still told apart.
#[derive(Clone, Debug, Default)]
pub struct Strings {
    /// Every text, in id order.
    bytes: String,
    /// Where each text ends in `bytes` (it starts where the previous one ends).
    ends: Vec<usize>,
    /// The low half of a text's hash → the first id with that half (eight bytes a bucket,
    /// not sixteen: texts that share the half are told apart by `collisions`).
    by_hash: HashMap<u32, StrId, crate::hash::PassThrough>,
    /// Later texts whose hash is already taken by a different text (practically never).
    collisions: HashMap<String, StrId>,
    /// `by_hash` and `collisions` were freed ([`drop_index`](Self::drop_index)).
    unindexed: bool,
    state: crate::hash::FastState,
}

/// Text `id` of a [`Strings`]' buffer and ends.
fn text_of<'a>(bytes: &'a str, ends: &[usize], id: StrId) -> Option<&'a str> {
    let i = id as usize;
    let end = *ends.get(i)?;
    let start = match i.checked_sub(1) {
        Some(p) => ends[p],
        None => 0,
    };
    bytes.get(start..end)
}

/// Strings are equal when they hold the same texts under the same ids.
impl PartialEq for Strings {
    fn eq(&self, other: &Self) -> bool {
        self.ends == other.ends && self.bytes == other.bytes
    }
}

impl Eq for Strings {}

impl Strings {
    /// Interns `s`, returning its id (the same id for the same text).
    pub fn intern(&mut self, s: &str) -> StrId {
        self.reindex();
        let h = self.hash(s);
        match self.find(s, h) {
            Some(id) => id,
            None => self.insert_new(s, h),
        }
    }

    /// Interns an owned string (the readers' path; the text is copied into the table when new).
    pub fn intern_owned(&mut self, s: String) -> StrId {
        self.intern(&s)
    }

    /// Interns `s` whose hash under [`hash_state`](Self::hash_state) is `h`, computed
    /// elsewhere (the parallel reader hashes on the thread that parsed the text).
    pub(crate) fn intern_owned_hashed(&mut self, s: String, h: u64) -> StrId {
        self.reindex();
        match self.find(&s, h) {
            Some(id) => id,
            None => self.insert_new(&s, h),
        }
    }

    /// The hasher of this table's index.
    pub(crate) fn hash_state(&self) -> &crate::hash::FastState {
        &self.state
    }

    /// Makes room for `additional` more strings of `bytes` bytes in all if the allocator
    /// grants it (the readers reserve from the input's size, which must not abort the
    /// process when huge).
    pub(crate) fn try_reserve(&mut self, additional: usize, bytes: usize) {
        let _ = self.ends.try_reserve(additional);
        let _ = self.by_hash.try_reserve(additional);
        let _ = self.bytes.try_reserve(bytes);
    }

    fn hash(&self, s: &str) -> u64 {
        use std::hash::BuildHasher;
        self.state.hash_one(s)
    }

    /// Frees what only interning needs (the index by hash), keeping every text and id: for
    /// a trace that takes no new strings, such as a loaded trace being analysed (on a long
    /// session's trace the index is a fifth of the strings' memory). Interning rebuilds it
    /// first; [`lookup`](Self::lookup) without it compares every text.
    pub fn drop_index(&mut self) {
        self.by_hash = HashMap::default();
        self.collisions = HashMap::new();
        self.unindexed = true;
    }

    /// Rebuilds the index [`drop_index`](Self::drop_index) freed, if it did.
    fn reindex(&mut self) {
        if !self.unindexed {
            return;
        }
        self.unindexed = false;
        let Strings {
            bytes,
            ends,
            by_hash,
            collisions,
            state,
            ..
        } = self;
        let _ = by_hash.try_reserve(ends.len());
        for id in 0..ends.len() as StrId {
            let text = text_of(bytes, ends, id).unwrap_or("");
            let h = std::hash::BuildHasher::hash_one(&*state, text) as u32;
            if let std::collections::hash_map::Entry::Vacant(e) = by_hash.entry(h) {
                e.insert(id);
            } else {
                // Ids come in order, so the first text with this hash keeps the entry, as
                // when it was interned.
                collisions.insert(text.to_owned(), id);
            }
        }
    }

    fn find(&self, s: &str, h: u64) -> Option<StrId> {
        if self.unindexed {
            return (0..self.ends.len() as StrId).find(|&id| self.text(id) == Some(s));
        }
        match self.by_hash.get(&(h as u32)) {
            Some(&id) if self.text(id) == Some(s) => Some(id),
            Some(_) => self.collisions.get(s).copied(),
            None => None,
        }
    }

    fn insert_new(&mut self, s: &str, h: u64) -> StrId {
        let id = self.ends.len() as StrId;
        match self.by_hash.entry(h as u32) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(id);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collisions.insert(s.to_owned(), id);
            }
        }
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len());
        id
    }

    #[cfg(test)]
    fn intern_with_hash(&mut self, s: &str, h: u64) -> StrId {
        match self.find(s, h) {
            Some(id) => id,
            None => self.insert_new(s, h),
        }
    }

    /// The text of `id`, if this table produced it.
    fn text(&self, id: StrId) -> Option<&str> {
        text_of(&self.bytes, &self.ends, id)
    }

    /// The text of `id`, or `""` for an id this table never produced.
    pub fn get(&self, id: StrId) -> &str {
        self.text(id).unwrap_or("")
    }

    /// The id of `s` if it was interned.
    pub fn lookup(&self, s: &str) -> Option<StrId> {
        self.find(s, self.hash(s))
    }

    /// Number of strings.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when no string was interned.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// How the runtime described DOM node number `node` (the `N` of `DOMNode[N]`, `BUTTON[N]`,
/// `NodeTree:N`) once per trace, so reports can name it as a developer finds it
/// (`input#coupon`, `#todo-list > li:nth-child(1) > input.toggle`) rather than by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeDesc {
    /// The node's object number.
    pub node: u32,
    /// Lowercase tag name (`input`), or `#text`, `#comment`, `#document`,
    /// `#document-fragment` for other nodes.
    pub tag: StrId,
    /// A CSS selector that found the node when it was described (bounded, so not always
    /// unique: the number keeps nodes apart); `None` when it was not in the document.
    pub path: Option<StrId>,
    /// The `id` attribute, when non-empty (cut to a bounded length).
    pub id: Option<StrId>,
    /// The first few classes, space-separated, when any.
    pub classes: Option<StrId>,
}

/// A control a tool exercising the page found in it (visible and enabled at some point), with
/// the gestures it gets and the gestures it got (`["c",N,O,D]`, trace format 4): what the
/// recording exercised, so reports can say what was left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Control {
    /// The control's node number (as in `DOMNode[N]`; described by a [`NodeDesc`]).
    pub node: u32,
    /// The gestures it gets, comma-separated names (`click,key-activate`).
    pub offered: StrId,
    /// The gestures dispatched on it, comma-separated names; empty when none.
    pub done: StrId,
}

/// Metadata from the trace header.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// Format version the trace was written with.
    pub version: u32,
    /// URL of the top-level document, when known.
    pub page: Option<String>,
}

/// A whole trace. Invariants (checked by the readers): action ids are `0..actions.len()` in
/// order; every arc has `tail < head < actions.len()`; op ranges are disjoint and ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// Header metadata.
    pub header: Header,
    /// Interned strings.
    pub strings: Strings,
    /// Actions, indexed by id.
    pub actions: Vec<Action>,
    /// Happens-before arcs as logged (derived arcs are the analysis' business).
    pub arcs: Vec<Arc>,
    /// All operations, grouped by action (see [`Action::ops`]).
    pub ops: Vec<Op>,
    /// DOM node descriptions, at most one per node, in the order they were written (empty
    /// for traces before version 3 and for `ER_actionlog` files without our trailer).
    pub nodes: Vec<NodeDesc>,
    /// Controls an exercising tool reported, at most one per node (the last report of each),
    /// in the order of their first report; empty when no tool did (before version 4, and for
    /// `ER_actionlog` files without our trailer).
    pub controls: Vec<Control>,
}

impl Op {
    /// The source position of a read or write (`None` for other ops or when unknown).
    pub fn pos(&self) -> Option<StrId> {
        match *self {
            Op::Read { pos, .. } | Op::Write { pos, .. } => pos.get(),
            _ => None,
        }
    }
}

impl Trace {
    /// The kind of `action`, read from its interned `kind` string.
    pub fn kind_of(&self, action: &Action) -> crate::kind::ActionKind<'_> {
        crate::kind::ActionKind::parse(self.strings.get(action.kind))
    }

    /// The operations of `action`.
    pub fn ops_of(&self, action: ActionId) -> &[Op] {
        match self.actions.get(action as usize) {
            Some(a) => &self.ops[a.ops.start as usize..a.ops.end as usize],
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_by_text() {
        let mut s = Strings::default();
        let a = s.intern("a");
        let b = s.intern_owned("b".to_owned());
        assert_eq!((a, b), (0, 1));
        assert_eq!(s.intern("a"), 0);
        assert_eq!(s.intern_owned("b".to_owned()), 1);
        assert_eq!(s.lookup("b"), Some(1));
        assert_eq!(s.lookup("c"), None);
        assert_eq!(s.get(1), "b");
        assert_eq!(s.get(9), "");
        // Equality ignores the per-table hash seed.
        let mut t = Strings::default();
        t.intern("a");
        t.intern("b");
        assert_eq!(s, t);
        t.intern("c");
        assert_ne!(s, t);
    }

    #[test]
    fn positions_are_small_and_optional() {
        assert_eq!(std::mem::size_of::<Pos>(), 4);
        assert_eq!(Pos::NONE.get(), None);
        assert_eq!(Pos::new(7).get(), Some(7));
        assert_eq!(Pos::from(Some(3)), Pos::new(3));
        assert!(Pos::from(None).is_none());
        assert_eq!(Pos::default(), Pos::NONE);
        let op = Op::Read {
            loc: 1,
            value: Val::NONE,
            pos: Pos::new(2),
        };
        assert_eq!(op.pos(), Some(2));
        assert_eq!(Op::Exit.pos(), None);
    }

    #[test]
    fn values_are_small_and_optional() {
        assert_eq!(std::mem::size_of::<Val>(), 4);
        assert_eq!(std::mem::size_of::<Op>(), 16);
        assert_eq!(Val::NONE.get(), None);
        assert_eq!(Val::new(7).get(), Some(7));
        assert_eq!(Val::from(Some(3)), Val::new(3));
        assert!(Val::from(None).is_none());
        assert_eq!(Val::default(), Val::NONE);
    }

    #[test]
    fn a_table_without_its_index_keeps_its_texts_and_ids() {
        let mut s = Strings::default();
        for t in ["a", "bb", "", "a\0b"] {
            s.intern(t);
        }
        let whole = s.clone();
        s.drop_index();
        assert_eq!(s, whole);
        assert_eq!(
            (s.get(0), s.get(1), s.get(2), s.get(3)),
            ("a", "bb", "", "a\0b")
        );
        assert_eq!((s.lookup("bb"), s.lookup("c")), (Some(1), None));
        // Interning rebuilds the index: old texts keep their ids, new ones come after.
        assert_eq!(s.intern("bb"), 1);
        assert_eq!(s.intern_owned("c".to_owned()), 4);
        assert_eq!((s.lookup(""), s.lookup("c")), (Some(2), Some(4)));
        assert_eq!(s.len(), 5);
    }

    #[test]
    fn hash_collisions_keep_texts_apart() {
        let mut s = Strings::default();
        assert_eq!(s.intern_with_hash("x", 7), 0);
        assert_eq!(s.intern_with_hash("y", 7), 1);
        assert_eq!(s.intern_with_hash("z", 7), 2);
        assert_eq!(s.intern_with_hash("y", 7), 1);
        assert_eq!(s.intern_with_hash("x", 7), 0);
        assert_eq!(s.find("z", 7), Some(2));
        assert_eq!(s.find("w", 7), None);
        // The index keys on the hash's low half: a hash differing only above it collides.
        assert_eq!(s.intern_with_hash("v", 7 | 1 << 40), 3);
        assert_eq!(s.intern_with_hash("v", 7 | 1 << 40), 3);
        assert_eq!(s.intern_with_hash("x", 7), 0);
        assert_eq!(s.len(), 4);
        assert_eq!((s.get(0), s.get(3), s.get(4)), ("x", "v", ""));
    }
}
