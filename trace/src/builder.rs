//! Building a [`Trace`] from calls rather than from a file: used by tests, fixtures and the
//! synthetic generator, so every trace they make obeys the same invariants the readers check.

use crate::model::{
    Action, ActionId, ActionType, Arc, ArcKind, Control, Header, NodeDesc, Op, Pos, StrId, Trace,
};
use std::fmt;

/// An invariant a [`TraceBuilder`] call broke. The builder keeps the first one and reports it
/// from [`TraceBuilder::try_finish`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    /// Index of the offending builder call (0 for the first call), to find it in a long script.
    pub call: usize,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace builder call #{}: {}", self.call, self.message)
    }
}

impl std::error::Error for BuildError {}

/// Builds a trace action by action, interning strings as it goes.
///
/// Misuse (an operation outside an action, a backwards arc, an arc to an action that does not
/// exist) does not panic at the call: the first error is kept and returned by
/// [`try_finish`](Self::try_finish); [`finish`](Self::finish) panics with it, which is what
/// tests and generators want.
///
/// ```
/// use shepherd_trace::{ActionType, TraceBuilder};
/// let mut b = TraceBuilder::new();
/// let a = b.begin(ActionType::Unknown, "script", "doc/script:0");
/// b.write("Global.x", Some("1"));
/// b.end();
/// let t = b.begin(ActionType::Timer, "timer", "doc/timer:0");
/// b.read("Global.x", None);
/// b.end();
/// b.fork_delay(a, t, 10);
/// let trace = b.finish();
/// assert_eq!(trace.actions.len(), 2);
/// ```
#[derive(Debug, Default)]
pub struct TraceBuilder {
    trace: Trace,
    current: Option<ActionId>,
    calls: usize,
    error: Option<BuildError>,
}

impl TraceBuilder {
    /// An empty trace of the current format version.
    pub fn new() -> TraceBuilder {
        TraceBuilder {
            trace: Trace {
                header: Header {
                    version: crate::model::FORMAT_VERSION,
                    page: None,
                },
                ..Trace::default()
            },
            ..TraceBuilder::default()
        }
    }

    /// Sets the page URL recorded in the header.
    pub fn page(&mut self, url: &str) -> &mut Self {
        self.calls += 1;
        self.trace.header.page = Some(url.to_owned());
        self
    }

    /// Interns `s` without using it (to fix string numbering in tests).
    pub fn intern(&mut self, s: &str) -> StrId {
        self.trace.strings.intern(s)
    }

    /// Begins the next action and returns its id. An action still open is ended first, as the
    /// readers do for a trace whose `n` record was lost.
    pub fn begin(&mut self, ty: ActionType, kind: &str, stable: &str) -> ActionId {
        self.calls += 1;
        let id = self.trace.actions.len() as ActionId;
        let kind = self.trace.strings.intern(kind);
        let stable = self.trace.strings.intern(stable);
        let at = self.trace.ops.len() as u32;
        self.trace.actions.push(Action {
            id,
            ty,
            kind,
            stable,
            ops: at..at,
        });
        self.current = Some(id);
        id
    }

    /// Ends the current action.
    pub fn end(&mut self) -> &mut Self {
        self.calls += 1;
        if self.current.take().is_none() {
            self.fail("end() with no action open".into());
        }
        self
    }

    /// The action currently open, if any.
    pub fn current(&self) -> Option<ActionId> {
        self.current
    }

    /// Adds a fork arc (the tail caused the head) without delay.
    pub fn fork(&mut self, tail: ActionId, head: ActionId) -> &mut Self {
        self.arc(tail, head, ArcKind::Fork, None)
    }

    /// Adds a timer fork arc with its delay in milliseconds.
    pub fn fork_delay(&mut self, tail: ActionId, head: ActionId, delay_ms: u32) -> &mut Self {
        self.arc(tail, head, ArcKind::Fork, Some(delay_ms))
    }

    /// Adds a join arc (ordering without causation).
    pub fn join(&mut self, tail: ActionId, head: ActionId) -> &mut Self {
        self.arc(tail, head, ArcKind::Join, None)
    }

    /// Adds any arc. The head may begin later; it is checked at finish.
    pub fn arc(
        &mut self,
        tail: ActionId,
        head: ActionId,
        kind: ArcKind,
        delay_ms: Option<u32>,
    ) -> &mut Self {
        self.calls += 1;
        if tail >= head {
            self.fail(format!("arc {tail} -> {head}: the tail must be smaller"));
        } else {
            self.trace.arcs.push(Arc {
                tail,
                head,
                kind,
                delay_ms,
            });
        }
        self
    }

    /// The current action reads `loc` (value summary when known).
    pub fn read(&mut self, loc: &str, value: Option<&str>) -> &mut Self {
        self.read_at(loc, value, None)
    }

    /// The current action writes `loc` (value summary when known).
    pub fn write(&mut self, loc: &str, value: Option<&str>) -> &mut Self {
        self.write_at(loc, value, None)
    }

    /// A read at source position `pos` (`url:line:col`) when known.
    pub fn read_at(&mut self, loc: &str, value: Option<&str>, pos: Option<&str>) -> &mut Self {
        let (loc, value, pos) = self.access(loc, value, pos);
        self.op(Op::Read {
            loc,
            value: value.into(),
            pos,
        })
    }

    /// A write at source position `pos` (`url:line:col`) when known.
    pub fn write_at(&mut self, loc: &str, value: Option<&str>, pos: Option<&str>) -> &mut Self {
        let (loc, value, pos) = self.access(loc, value, pos);
        self.op(Op::Write {
            loc,
            value: value.into(),
            pos,
        })
    }

    /// Interns an access's strings in the order the JSONL writer defines them.
    fn access(
        &mut self,
        loc: &str,
        value: Option<&str>,
        pos: Option<&str>,
    ) -> (StrId, Option<StrId>, Pos) {
        let loc = self.trace.strings.intern(loc);
        let value = value.map(|v| self.trace.strings.intern(v));
        let pos = Pos::from(pos.map(|p| self.trace.strings.intern(p)));
        (loc, value, pos)
    }

    /// The current action enters scope `label` (source position `url:line:col` when known).
    pub fn enter(&mut self, label: &str, src: Option<&str>) -> &mut Self {
        let scope = self.trace.strings.intern(label);
        let src = src.map(|s| self.trace.strings.intern(s));
        self.op(Op::Enter { scope, src })
    }

    /// The current action leaves its innermost scope.
    pub fn exit(&mut self) -> &mut Self {
        self.op(Op::Exit)
    }

    /// An exception escaped the current action.
    pub fn exception(&mut self, message: &str, src: Option<&str>) -> &mut Self {
        let message = self.trace.strings.intern(message);
        let src = src.map(|s| self.trace.strings.intern(s));
        self.op(Op::Exception { message, src })
    }

    /// Describes DOM node `node` (`docs/trace-format.md`, "Node descriptions"): its tag, the
    /// selector that found it, its id and classes. A node is described at most once.
    pub fn node(
        &mut self,
        node: u32,
        tag: &str,
        path: Option<&str>,
        id: Option<&str>,
        classes: Option<&str>,
    ) -> &mut Self {
        self.calls += 1;
        if self.trace.nodes.iter().any(|d| d.node == node) {
            self.fail(format!("node {node} described twice"));
            return self;
        }
        let tag = self.trace.strings.intern(tag);
        let mut opt = |s: Option<&str>| s.map(|s| self.trace.strings.intern(s));
        let (path, id, classes) = (opt(path), opt(id), opt(classes));
        self.trace.nodes.push(NodeDesc {
            node,
            tag,
            path,
            id,
            classes,
        });
        self
    }

    /// Reports control `node` as found by a tool exercising the page, with the gestures it gets
    /// and those it got (comma-separated names; `docs/trace-format.md`, "Controls"). A later
    /// report of the same node replaces the earlier one, as the readers do.
    pub fn control(&mut self, node: u32, offered: &str, done: &str) -> &mut Self {
        self.calls += 1;
        let offered = self.trace.strings.intern(offered);
        let done = self.trace.strings.intern(done);
        let c = Control {
            node,
            offered,
            done,
        };
        match self.trace.controls.iter_mut().find(|x| x.node == node) {
            Some(x) => *x = c,
            None => self.trace.controls.push(c),
        }
        self
    }

    /// Appends an already interned operation to the current action.
    pub fn op(&mut self, op: Op) -> &mut Self {
        self.calls += 1;
        match self.current {
            Some(id) => {
                self.trace.ops.push(op);
                let end = self.trace.ops.len() as u32;
                if let Some(a) = self.trace.actions.get_mut(id as usize) {
                    a.ops.end = end;
                }
            }
            None => self.fail(format!("{op:?} outside an action")),
        }
        self
    }

    /// The first invariant broken so far.
    pub fn error(&self) -> Option<&BuildError> {
        self.error.as_ref()
    }

    /// The trace, or the first invariant that was broken.
    pub fn try_finish(mut self) -> Result<Trace, BuildError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let n = self.trace.actions.len() as ActionId;
        if let Some(a) = self.trace.arcs.iter().find(|a| a.head >= n) {
            return Err(BuildError {
                call: self.calls,
                message: format!(
                    "arc {} -> {}: action {} never began ({n} actions)",
                    a.tail, a.head, a.head
                ),
            });
        }
        Ok(self.trace)
    }

    /// The trace.
    ///
    /// # Panics
    /// When a call broke an invariant (see [`try_finish`](Self::try_finish)); the builder is
    /// for code that constructs traces, not for untrusted input.
    pub fn finish(self) -> Trace {
        match self.try_finish() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        }
    }

    fn fail(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(BuildError {
                call: self.calls - 1,
                message,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Val;

    #[test]
    fn builds_actions_ops_and_arcs() {
        let mut b = TraceBuilder::new();
        b.page("https://a.test/");
        let a = b.begin(ActionType::Unknown, "script", "s0");
        b.enter("script:inline #0", Some("https://a.test/:1:1"))
            .write("Global.x", Some("1"))
            .exit();
        b.end();
        let t = b.begin(ActionType::Timer, "timer", "s1");
        b.read("Global.x", None).exception("boom", None);
        b.end();
        b.fork_delay(a, t, 5);
        let trace = b.finish();
        assert_eq!(trace.header.page.as_deref(), Some("https://a.test/"));
        assert_eq!(trace.actions.len(), 2);
        assert_eq!(trace.actions[0].ops, 0..3);
        assert_eq!(trace.actions[1].ops, 3..5);
        assert_eq!(trace.strings.get(trace.actions[1].kind), "timer");
        let x = trace.strings.lookup("Global.x").unwrap();
        assert_eq!(
            trace.ops_of(1)[0],
            Op::Read {
                loc: x,
                value: Val::NONE,
                pos: Pos::NONE
            }
        );
        assert_eq!(
            trace.arcs,
            vec![Arc {
                tail: 0,
                head: 1,
                kind: ArcKind::Fork,
                delay_ms: Some(5)
            }]
        );
    }

    #[test]
    fn begin_ends_an_open_action() {
        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "k", "a");
        b.write("x", None);
        b.begin(ActionType::Unknown, "k", "b");
        b.read("x", None);
        let t = b.finish();
        assert_eq!(t.actions[0].ops, 0..1);
        assert_eq!(t.actions[1].ops, 1..2);
    }

    #[test]
    fn reports_broken_invariants() {
        let mut b = TraceBuilder::new();
        b.read("x", None);
        let e = b.try_finish().unwrap_err();
        assert_eq!(e.call, 0);
        assert!(e.message.contains("outside an action"), "{e}");

        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "k", "a");
        b.join(0, 0);
        assert!(b.try_finish().unwrap_err().message.contains("tail"));

        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "k", "a");
        b.fork(0, 3);
        assert!(b.try_finish().unwrap_err().message.contains("never began"));

        let mut b = TraceBuilder::new();
        b.end();
        assert!(b.try_finish().is_err());

        let mut b = TraceBuilder::new();
        b.node(4, "p", None, None, None);
        b.node(4, "div", None, None, None);
        let e = b.try_finish().unwrap_err();
        assert_eq!(e.call, 1);
        assert!(e.message.contains("node 4 described twice"), "{e}");
    }

    #[test]
    #[should_panic(expected = "outside an action")]
    fn finish_panics_on_misuse() {
        let mut b = TraceBuilder::new();
        b.exit();
        b.finish();
    }
}
