//! Filters (EventRacer §5.3–5.4, plus two commutativity refinements from R4) as tags per
//! location. Nothing is dropped: a tag only says why a location's uncovered races are likely
//! harmless or likely harmful, and sets its level (EventRacer's `filter_level`).
//!
//! Harmful markers are only given to locations without a harmless tag (§5.4).

use crate::accesses::{Access, AccessKind, Accesses, LocName};
use crate::races::Race;
use shepherd_trace::{Op, Trace};

/// One filter's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Tag {
    /// Only write-write uncovered races (besides races of reads that follow a write of their
    /// own action), and every write stores the same value.
    WriteSameValue,
    /// Every read follows a write of the same action: a global used as a local.
    OnlyLocalReads,
    /// An event-handler slot whose races involve dispatch reads, and a dispatch ran after the
    /// registration in this trace: the handler may be attached too late for early events.
    LateEventAttach,
    /// An event-handler slot whose races are all dispatches before the registration: events
    /// fired with no handler attached.
    NoEventAttached,
    /// One write, preceded in its action by a read of `undefined`/`null`, other reads later:
    /// lazy initialisation.
    MaybeLazyInit,
    /// `cookie` or `className`: usually commuting updates (addClass, removeClass …).
    CookieOrClassName,
    /// Every uncovered race has a side in a page-unload handler.
    RaceWithUnload,
    /// Written but never read (R4): writes commute unless something reads them.
    NeverRead,
    /// Every uncovered race is between two auto-explored user events: the driver fired them in
    /// an arbitrary order, and a user does one thing at a time (EventRacer orders real user
    /// events, so it never reports these).
    UserEventsOnly,
    /// Every write is a read-modify-write that keeps the value once set (`x = x || {}`, R4).
    NoChangeWrite,
    /// The document's focus, racing only with the browser's autofocus (an `autofocus` mark in
    /// its action): the browser focuses that element only while nothing has focus, so any
    /// other focus change wins in both orders.
    AutofocusYields,
    /// Harmful: some read may run before every write (an uninitialised read), or did in this
    /// run: the read came before any write and its action then threw.
    InitializationRace,
    /// Harmful: a side runs in a `readystatechange` handler (network response timing).
    ReadyStateChangeRace,
}

impl Tag {
    /// All tags, in report order.
    pub const ALL: [Tag; 13] = [
        Tag::InitializationRace,
        Tag::ReadyStateChangeRace,
        Tag::WriteSameValue,
        Tag::OnlyLocalReads,
        Tag::LateEventAttach,
        Tag::NoEventAttached,
        Tag::MaybeLazyInit,
        Tag::CookieOrClassName,
        Tag::RaceWithUnload,
        Tag::NeverRead,
        Tag::NoChangeWrite,
        Tag::AutofocusYields,
        Tag::UserEventsOnly,
    ];

    /// Stable name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Tag::WriteSameValue => "WRITE_SAME_VALUE",
            Tag::OnlyLocalReads => "ONLY_LOCAL_READS",
            Tag::LateEventAttach => "LATE_EVENT_ATTACH",
            Tag::NoEventAttached => "NO_EVENT_ATTACHED",
            Tag::MaybeLazyInit => "MAYBE_LAZY_INIT",
            Tag::CookieOrClassName => "COOKIE_OR_CLASSNAME",
            Tag::RaceWithUnload => "RACE_WITH_UNLOAD",
            Tag::NeverRead => "NEVER_READ",
            Tag::UserEventsOnly => "USER_EVENTS_ONLY",
            Tag::NoChangeWrite => "NO_CHANGE_WRITE",
            Tag::AutofocusYields => "AUTOFOCUS_YIELDS",
            Tag::InitializationRace => "INITIALIZATION_RACE",
            Tag::ReadyStateChangeRace => "READYSTATECHANGE_RACE",
        }
    }

    /// One-line explanation for reports.
    pub fn reason(self) -> &'static str {
        match self {
            Tag::WriteSameValue => "all racing accesses write the same value",
            Tag::OnlyLocalReads => {
                "every read follows a write in the same action (a global used as a local)"
            }
            Tag::LateEventAttach => "the handler is attached while events can already fire",
            Tag::NoEventAttached => "the event fired before any handler was attached",
            Tag::MaybeLazyInit => "lazy initialisation: the first user checks and initialises",
            Tag::CookieOrClassName => "cookie/className updates usually commute",
            Tag::RaceWithUnload => "only races with the page-unload handler",
            Tag::UserEventsOnly => {
                "only races between two explored user events (the user's own order)"
            }
            Tag::NeverRead => "written but never read",
            Tag::NoChangeWrite => "writes keep the value once set (x = x || …)",
            Tag::AutofocusYields => {
                "only focus changes racing with the browser's autofocus, which yields to them"
            }
            Tag::InitializationRace => "a read can run before every write (uninitialised value)",
            Tag::ReadyStateChangeRace => "races with a readystatechange (network response) handler",
        }
    }

    /// True for the two harmful markers.
    pub fn harmful(self) -> bool {
        matches!(self, Tag::InitializationRace | Tag::ReadyStateChangeRace)
    }
}

/// EventRacer's per-location level (`/varlist?filter_level=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Fewer than two accesses, or no write.
    TooFewAccesses = 0,
    /// Accesses that could race, but none do.
    NoRaces = 1,
    /// Only covered races.
    OnlyCovered = 2,
    /// Uncovered races, all explained by a harmless tag.
    Filtered = 3,
    /// Uncovered races, no tag.
    Uncovered = 4,
    /// Uncovered races with a harmful marker.
    Harmful = 5,
}

impl Level {
    /// All levels, lowest first.
    pub const ALL: [Level; 6] = [
        Level::TooFewAccesses,
        Level::NoRaces,
        Level::OnlyCovered,
        Level::Filtered,
        Level::Uncovered,
        Level::Harmful,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Level::TooFewAccesses => "too-few-accesses",
            Level::NoRaces => "no-races",
            Level::OnlyCovered => "only-covered",
            Level::Filtered => "filtered",
            Level::Uncovered => "uncovered",
            Level::Harmful => "harmful",
        }
    }
}

/// The tags and level of one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LocTags {
    bits: u16,
    level: u8,
}

impl LocTags {
    /// Whether `t` is set.
    pub fn has(&self, t: Tag) -> bool {
        self.bits & (1 << t as u8) != 0
    }

    fn set(&mut self, t: Tag) {
        self.bits |= 1 << t as u8;
    }

    /// The tags set, in report order.
    pub fn iter(&self) -> impl Iterator<Item = Tag> + '_ {
        Tag::ALL.into_iter().filter(|t| self.has(*t))
    }

    /// True when a harmful marker is set.
    pub fn harmful(&self) -> bool {
        self.iter().any(Tag::harmful)
    }

    /// The location's level.
    pub fn level(&self) -> Level {
        Level::ALL[self.level as usize]
    }
}

/// The value summary of an access, when logged.
pub fn value_of<'t>(trace: &'t Trace, x: &Access) -> Option<&'t str> {
    match trace.ops.get(x.op as usize) {
        Some(Op::Read { value, .. }) | Some(Op::Write { value, .. }) => {
            value.get().map(|v| trace.strings.get(v))
        }
        _ => None,
    }
}

/// Labels of the scopes enclosing operation `op` of `action`, outermost first.
pub fn enclosing_scopes(trace: &Trace, action: u32, op: u32) -> Vec<&str> {
    let mut stack = Vec::new();
    if let Some(a) = trace.actions.get(action as usize) {
        let end = op.min(a.ops.end);
        for o in trace
            .ops
            .get(a.ops.start as usize..end as usize)
            .unwrap_or(&[])
        {
            match o {
                Op::Enter { scope, .. } => stack.push(trace.strings.get(*scope)),
                Op::Exit => {
                    stack.pop();
                }
                _ => {}
            }
        }
    }
    stack
}

fn in_scope(trace: &Trace, x: &Access, pred: impl Fn(&str) -> bool) -> bool {
    enclosing_scopes(trace, x.action, x.op)
        .into_iter()
        .any(pred)
}

/// Whether the action of `x` logged an exception after `x`.
fn threw_after(trace: &Trace, x: &Access) -> bool {
    trace.actions.get(x.action as usize).is_some_and(|a| {
        trace
            .ops
            .get(x.op as usize + 1..a.ops.end as usize)
            .unwrap_or(&[])
            .iter()
            .any(|o| matches!(o, Op::Exception { .. }))
    })
}

/// Whether `action` carries the runtime's `autofocus` mark: an event the browser's autofocus
/// fired (docs/runtime-api.md, "Runtime: user events").
fn is_autofocus(trace: &Trace, action: u32) -> bool {
    trace.ops_of(action).iter().any(
        |o| matches!(o, Op::Enter { scope, .. } if trace.strings.get(*scope) == AUTOFOCUS_MARK),
    )
}

/// The scope label of the runtime's autofocus mark.
pub const AUTOFOCUS_MARK: &str = "autofocus";

/// Whether `name` is the document's focus (`Document[1].activeElement`).
pub fn is_focus_location(name: &str) -> bool {
    name.starts_with("Document[") && name.ends_with("].activeElement")
}

fn is_unload_scope(s: &str) -> bool {
    s.starts_with("fire:unload") || s.starts_with("fire:beforeunload") || s == "delete_document"
}

fn is_rsc_scope(s: &str) -> bool {
    s.starts_with("fire:readystatechange")
}

fn is_undefined_or_null(v: Option<&str>) -> bool {
    matches!(v, None | Some("undefined") | Some("null") | Some("NULL"))
}

/// Non-node event targets whose listener lists are named `<Target>[<oid>].<type>`.
const NON_NODE_TARGETS: &[&str] = &[
    "",
    "Window",
    "Document",
    "XMLHttpRequest",
    "XMLHttpRequestUpload",
    "WebSocket",
    "Worker",
    "MessagePort",
    "EventSource",
    "FileReader",
    "BroadcastChannel",
    "MediaQueryList",
    "IDBRequest",
    "IDBOpenDBRequest",
    "IDBTransaction",
    "AbortSignal",
    "Notification",
    "VisualViewport",
];

/// Properties of non-node targets that are state, not listener lists.
const NON_NODE_PROPS: &[&str] = &[
    "cookie",
    "title",
    "domain",
    "referrer",
    "location",
    "name",
    "status",
    "activeElement",
];

/// Whether a location names an event-handler slot (`BUTTON[7].click`, `Window[0].load`,
/// EventRacer's `IMG[0x…].load` and `[0x…].load`).
pub fn is_handler_slot(name: &str) -> bool {
    let Some(open) = name.find('[') else {
        return false;
    };
    let Some(close) = name[open..].find("].").map(|c| c + open) else {
        return false;
    };
    let prefix = &name[..open];
    let ty = &name[close + 2..];
    if ty.is_empty() || !ty.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return false;
    }
    let node = !prefix.is_empty()
        && prefix
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == '_');
    node || (NON_NODE_TARGETS.contains(&prefix) && !NON_NODE_PROPS.contains(&ty))
}

/// DOM properties the user sees: races on them are never "local" or "never read".
const VISIBLE_PROPS: &[&str] = &[
    "innerHTML",
    "outerHTML",
    "textContent",
    "innerText",
    "id",
    "className",
    "style",
    "src",
    "href",
    "value",
    "checked",
    "selected",
    "selectedIndex",
    "childList",
    "disabled",
    "hidden",
    "title",
    "alt",
    "nodeValue",
    "data",
    "width",
    "height",
    "display",
    "visibility",
];

/// Whether a location is a DOM property the user can see.
pub fn is_user_visible(name: &str) -> bool {
    name.starts_with("DOMNode[")
        && name
            .rsplit_once("].")
            .is_some_and(|(_, p)| VISIBLE_PROPS.contains(&p))
}

/// Tags every location.
/// `covered` and `uninit` are per race, as the sweep computes them; `auto` marks
/// auto-explored user-event actions (empty when that fix is off).
pub fn tag(
    trace: &Trace,
    acc: &Accesses,
    races: &[Race],
    covered: &[bool],
    uninit: &[bool],
    auto: &[bool],
) -> Vec<LocTags> {
    let is_auto = |a: &Access| auto.get(a.action as usize).copied().unwrap_or(false);
    let nl = acc.locs.len();
    let mut out = vec![LocTags::default(); nl];
    // Races per location: any race, and the uncovered race indices in race order (counted,
    // then placed: one list for all locations, not a vector per location).
    let mut any = vec![false; nl];
    let mut unc_off = vec![0u32; nl + 1];
    for (i, r) in races.iter().enumerate() {
        any[r.loc as usize] = true;
        if !covered[i] {
            unc_off[r.loc as usize + 1] += 1;
        }
    }
    for l in 0..nl {
        unc_off[l + 1] += unc_off[l];
    }
    let mut unc_all = vec![0u32; unc_off[nl] as usize];
    let mut fill = unc_off.clone();
    for (i, r) in races.iter().enumerate() {
        if !covered[i] {
            let at = &mut fill[r.loc as usize];
            unc_all[*at as usize] = i as u32;
            *at += 1;
        }
    }
    drop(fill);
    for l in 0..nl {
        let unc = &unc_all[unc_off[l] as usize..unc_off[l + 1] as usize];
        let t = &mut out[l];
        // A location that cannot race has no races and no accesses kept.
        t.level = if acc.too_few(l as u32) {
            Level::TooFewAccesses
        } else if !any[l] {
            Level::NoRaces
        } else if unc.is_empty() {
            Level::OnlyCovered
        } else {
            Level::Uncovered
        } as u8;
        if unc.is_empty() {
            continue;
        }
        let xs = acc.of(l as u32);
        let writes = xs.iter().filter(|x| x.kind.is_write()).count();
        let name = match acc.locs.raw(l as u32) {
            LocName::Str(s) => trace.strings.get(s),
            LocName::NodeTree { base, .. } => trace.strings.get(base),
        };
        let uraces: Vec<&Race> = unc.iter().map(|&i| &races[i as usize]).collect();
        let side = |r: &Race| (acc.get(r.first), acc.get(r.second));
        let reads = xs.len() - writes;

        // Writing the same value. A read that follows a write of its own action only races
        // because that write does (the WW race is the real one), so it does not count.
        let base = acc.range_of(l as u32).start;
        let local_read = |i: u32| {
            let k = (i - base) as usize;
            xs[k].kind == AccessKind::Read
                && k > 0
                && xs[k - 1].action == xs[k].action
                && xs[k - 1].kind.is_write()
        };
        let only_ww = uraces.iter().all(|r| {
            let (a, b) = side(r);
            (a.kind.is_write() || local_read(r.first))
                && (b.kind.is_write() || local_read(r.second))
        });
        if only_ww {
            let mut vals = xs
                .iter()
                .filter(|x| x.kind.is_write())
                .map(|x| value_of(trace, x));
            if let Some(Some(first)) = vals.next()
                && vals.all(|v| v == Some(first))
            {
                t.set(Tag::WriteSameValue);
            }
        }

        // Only local reads (accesses of one action are adjacent in the list).
        if reads > 0 && !is_user_visible(name) {
            let local = xs.iter().enumerate().all(|(k, x)| {
                x.kind != AccessKind::Read
                    || (k > 0 && xs[k - 1].action == x.action && xs[k - 1].kind.is_write())
            });
            if local {
                t.set(Tag::OnlyLocalReads);
            }
        }

        // Event attachment.
        if is_handler_slot(name) {
            let relevant: Vec<&&Race> = uraces
                .iter()
                .filter(|r| {
                    let (a, b) = side(r);
                    !(in_scope(trace, a, is_unload_scope) || in_scope(trace, b, is_unload_scope))
                })
                .collect();
            let involve_read = relevant.iter().all(|r| {
                let (a, b) = side(r);
                a.kind == AccessKind::Read || b.kind == AccessKind::Read
            });
            if !relevant.is_empty() && involve_read {
                let late = relevant.iter().any(|r| side(r).1.kind == AccessKind::Read);
                t.set(if late {
                    Tag::LateEventAttach
                } else {
                    Tag::NoEventAttached
                });
            }
        }

        // Lazy initialisation.
        if writes == 1
            && let Some(wk) = xs.iter().position(|x| x.kind.is_write())
        {
            let w = &xs[wk];
            let guard = wk > 0
                && xs[wk - 1].action == w.action
                && xs[wk - 1].kind == AccessKind::Read
                && is_undefined_or_null(value_of(trace, &xs[wk - 1]));
            // The guard read is the first access; every other access is a later read.
            let others_after = wk == 1 && wk + 1 < xs.len();
            if guard && others_after {
                t.set(Tag::MaybeLazyInit);
            }
        }

        if name.contains(".cookie") || name.contains(".className") || name.starts_with("Cookie") {
            t.set(Tag::CookieOrClassName);
        }

        if uraces.iter().all(|r| {
            let (a, b) = side(r);
            in_scope(trace, a, is_unload_scope) || in_scope(trace, b, is_unload_scope)
        }) {
            t.set(Tag::RaceWithUnload);
        }

        if reads == 0 && !is_user_visible(name) {
            t.set(Tag::NeverRead);
        }

        let user_only = |r: &&Race| {
            let (a, b) = side(r);
            is_auto(a) && is_auto(b)
        };
        if uraces.iter().all(user_only) {
            t.set(Tag::UserEventsOnly);
        }

        // Autofocus: write-write races with the browser's autofocus (the explored user's own
        // order aside).
        if is_focus_location(name) {
            let with_autofocus = |r: &&Race| {
                let (a, b) = side(r);
                a.kind.is_write()
                    && b.kind.is_write()
                    && (is_autofocus(trace, a.action) || is_autofocus(trace, b.action))
            };
            if uraces.iter().any(with_autofocus)
                && uraces.iter().all(|r| user_only(r) || with_autofocus(r))
            {
                t.set(Tag::AutofocusYields);
            }
        }

        // x = x || …: every write is an update; the read value is unset or equals the written
        // value; at most one write changes the value.
        if writes > 0 {
            let (mut changing, mut unchanged) = (0, 0);
            let ok = xs.iter().enumerate().all(|(k, x)| {
                if !x.kind.is_write() {
                    return true;
                }
                if x.kind != AccessKind::Update || k == 0 {
                    return false;
                }
                let (r, wv) = (&xs[k - 1], value_of(trace, x));
                let rv = value_of(trace, r);
                if wv.is_none() {
                    return false;
                }
                if rv == wv {
                    unchanged += 1;
                    true
                } else if rv.is_some() && is_undefined_or_null(rv) {
                    changing += 1;
                    true
                } else {
                    false
                }
            });
            if ok && changing <= 1 && unchanged >= 1 {
                t.set(Tag::NoChangeWrite);
            }
        }

        if t.bits != 0 {
            t.level = Level::Filtered as u8;
            continue;
        }

        // Harmful markers. An uninitialised read the run itself made: the race's first side is
        // a read that no write of the location precedes in the trace, and its action threw
        // after it (the page failed on the missing value).
        let threw_before_init = |r: &Race| {
            let k = (r.first - base) as usize;
            let x = &xs[k];
            x.kind == AccessKind::Read
                && xs[..k].iter().all(|p| !p.kind.is_write())
                && threw_after(trace, x)
        };
        let init = unc
            .iter()
            .any(|&i| uninit[i as usize] || threw_before_init(&races[i as usize]));
        if init {
            t.set(Tag::InitializationRace);
        }
        if uraces.iter().any(|r| {
            let (a, b) = side(r);
            in_scope(trace, a, is_rsc_scope) || in_scope(trace, b, is_rsc_scope)
        }) {
            t.set(Tag::ReadyStateChangeRace);
        }
        if t.bits != 0 {
            t.level = Level::Harmful as u8;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_slots() {
        assert!(is_handler_slot("BUTTON[7].click"));
        assert!(is_handler_slot("IMG[0x2357510].load"));
        assert!(is_handler_slot("[0x1234].load"));
        assert!(is_handler_slot("Window[0].load"));
        assert!(is_handler_slot("XMLHttpRequest[9].readystatechange"));
        assert!(!is_handler_slot("Document[1].cookie"));
        assert!(!is_handler_slot("Document[1].activeElement"));
        assert!(!is_handler_slot("DOMNode[4].innerHTML"));
        assert!(!is_handler_slot("Object[12].count"));
        assert!(!is_handler_slot("Global.f"));
        assert!(!is_handler_slot("Array[3]$LEN"));
    }

    #[test]
    fn visible_props() {
        assert!(is_user_visible("DOMNode[4].innerHTML"));
        assert!(is_user_visible("DOMNode[4].selectedIndex"));
        assert!(is_user_visible("DOMNode[4].childList"));
        assert!(!is_user_visible("DOMNode[4].foo"));
        assert!(!is_user_visible("Global.innerHTML"));
    }
}
