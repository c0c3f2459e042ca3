//! What the simulation reads from a trace: each action as the policy language sees it (kind,
//! DOM event type, target, URL, creator, delay), the forks each action makes and the
//! DOMContentLoaded and load landmarks ([`TraceFacts`]); with the happens-before graph, the
//! [`Base`] every policy's simulation over the trace shares.

use super::csr::Csr;
use crate::kinds::Loading;
use shepherd_trace::{ActionId, ActionKind, ActionType, ArcKind, FastState, Op as TOp, Trace};
use std::collections::HashMap;

/// What every policy's simulation reads from the trace alone: the actions as the policy
/// language sees them, the forks and the landmarks. It needs no happens-before graph, so a
/// caller can build it while the race analysis runs ([`shipped_orderings_deferred`](super::shipped_orderings_deferred)).
#[derive(Debug)]
pub struct TraceFacts<'t> {
    pub(super) evs: Evs<'t>,
    pub(super) forks: Csr,
    pub(super) dcl: Option<u32>,
    pub(super) load: Option<u32>,
    pub(super) page: String,
}

impl<'t> TraceFacts<'t> {
    /// Reads `trace`.
    pub fn new(trace: &'t Trace) -> TraceFacts<'t> {
        let evs = describe(trace);
        let forks = fork_lists(trace, &evs);
        let (dcl, load) = landmarks(&evs);
        TraceFacts {
            evs,
            forks,
            dcl,
            load,
            page: trace.header.page.clone().unwrap_or_default(),
        }
    }
}

/// What every policy's simulation reads from one trace: its [`TraceFacts`] and the
/// happens-before graph. Worked out once for all the policies run over the trace.
#[derive(Debug)]
pub struct Base<'t> {
    pub(super) facts: TraceFacts<'t>,
    pub(super) succ: Csr,
    pub(super) pred: Csr,
}

impl<'t> Base<'t> {
    /// Reads `trace`; `hb` are the happens-before arcs (tail, head) the race analysis used.
    pub fn new(trace: &'t Trace, hb: &[(u32, u32)]) -> Base<'t> {
        Base::with_facts(TraceFacts::new(trace), hb)
    }

    /// [`Base::new`] from facts read before.
    pub fn with_facts(facts: TraceFacts<'t>, hb: &[(u32, u32)]) -> Base<'t> {
        let n = facts.evs.len();
        let arcs = || {
            hb.iter()
                .copied()
                .filter(|&(t, h)| (t as usize) < n && (h as usize) < n && t < h)
        };
        let succ = Csr::new(n, arcs());
        let pred = Csr::new(n, arcs().map(|(t, h)| (h, t)));
        Base { facts, succ, pred }
    }
}

/// What the simulation knows about one action, as predicates read it ([`Evs::get`]).
/// Its strings borrow the trace's.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ev<'t> {
    /// DOM event type for `event:<type>` actions.
    pub(super) dom_type: Option<&'t str>,
    pub(super) kind: &'t str,
    pub(super) user: bool,
    /// Target label class (`BUTTON`, `XMLHttpRequest`, `Window`) and the target's `#id`.
    pub(super) target: Option<&'t str>,
    pub(super) target_id: Option<&'t str>,
    pub(super) url: Option<&'t str>,
    /// XHR events at readyState 4 (the response), per the events that follow.
    pub(super) xhr_done: bool,
    pub(super) creator: Option<ActionId>,
    pub(super) delay: Option<u32>,
    /// How a script action's script loaded (from its label).
    pub(super) loading: Option<Loading>,
    /// An inline script's execution (`script:inline …`).
    pub(super) inline: bool,
    /// The last action of the event this action begins: an XHR response's `loadend` for
    /// the response's first action (its events at readyState 4 are one event to a policy,
    /// and the runtime lets `arrived(u)` hold only once all of them ran), else the action
    /// itself.
    pub(super) end: ActionId,
}

/// No name ([`Names`]).
const NO_NAME: u32 = u32::MAX;

/// The texts predicates compare actions by (kinds, event types, target labels and ids, URLs),
/// each stored once: a page has a hundred thousand actions and a few hundred such texts.
#[derive(Debug, Default)]
struct Names<'t> {
    texts: Vec<&'t str>,
    ids: HashMap<&'t str, u32, FastState>,
}

impl<'t> Names<'t> {
    fn id(&mut self, s: Option<&'t str>) -> u32 {
        let Some(s) = s else { return NO_NAME };
        let texts = &mut self.texts;
        *self.ids.entry(s).or_insert_with(|| {
            texts.push(s);
            (texts.len() - 1) as u32
        })
    }

    fn get(&self, id: u32) -> Option<&'t str> {
        self.texts.get(id as usize).copied()
    }
}

/// An [`Ev`] as stored, its texts by [`Names`] id.
#[derive(Clone, Copy, Debug)]
struct Packed {
    dom_type: u32,
    kind: u32,
    target: u32,
    target_id: u32,
    url: u32,
    creator: Option<ActionId>,
    delay: Option<u32>,
    user: bool,
    xhr_done: bool,
    loading: Option<Loading>,
    inline: bool,
    end: ActionId,
}

/// Every action's [`Ev`], packed.
#[derive(Debug, Default)]
pub(super) struct Evs<'t> {
    list: Vec<Packed>,
    names: Names<'t>,
    /// The page's URL: relative request URLs (as the page wrote them) are resolved against
    /// it when a `url` filter asks, as the runtime resolves them.
    base: Option<&'t str>,
}

impl<'t> Evs<'t> {
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// The page's URL, if the trace names it.
    pub(super) fn base(&self) -> Option<&'t str> {
        self.base
    }

    fn push(&mut self, e: &Ev<'t>) {
        let n = &mut self.names;
        let p = Packed {
            dom_type: n.id(e.dom_type),
            kind: n.id(Some(e.kind)),
            target: n.id(e.target),
            target_id: n.id(e.target_id),
            url: n.id(e.url),
            creator: e.creator,
            delay: e.delay,
            user: e.user,
            xhr_done: e.xhr_done,
            loading: e.loading,
            inline: e.inline,
            end: e.end,
        };
        self.list.push(p);
    }

    pub(super) fn get(&self, v: ActionId) -> Option<Ev<'t>> {
        let p = self.list.get(v as usize)?;
        let n = &self.names;
        Some(Ev {
            dom_type: n.get(p.dom_type),
            kind: n.get(p.kind).unwrap_or(""),
            user: p.user,
            target: n.get(p.target),
            target_id: n.get(p.target_id),
            url: n.get(p.url),
            xhr_done: p.xhr_done,
            creator: p.creator,
            delay: p.delay,
            loading: p.loading,
            inline: p.inline,
            end: p.end,
        })
    }

    /// The last action of the event `v` begins ([`Ev::end`]).
    pub(super) fn end(&self, v: ActionId) -> ActionId {
        self.list.get(v as usize).map_or(v, |p| p.end)
    }
}

/// Script actions get their element as target (tag and `#id`, from the node description of
/// the `NodeTree:<node>` their execution reads first), and element events without an id in
/// their stable id the id of their target's description: `on "#id"` is then judged for them.
fn element_targets<'t>(trace: &'t Trace, evs: &mut Evs<'t>) {
    if trace.nodes.is_empty() {
        return;
    }
    let s = &trace.strings;
    let nodes: HashMap<u32, &shepherd_trace::NodeDesc, FastState> =
        trace.nodes.iter().map(|d| (d.node, d)).collect();
    for (i, a) in trace.actions.iter().enumerate() {
        let Some(e) = evs.get(i as u32) else { continue };
        let is_script = ActionKind::parse(s.get(a.kind)) == ActionKind::Script;
        let node = if is_script {
            trace.ops_of(a.id).iter().take(16).find_map(|op| match op {
                TOp::Read { loc, .. } => s.get(*loc).strip_prefix("NodeTree:")?.parse::<u32>().ok(),
                _ => None,
            })
        } else if e.dom_type.is_some() && e.target_id.is_none() {
            trace.ops_of(a.id).iter().find_map(|op| match op {
                TOp::Enter { scope, .. } => {
                    let label = s.get(*scope).split(" @ ").nth(1)?;
                    label
                        .split_once('[')?
                        .1
                        .strip_suffix(']')?
                        .parse::<u32>()
                        .ok()
                }
                _ => None,
            })
        } else {
            None
        };
        let Some(d) = node.and_then(|n| nodes.get(&n)) else {
            continue;
        };
        let tag = is_script.then(|| s.get(d.tag));
        let id = d.id.map(|x| s.get(x));
        if let Some(p) = evs.list.get_mut(i) {
            if let Some(t) = tag {
                p.target = evs.names.id(Some(t));
            }
            if id.is_some() {
                p.target_id = evs.names.id(id);
            }
        }
    }
}

/// The DOMContentLoaded action and the window's load action (`parsed`, `loaded`).
pub(super) fn landmarks(evs: &Evs) -> (Option<u32>, Option<u32>) {
    let find = |f: &dyn Fn(&Ev) -> bool| {
        (0..evs.len() as u32).find(|&v| evs.get(v).is_some_and(|e| f(&e)))
    };
    (
        find(&|e| e.dom_type == Some("DOMContentLoaded")),
        find(&|e| e.dom_type == Some("load") && e.target == Some("Window")),
    )
}

/// The fork operations each action makes, each action's in the order it made them where the
/// trace tells (an XHR's fork is the fork of its response; its other events are not forks).
/// The parser's scripts are forks of the parse chunk that inserted them: the async, defer
/// and module ones by their fork arc, the parser-blocking and inline ones by the join from
/// the parse chunk right before them (the runtime sees the parser insert each one).
pub(super) fn fork_lists(trace: &Trace, evs: &Evs) -> Csr {
    let n = evs.len();
    let is_parse = |a: u32| {
        trace
            .actions
            .get(a as usize)
            .is_some_and(|x| ActionKind::parse(trace.strings.get(x.kind)) == ActionKind::Parse)
    };
    let forks: Vec<(u32, u32)> = trace
        .arcs
        .iter()
        .filter_map(|a| {
            if (a.tail as usize) >= n {
                return None;
            }
            let e = evs.get(a.head)?;
            match a.kind {
                ArcKind::Fork => {
                    if e.target == Some("XMLHttpRequest") && !e.xhr_done {
                        return None;
                    }
                    Some((a.tail, a.head))
                }
                ArcKind::Join => (e.loading == Some(Loading::Blocking) && is_parse(a.tail))
                    .then_some((a.tail, a.head)),
            }
        })
        .collect();
    let mut csr = Csr::new(n, forks.iter().copied());
    let mut counts = vec![0u32; n];
    for &(t, _) in &forks {
        counts[t as usize] += 1;
    }
    for (tail, _) in counts.iter().enumerate().filter(|(_, c)| **c > 1) {
        let tail = tail as u32;
        csr.reorder(tail, |list| creation_order(trace, tail, list));
    }
    csr
}

/// Puts the forks of `tail` whose creation the trace logs in the order they were created:
/// an element's load or script reads `NodeTree:<node>` and a timer's tick `Timer:<id>`, which
/// the creating action wrote when it made the element or the timer. The others keep their
/// places (the order their actions began).
fn creation_order(trace: &Trace, tail: u32, list: &mut [u32]) {
    let s = &trace.strings;
    let created = |head: u32| -> Option<u32> {
        trace.ops_of(head).iter().take(16).find_map(|op| match op {
            TOp::Read { loc, .. } => {
                let text = s.get(*loc);
                (text.starts_with("NodeTree:") || text.starts_with("Timer:")).then_some(*loc)
            }
            _ => None,
        })
    };
    let keys: Vec<Option<u32>> = list.iter().map(|&h| created(h)).collect();
    if keys.iter().filter(|k| k.is_some()).count() < 2 {
        return;
    }
    let mut written: HashMap<u32, u32, FastState> = HashMap::default();
    for (i, op) in trace.ops_of(tail).iter().enumerate() {
        if let TOp::Write { loc, .. } = op {
            written.entry(*loc).or_insert(i as u32);
        }
    }
    let mut keyed: Vec<(u32, u32)> = list
        .iter()
        .zip(&keys)
        .filter_map(|(&h, k)| k.and_then(|l| written.get(&l)).map(|&at| (at, h)))
        .collect();
    keyed.sort_unstable();
    let mut next = keyed.into_iter().map(|(_, h)| h);
    for (slot, k) in list.iter_mut().zip(&keys) {
        if k.and_then(|l| written.get(&l)).is_some()
            && let Some(h) = next.next()
        {
            *slot = h;
        }
    }
}

/// Reads what the policy language can ask about each action from its kind, stable id, first
/// scope label and the arcs into it.
pub(super) fn describe(trace: &Trace) -> Evs<'_> {
    let s = &trace.strings;
    let mut evs = Evs {
        list: Vec::with_capacity(trace.actions.len()),
        names: Names::default(),
        base: trace.header.page.as_deref(),
    };
    for e in trace.actions.iter().map(|a| {
        let kind = s.get(a.kind);
        let stable = s.get(a.stable);
        let label = trace.ops_of(a.id).iter().find_map(|op| match op {
            TOp::Enter { scope, .. } => Some(s.get(*scope)),
            _ => None,
        });
        let mut e = Ev {
            user: a.ty == ActionType::UserInterface,
            end: a.id,
            ..Ev::default()
        };
        let parsed = ActionKind::parse(kind);
        if let ActionKind::Event(t) = parsed {
            e.dom_type = Some(t);
            if let Some(l) = label.and_then(|l| l.split(" @ ").nth(1)) {
                e.target = Some(l.split('[').next().unwrap_or(""));
            }
        }
        let last = stable.rsplit('/').next().unwrap_or("");
        // An event's stable id names its target's `#id` (a script's names its URL or its
        // number among the parser's scripts, no element id).
        if e.dom_type.is_some()
            && let Some(at) = last.split_once('@').map(|(_, r)| r)
        {
            let path = at.rsplit_once('#').map_or(at, |(p, _)| p);
            if let Some(id) = path.strip_prefix('#') {
                e.target_id = Some(id.split('>').next().unwrap_or(id));
            }
        }
        match parsed {
            ActionKind::Script => {
                // `script:<async|defer|inserted|module|inline|external> <url-or-#n>`
                if let Some(l) = label.and_then(|l| l.strip_prefix("script:"))
                    && let Some((how, what)) = l.split_once(' ')
                {
                    e.loading = Loading::of_label(how);
                    e.inline = how == "inline";
                    if !e.inline && !what.starts_with('#') {
                        // A trace recorded under a repair policy may show a hold marker
                        // (the last query parameter): the URL is the page's without it.
                        e.url = Some(match what.find("__shepherd_hold=") {
                            Some(at) if at > 0 => &what[..at - 1],
                            _ => what,
                        });
                    }
                }
            }
            ActionKind::Fetch => e.url = label.and_then(|l| l.strip_prefix("fetch ")),
            _ => {}
        }
        if e.target == Some("XMLHttpRequest")
            && let Some(seg) = stable.split('/').find(|x| x.starts_with("xhr@"))
        {
            e.url = seg
                .strip_prefix("xhr@")
                .map(|r| r.rsplit_once('#').map_or(r, |(u, _)| u));
        }
        e.kind = kind;
        e
    }) {
        evs.push(&e);
    }
    for a in &trace.arcs {
        if a.kind == ArcKind::Fork
            && let Some(e) = evs.list.get_mut(a.head as usize)
        {
            e.creator = Some(a.tail);
            if a.delay_ms.is_some() {
                e.delay = a.delay_ms;
            }
        }
    }
    fn target<'t>(evs: &Evs<'t>, i: usize) -> Option<&'t str> {
        evs.get(i as u32).and_then(|e| e.target)
    }
    fn dom_type<'t>(evs: &Evs<'t>, i: usize) -> Option<&'t str> {
        evs.get(i as u32).and_then(|e| e.dom_type)
    }
    // The response of each XHR: its first load/error/abort/timeout event, and the
    // readystatechange right before it (readyState 4 fires first).
    let mut by_xhr: HashMap<&str, Vec<usize>> = HashMap::new();
    element_targets(trace, &mut evs);
    for (i, a) in trace.actions.iter().enumerate() {
        if target(&evs, i) == Some("XMLHttpRequest")
            && let Some(label) = trace.ops_of(a.id).iter().find_map(|op| match op {
                TOp::Enter { scope, .. } => Some(s.get(*scope)),
                _ => None,
            })
            && let Some(t) = label.split(" @ ").nth(1)
        {
            by_xhr.entry(t).or_default().push(i);
        }
    }
    for list in by_xhr.values() {
        if let Some(k) = list.iter().position(|&i| {
            matches!(
                dom_type(&evs, i),
                Some("load" | "error" | "abort" | "timeout")
            )
        }) {
            let head = if k > 0 && dom_type(&evs, list[k - 1]) == Some("readystatechange") {
                k - 1
            } else {
                k
            };
            // The response's events run in one task: its end is the `loadend` after them
            // (the terminal event when the runtime listened to no `loadend`).
            let end = list[k..]
                .iter()
                .copied()
                .find(|&i| dom_type(&evs, i) == Some("loadend"))
                .unwrap_or(list[k]);
            if let Some(e) = evs.list.get_mut(list[head]) {
                e.xhr_done = true;
                e.end = end as u32;
            }
        }
    }
    evs
}
