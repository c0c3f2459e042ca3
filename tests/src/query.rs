//! Questions tests ask of a recorded trace, with readable failure messages.

use anyhow::{Result, anyhow, bail};
use shepherd_races::report::{RaceReport, RaceView};
use shepherd_trace::{ActionId, ArcKind, Op, Trace};

/// A parsed trace plus lookups by kind, scope label, stable id and location.
pub struct TraceQuery {
    /// The trace as read by shepherd-trace.
    pub trace: Trace,
}

/// A DOM node as the trace describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Tag name (`input`, `#text`).
    pub tag: String,
    /// CSS selector, when it was in the document.
    pub path: Option<String>,
    /// `id` attribute.
    pub id: Option<String>,
    /// First classes, space-separated.
    pub classes: Option<String>,
}

/// One access of an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// `r` or `w`.
    pub write: bool,
    /// Location name.
    pub loc: String,
    /// Value summary, when logged.
    pub value: Option<String>,
    /// Source position `url:line:col` of the accessing code, when logged.
    pub pos: Option<String>,
}

impl TraceQuery {
    /// Wraps `trace`.
    pub fn new(trace: Trace) -> TraceQuery {
        TraceQuery { trace }
    }

    fn s(&self, id: u32) -> &str {
        self.trace.strings.get(id)
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.trace.actions.len()
    }

    /// True when the trace has no action.
    pub fn is_empty(&self) -> bool {
        self.trace.actions.is_empty()
    }

    /// The finer kind of `a` (`timer`, `event:click`, `script`, …).
    pub fn kind(&self, a: ActionId) -> &str {
        self.trace
            .actions
            .get(a as usize)
            .map(|x| self.s(x.kind))
            .unwrap_or("")
    }

    /// The stable id of `a`.
    pub fn stable(&self, a: ActionId) -> &str {
        self.trace
            .actions
            .get(a as usize)
            .map(|x| self.s(x.stable))
            .unwrap_or("")
    }

    /// EventRacer's type code of `a`.
    pub fn type_code(&self, a: ActionId) -> u8 {
        self.trace
            .actions
            .get(a as usize)
            .map(|x| x.ty as u8)
            .unwrap_or(0)
    }

    /// The label of the first scope `a` enters, if any.
    pub fn scope(&self, a: ActionId) -> Option<&str> {
        self.trace.ops_of(a).iter().find_map(|op| match op {
            Op::Enter { scope, .. } => Some(self.s(*scope)),
            _ => None,
        })
    }

    /// The source position of the first scope `a` enters, if it has one.
    pub fn scope_pos(&self, a: ActionId) -> Option<&str> {
        self.trace.ops_of(a).iter().find_map(|op| match op {
            Op::Enter { src, .. } => src.map(|p| self.s(p)),
            _ => None,
        })
    }

    /// Actions whose kind is `kind`, in order.
    pub fn of_kind(&self, kind: &str) -> Vec<ActionId> {
        self.trace
            .actions
            .iter()
            .filter(|a| self.s(a.kind) == kind)
            .map(|a| a.id)
            .collect()
    }

    /// Actions whose first scope label starts with `prefix`.
    pub fn with_scope(&self, prefix: &str) -> Vec<ActionId> {
        self.trace
            .actions
            .iter()
            .filter(|a| self.scope(a.id).is_some_and(|s| s.starts_with(prefix)))
            .map(|a| a.id)
            .collect()
    }

    /// The single action whose scope label starts with `prefix`.
    pub fn one_with_scope(&self, prefix: &str) -> Result<ActionId> {
        let v = self.with_scope(prefix);
        match v.as_slice() {
            [a] => Ok(*a),
            [] => bail!("no action with scope {prefix:?}\n{}", self.dump()),
            _ => bail!(
                "{} actions with scope {prefix:?}: {v:?}\n{}",
                v.len(),
                self.dump()
            ),
        }
    }

    /// The first action whose scope label starts with `prefix`.
    pub fn first_with_scope(&self, prefix: &str) -> Result<ActionId> {
        self.with_scope(prefix)
            .first()
            .copied()
            .ok_or_else(|| anyhow!("no action with scope {prefix:?}\n{}", self.dump()))
    }

    /// Reads and writes of `a`, in order.
    pub fn accesses(&self, a: ActionId) -> Vec<Access> {
        self.trace
            .ops_of(a)
            .iter()
            .filter_map(|op| match *op {
                Op::Read { loc, value, pos } => Some(Access {
                    write: false,
                    loc: self.s(loc).to_string(),
                    value: value.get().map(|v| self.s(v).to_string()),
                    pos: pos.get().map(|p| self.s(p).to_string()),
                }),
                Op::Write { loc, value, pos } => Some(Access {
                    write: true,
                    loc: self.s(loc).to_string(),
                    value: value.get().map(|v| self.s(v).to_string()),
                    pos: pos.get().map(|p| self.s(p).to_string()),
                }),
                _ => None,
            })
            .collect()
    }

    /// Whether `a` reads `loc` (exact name).
    pub fn reads(&self, a: ActionId, loc: &str) -> bool {
        self.accesses(a).iter().any(|x| !x.write && x.loc == loc)
    }

    /// The value summary `a` wrote to `loc`, if it wrote it.
    pub fn written(&self, a: ActionId, loc: &str) -> Option<Option<String>> {
        self.accesses(a)
            .into_iter()
            .find(|x| x.write && x.loc == loc)
            .map(|x| x.value)
    }

    /// Actions that access a location matching `pred`, with the access.
    pub fn accessing(&self, pred: impl Fn(&Access) -> bool) -> Vec<(ActionId, Access)> {
        let mut out = Vec::new();
        for a in &self.trace.actions {
            for x in self.accesses(a.id) {
                if pred(&x) {
                    out.push((a.id, x));
                }
            }
        }
        out
    }

    /// The description of DOM node `n` (`["d",…]` records), its strings resolved.
    pub fn node(&self, n: u32) -> Option<Node> {
        let d = self.trace.nodes.iter().find(|d| d.node == n)?;
        let o = |id: Option<u32>| id.map(|i| self.s(i).to_string());
        Some(Node {
            tag: self.s(d.tag).to_string(),
            path: o(d.path),
            id: o(d.id),
            classes: o(d.classes),
        })
    }

    /// The node whose listener list was written with a function named `name` (the value
    /// summary `Function[k]:name` of `addEventListener`), and that location.
    pub fn listener_node(&self, name: &str) -> Result<(String, Node)> {
        let suffix = format!(":{name}");
        let (_, x) = self
            .accessing(|x| x.write && x.value.as_deref().is_some_and(|v| v.ends_with(&suffix)))
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("no listener {name} registered\n{}", self.dump()))?;
        let n = x
            .loc
            .split_once('[')
            .and_then(|(_, r)| r.split_once(']'))
            .and_then(|(n, _)| n.parse().ok())
            .ok_or_else(|| anyhow!("{} names no node", x.loc))?;
        let node = self
            .node(n)
            .ok_or_else(|| anyhow!("node {n} ({}) not described\n{}", x.loc, self.dump()))?;
        Ok((x.loc, node))
    }

    /// Exception messages of `a`.
    pub fn exceptions(&self, a: ActionId) -> Vec<String> {
        self.trace
            .ops_of(a)
            .iter()
            .filter_map(|op| match op {
                Op::Exception { message, .. } => Some(self.s(*message).to_string()),
                _ => None,
            })
            .collect()
    }

    /// `(message, position)` of each exception logged in action `a`.
    pub fn exceptions_at(&self, a: ActionId) -> Vec<(String, Option<String>)> {
        self.trace
            .ops_of(a)
            .iter()
            .filter_map(|op| match op {
                Op::Exception { message, src } => Some((
                    self.s(*message).to_string(),
                    src.map(|p| self.s(p).to_string()),
                )),
                _ => None,
            })
            .collect()
    }

    /// Whether the trace has the arc `t → h` of this kind (`f` or `j`).
    pub fn has_arc(&self, t: ActionId, h: ActionId, kind: char) -> bool {
        let k = if kind == 'f' {
            ArcKind::Fork
        } else {
            ArcKind::Join
        };
        self.trace
            .arcs
            .iter()
            .any(|a| a.tail == t && a.head == h && a.kind == k)
    }

    /// Whether `t` happens before `h` through logged arcs.
    pub fn hb(&self, t: ActionId, h: ActionId) -> bool {
        if t >= h {
            return t == h;
        }
        let mut reach = vec![false; self.trace.actions.len()];
        reach[t as usize] = true;
        let mut arcs: Vec<_> = self.trace.arcs.iter().collect();
        arcs.sort_by_key(|a| a.tail);
        for a in arcs {
            if (a.tail as usize) < reach.len()
                && reach[a.tail as usize]
                && (a.head as usize) < reach.len()
            {
                reach[a.head as usize] = true;
            }
        }
        reach.get(h as usize).copied().unwrap_or(false)
    }

    /// The fork arc into `h`, if any: (tail, delay).
    pub fn forked_by(&self, h: ActionId) -> Option<(ActionId, Option<u32>)> {
        self.trace
            .arcs
            .iter()
            .find(|a| a.head == h && a.kind == ArcKind::Fork)
            .map(|a| (a.tail, a.delay_ms))
    }

    /// The race analysis of the trace (default options), every race included (covered ones
    /// too), as `shepherd races` reports it.
    pub fn report(&self) -> Result<RaceReport> {
        let an = shepherd_races::analyze(&self.trace, &shepherd_races::Options::default())?;
        Ok(RaceReport::new(&self.trace, &an, true))
    }

    /// The races reported on location `loc` (exact name), covered ones too.
    pub fn races_on(&self, loc: &str) -> Result<Vec<RaceView>> {
        Ok(self
            .report()?
            .races
            .into_iter()
            .filter(|r| r.location == loc)
            .collect())
    }

    /// The uncovered races reported on location `loc` (exact name).
    pub fn uncovered_on(&self, loc: &str) -> Result<Vec<RaceView>> {
        Ok(self
            .races_on(loc)?
            .into_iter()
            .filter(|r| !r.covered)
            .collect())
    }

    /// The races reported on locations whose name matches `pred`, as text for failure
    /// messages.
    pub fn races_text(&self, pred: impl Fn(&str) -> bool) -> String {
        match self.report() {
            Ok(rep) => rep
                .races
                .iter()
                .filter(|r| pred(&r.location))
                .map(|r| {
                    format!(
                        "{} {} {} #{} {:?} / #{} {:?} [{}] {}\n",
                        r.location,
                        r.kind,
                        if r.covered { "covered" } else { "uncovered" },
                        r.first.action,
                        r.first.source,
                        r.second.action,
                        r.second.source,
                        r.tags.join(","),
                        r.level
                    )
                })
                .collect(),
            Err(e) => format!("analysis failed: {e:#}"),
        }
    }

    /// A human-readable listing for failure messages.
    pub fn dump(&self) -> String {
        let mut s = String::new();
        for a in &self.trace.actions {
            s.push_str(&format!(
                "#{} type={} {} [{}]\n",
                a.id,
                a.ty as u8,
                self.s(a.kind),
                self.s(a.stable)
            ));
            for arc in self.trace.arcs.iter().filter(|x| x.head == a.id) {
                s.push_str(&format!(
                    "    <- {} {:?}{}\n",
                    arc.tail,
                    arc.kind,
                    arc.delay_ms.map(|d| format!(" {d}ms")).unwrap_or_default()
                ));
            }
            for op in self.trace.ops_of(a.id) {
                match *op {
                    Op::Read { loc, value, pos } => s.push_str(&format!(
                        "    r {}{}{}\n",
                        self.s(loc),
                        value
                            .get()
                            .map(|v| format!(" = {}", self.s(v)))
                            .unwrap_or_default(),
                        pos.get()
                            .map(|p| format!(" @ {}", self.s(p)))
                            .unwrap_or_default()
                    )),
                    Op::Write { loc, value, pos } => s.push_str(&format!(
                        "    w {}{}{}\n",
                        self.s(loc),
                        value
                            .get()
                            .map(|v| format!(" = {}", self.s(v)))
                            .unwrap_or_default(),
                        pos.get()
                            .map(|p| format!(" @ {}", self.s(p)))
                            .unwrap_or_default()
                    )),
                    Op::Enter { scope, .. } => s.push_str(&format!("    e {}\n", self.s(scope))),
                    Op::Exit => s.push_str("    x\n"),
                    Op::Exception { message, .. } => {
                        s.push_str(&format!("    ! {}\n", self.s(message)))
                    }
                }
            }
        }
        s
    }
}
