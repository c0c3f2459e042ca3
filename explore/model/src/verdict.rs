//! The report phase: an explored sequence against its parent (the sequence with one conflict
//! reversal less). R4 §2.4 and the dissertation §4.2.5:
//!
//! - **equivalent**: same DOM, rendering, exceptions, requests and global variables — the
//!   reversed events commute;
//! - **approximately equivalent** (harmless): a side runs in an unload handler, or only timer
//!   events differ and the DOM does not (ad-hoc synchronisation: a timer polls until a
//!   condition holds). R4's late-attachment rule is not applied: an event that fired before its
//!   handler was attached is a lost event when the handler does something observable;
//! - **different**: harmful when the visible DOM or the rendering, the set of uncaught
//!   exceptions or the requests sent differ; otherwise only the JavaScript heap differs, which
//!   is reported as harmless with low confidence.

use crate::snapshot::Snapshot;
use crate::steps::RaceNote;
use serde::{Deserialize, Serialize};

/// A difference between two end states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Difference {
    /// The DOM (elements, attributes, text, field values).
    Dom,
    /// The screenshots, with equal DOMs.
    Rendering,
    /// The set of uncaught exceptions.
    Exceptions,
    /// The requests the page sent.
    Network,
    /// Final values of global variables.
    Heap,
    /// The timer events that ran.
    Timers,
    /// What the user sees: text of rendered elements, visible fields' values, images.
    Visible,
    /// Cookies and web storage.
    Storage,
}

impl Difference {
    /// Words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Difference::Dom => "the DOM differs",
            Difference::Rendering => "the rendering differs",
            Difference::Exceptions => "the uncaught exceptions differ",
            Difference::Network => "the requests sent differ",
            Difference::Heap => "global variables end with other values",
            Difference::Timers => "other timer events ran",
            Difference::Visible => "the user sees something else",
            Difference::Storage => "cookies or web storage end differently",
        }
    }
}

/// How a child compares with its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Nothing differs.
    Equivalent,
    /// Differences a harmless pattern explains.
    ApproximatelyEquivalent,
    /// Something differs.
    Different,
}

/// The verdict on one reversal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judgement {
    /// The other order changes what the page shows or does.
    Harmful,
    /// It does not (or only the heap, with low confidence).
    Harmless,
}

/// Classification of one explored sequence against its parent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Harmful or harmless.
    pub verdict: Judgement,
    /// Equivalent, approximately equivalent or different.
    pub class: Class,
    /// Why, in words.
    pub reason: String,
    /// Everything that differs.
    pub differences: Vec<Difference>,
}

/// What differs between two end states.
pub fn differences(parent: &Snapshot, child: &Snapshot) -> Vec<Difference> {
    let mut d = Vec::new();
    if parent.dom != child.dom {
        d.push(Difference::Dom);
    } else if let (Some(a), Some(b)) = (&parent.screenshot, &child.screenshot)
        && a != b
    {
        d.push(Difference::Rendering);
    }
    if !parent.visible.is_empty() && parent.visible != child.visible {
        d.push(Difference::Visible);
    }
    if parent.exceptions != child.exceptions {
        d.push(Difference::Exceptions);
    }
    if parent.storage != child.storage {
        d.push(Difference::Storage);
    }
    if page_requests(&parent.requests) != page_requests(&child.requests) {
        d.push(Difference::Network);
    }
    if parent.heap != child.heap {
        d.push(Difference::Heap);
    }
    if parent.timers != child.timers {
        d.push(Difference::Timers);
    }
    d
}

/// The requests that count: the browser's own icon fetch is not the page's doing.
fn page_requests(all: &[String]) -> Vec<&String> {
    all.iter()
        .filter(|u| !u.ends_with("/favicon.ico"))
        .collect()
}

/// Judges a child against its parent; `races` are the races between the two reversed steps
/// (empty for a sequence that ran a disabled event first).
pub fn judge(parent: &Snapshot, child: &Snapshot, races: &[RaceNote]) -> Verdict {
    let differences = differences(parent, child);
    let verdict = |verdict, class, reason: &str| Verdict {
        verdict,
        class,
        reason: reason.to_string(),
        differences: differences.clone(),
    };
    let visible: Vec<Difference> = differences
        .iter()
        .copied()
        .filter(|d| {
            matches!(
                d,
                Difference::Dom
                    | Difference::Rendering
                    | Difference::Exceptions
                    | Difference::Network
            )
        })
        .collect();
    if differences.is_empty() {
        return verdict(
            Judgement::Harmless,
            Class::Equivalent,
            "equivalent: the events commute (same DOM, rendering, exceptions, requests and globals)",
        );
    }
    // R4 counted an event that fired before its handler was attached as harmless (late
    // attachment). A click whose handler does something observable is then a lost click: the
    // differences decide, as for any other race.
    let unload = |r: &RaceNote| {
        [&r.first, &r.second].iter().any(|a| {
            a.scope
                .as_deref()
                .is_some_and(|s| s.starts_with("fire:unload") || s.starts_with("fire:beforeunload"))
        })
    };
    if !races.is_empty() && races.iter().any(unload) {
        return verdict(
            Judgement::Harmless,
            Class::ApproximatelyEquivalent,
            "a race with the page-unload handler",
        );
    }
    if differences.contains(&Difference::Timers) && visible.is_empty() {
        return verdict(
            Judgement::Harmless,
            Class::ApproximatelyEquivalent,
            "timer ad-hoc synchronisation: only timer events (and what they count) differ, the DOM does not",
        );
    }
    // The rest as a probe's settled states are judged, so the two phases agree: DOM the user
    // does not see and telemetry are their own harmless classes, not harmful.
    let settled = judge_settled(parent, child, None, false, false, &[]);
    Verdict {
        verdict: settled.verdict,
        class: match settled.rule {
            Rule::InvisibleDom | Rule::Telemetry => Class::ApproximatelyEquivalent,
            _ => Class::Different,
        },
        reason: settled.reason,
        differences,
    }
}

/// Why a probe's order is harmless, or what it costs the user when harmful: the rule that
/// decided, for reports and `--json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Harmful: the other order throws an uncaught exception the recorded one does not.
    Exception,
    /// Harmful: a user event of the pair has no effect (or another one) in the other order.
    LostInput,
    /// Harmful: once the page has settled by its own means, the user sees something else.
    VisibleState,
    /// Harmful: the page sends other requests (URL, method, body, cookies).
    Requests,
    /// Harmful: cookies or web storage end differently.
    Storage,
    /// Harmless: the settled states agree.
    Equivalent,
    /// Harmless: the states differed right after the pair, and the page's own timers,
    /// retries or responses brought both orders to the same state.
    SettlesItself,
    /// Not harmful, its own class: only DOM the user does not see differs (attributes such as
    /// `data-*`/`aria-*`, hidden elements).
    InvisibleDom,
    /// Harmless, low confidence: only global variables differ.
    HeapOnly,
    /// Harmless: in a real browser nothing can run between the two (the parser goes straight
    /// from the element to the script after it).
    NoWindow,
    /// Not harmful, its own class: only telemetry differs (beacons, pings: requests whose
    /// answer the page does not read).
    Telemetry,
    /// Harmless: the user cannot act before the other side has run (the control is disabled
    /// or the field read-only until then): the page itself rules the other order out.
    NotActionable,
    /// Harmless: what the user typed is in the field in both orders; the values differ only by
    /// what the page wrote there besides (a default written before the user typed, which
    /// the user saw while typing).
    TypingKept,
}

impl Rule {
    /// Whether the rule makes a verdict harmful.
    pub fn harmful(self) -> bool {
        matches!(
            self,
            Rule::Exception | Rule::LostInput | Rule::VisibleState | Rule::Requests | Rule::Storage
        )
    }

    /// Words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Exception => "the other order throws an uncaught exception",
            Rule::LostInput => "the user's input is lost or does something else",
            Rule::VisibleState => "once the page has settled, the user sees something else",
            Rule::Requests => "the page sends other requests",
            Rule::Storage => "cookies or web storage end differently",
            Rule::Equivalent => "equivalent: both orders settle in the same state",
            Rule::SettlesItself => {
                "the page settles by itself: its timers, retries or responses bring both orders to the same state"
            }
            Rule::InvisibleDom => {
                "only DOM the user does not see differs (attributes, hidden elements)"
            }
            Rule::HeapOnly => {
                "only global variables differ (low confidence: nothing visible changed)"
            }
            Rule::NoWindow => {
                "no window: the parser goes straight from the element to the script after it"
            }
            Rule::Telemetry => "only telemetry differs (beacons or pings the page does not read)",
            Rule::NotActionable => {
                "the user cannot act before: the page keeps the control disabled or read-only until then"
            }
            Rule::TypingKept => {
                "the user's typing is kept in both orders: the field differs only by what the page wrote there besides"
            }
        }
    }
}

/// The verdict on a probe: its settled state against its reference's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    /// Harmful or harmless.
    pub verdict: Judgement,
    /// The rule that decided.
    pub rule: Rule,
    /// Everything that differs in the settled states.
    pub differences: Vec<Difference>,
    /// The reason in words (the rule, and what differs).
    pub reason: String,
}

/// Judges a probe. `reference` and `probe` are the settled end states; `early` the two
/// states right after the pair ran (reference's, probe's), when both were taken; `moved_user`
/// whether the moved side is a user event; `no_window` whether a real browser leaves no room
/// for the probe's order; `typed` what the user typed in the pair's typing
/// ([`crate::gesture::typed_texts`]).
pub fn judge_settled(
    reference: &Snapshot,
    probe: &Snapshot,
    early: Option<(&str, &str)>,
    moved_user: bool,
    no_window: bool,
    typed: &[String],
) -> Settled {
    let differences = differences(reference, probe);
    let has = |d: Difference| differences.contains(&d);
    let new_exceptions = probe
        .exceptions
        .iter()
        .any(|e| !reference.exceptions.contains(e));
    let rule = if no_window && !differences.is_empty() {
        Rule::NoWindow
    } else if new_exceptions {
        Rule::Exception
    } else if (has(Difference::Visible) || (reference.visible.is_empty() && has(Difference::Dom)))
        && !has(Difference::Network)
        && !has(Difference::Storage)
        && typing_kept(reference, probe, typed)
    {
        Rule::TypingKept
    } else if has(Difference::Visible) || (reference.visible.is_empty() && has(Difference::Dom)) {
        if moved_user {
            Rule::LostInput
        } else {
            Rule::VisibleState
        }
    } else if has(Difference::Rendering) && !has(Difference::Dom) {
        Rule::VisibleState
    } else if has(Difference::Network) {
        let plain = |r: &Snapshot| -> Vec<String> {
            r.requests
                .iter()
                .filter(|l| !l.starts_with("telemetry "))
                .cloned()
                .collect()
        };
        if plain(reference) == plain(probe) {
            Rule::Telemetry
        } else {
            Rule::Requests
        }
    } else if has(Difference::Storage) {
        Rule::Storage
    } else if has(Difference::Dom) {
        Rule::InvisibleDom
    } else if has(Difference::Exceptions) {
        // Fewer exceptions in the other order: the recorded order throws, this one does not.
        Rule::VisibleState
    } else if early.is_some_and(|(a, b)| a != b) {
        Rule::SettlesItself
    } else if has(Difference::Heap) {
        Rule::HeapOnly
    } else {
        Rule::Equivalent
    };
    let mut reason = rule.describe().to_string();
    let shown: Vec<&str> = differences
        .iter()
        .filter(|d| !matches!(d, Difference::Timers | Difference::Heap) || !rule.harmful())
        .map(|d| d.describe())
        .collect();
    if !shown.is_empty() && rule != Rule::Equivalent && rule != Rule::SettlesItself {
        reason.push_str(if rule == Rule::NoWindow {
            " (the other order, forced, would differ: "
        } else {
            " ("
        });
        reason.push_str(&shown.join("; "));
        reason.push(')');
    }
    Settled {
        verdict: if rule.harmful() {
            Judgement::Harmful
        } else {
            Judgement::Harmless
        },
        rule,
        differences,
        reason,
    }
}

/// Whether two settled states differ only in text fields' values, and each such value holds
/// one of `typed` in both: the user's typing survived either order. Checked on what the user
/// sees (`field #name "…"` lines) and on the DOM (`.value="…"`), line by line; any other
/// difference in either, or a field without the typed text, and it is not.
fn typing_kept(a: &Snapshot, b: &Snapshot, typed: &[String]) -> bool {
    if typed.is_empty() {
        return false;
    }
    let holds = |v: &str| typed.iter().any(|t| v.contains(t.as_str()));
    // `field #name "Ada"` (optionally ` disabled`): the name and the value.
    let field = |l: &str| -> Option<(String, String)> {
        let rest = l.strip_prefix("field ")?;
        let q = rest.find(" \"")?;
        split_quoted(&rest[..q], &rest[q + 1..])
    };
    // `<input id="name" .value="Ada">`: the line without the value, and the value. Text
    // fields only: a key in a `<select>` chooses an option, it types no text.
    let dom_value = |l: &str| -> Option<(String, String)> {
        let tag = l.trim_start();
        if !(tag.starts_with("<input") || tag.starts_with("<textarea")) {
            return None;
        }
        let at = l.find(" .value=")?;
        split_quoted(&l[..at], &l[at + " .value=".len()..])
    };
    let only_values_differ =
        |x: &str, y: &str, split: &dyn Fn(&str) -> Option<(String, String)>| -> Option<bool> {
            let (xs, ys): (Vec<&str>, Vec<&str>) = (x.lines().collect(), y.lines().collect());
            if xs.len() != ys.len() {
                return None;
            }
            let mut any = false;
            for (l, r) in xs.iter().zip(&ys) {
                if l == r {
                    continue;
                }
                let ((lk, lv), (rk, rv)) = (split(l)?, split(r)?);
                if lk != rk || !holds(&lv) || !holds(&rv) {
                    return None;
                }
                any = true;
            }
            Some(any)
        };
    let visible = only_values_differ(&a.visible, &b.visible, &field);
    let dom = only_values_differ(&a.dom, &b.dom, &dom_value);
    matches!((visible, dom), (Some(v), Some(d)) if v || d)
}

/// `value` starts with a JSON string: that string, and `head` followed by what comes after it
/// (the line with the value taken out, to compare the rest).
fn split_quoted(head: &str, value: &str) -> Option<(String, String)> {
    let mut it = serde_json::Deserializer::from_str(value).into_iter::<String>();
    let v = it.next()?.ok()?;
    Some((format!("{head}{}", &value[it.byte_offset()..]), v))
}

/// A line diff of two DOM serialisations (unified-style, `-` parent, `+` child), at most
/// `limit` changed lines.
pub fn dom_diff(parent: &str, child: &str, limit: usize) -> String {
    let a: Vec<&str> = parent.lines().collect();
    let b: Vec<&str> = child.lines().collect();
    // Trim the common head and tail; an LCS table over what is left (bounded).
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out = Vec::new();
    if head > 0 {
        out.push(format!("@@ line {} @@", head + 1));
    }
    if ma.len() * mb.len() > 4_000_000 {
        out.extend(ma.iter().map(|l| format!("-{l}")));
        out.extend(mb.iter().map(|l| format!("+{l}")));
    } else {
        let (n, m) = (ma.len(), mb.len());
        let mut lcs = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * (m + 1) + j] = if ma[i] == mb[j] {
                    lcs[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    lcs[(i + 1) * (m + 1) + j].max(lcs[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                out.push(format!(" {}", ma[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
                // Removed lines before added ones, as readers of diffs expect.
                out.push(format!("-{}", ma[i]));
                i += 1;
            } else {
                out.push(format!("+{}", mb[j]));
                j += 1;
            }
        }
    }
    let mut changed = 0;
    let mut kept = Vec::new();
    for l in out {
        if l.starts_with('+') || l.starts_with('-') {
            changed += 1;
            if changed > limit {
                kept.push(format!("… ({limit} changed lines shown)"));
                break;
            }
        }
        kept.push(l);
    }
    kept.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::AccessNote;

    fn snap(dom: &str) -> Snapshot {
        Snapshot {
            dom: dom.into(),
            ..Snapshot::default()
        }
    }

    fn race(loc: &str, scope: Option<&str>) -> RaceNote {
        let side = AccessNote {
            stable: "doc/x#1".into(),
            access: "WRITE".into(),
            source: None,
            scope: scope.map(str::to_string),
        };
        RaceNote {
            location: loc.into(),
            kind: "WRITE-READ".into(),
            first: side.clone(),
            second: side,
        }
    }

    #[test]
    fn classes() {
        let p = snap("<p>\n  \"a\"");
        let v = judge(&p, &p, &[race("Global.x", None)]);
        assert_eq!(
            (v.verdict, v.class),
            (Judgement::Harmless, Class::Equivalent)
        );
        let c = snap("<p>\n  \"b\"");
        let v = judge(&p, &c, &[race("Global.x", None)]);
        assert_eq!((v.verdict, v.class), (Judgement::Harmful, Class::Different));
        assert_eq!(v.differences, vec![Difference::Dom]);
        // A late attachment is judged by what differs: here the DOM, so a lost click.
        let v = judge(&p, &c, &[race("BUTTON[7].click", None)]);
        assert_eq!((v.verdict, v.class), (Judgement::Harmful, Class::Different));
        let v = judge(&p, &c, &[race("Global.x", Some("fire:unload @ Window[0]"))]);
        assert_eq!(v.class, Class::ApproximatelyEquivalent);
        let mut t = p.clone();
        t.timers = vec!["doc/timer#1".into()];
        t.heap.insert("Global.tries".into(), "3".into());
        let v = judge(&p, &t, &[race("Global.ready", None)]);
        assert_eq!(
            (v.verdict, v.class),
            (Judgement::Harmless, Class::ApproximatelyEquivalent)
        );
        let mut h = p.clone();
        h.heap.insert("Global.x".into(), "1".into());
        let v = judge(&p, &h, &[race("Global.x", None)]);
        assert_eq!(
            (v.verdict, v.class),
            (Judgement::Harmless, Class::Different)
        );
        let mut e = p.clone();
        e.exceptions = vec!["ReferenceError".into()];
        assert_eq!(judge(&p, &e, &[]).verdict, Judgement::Harmful);
    }

    fn seen(visible: &str) -> Snapshot {
        Snapshot {
            dom: format!("<p>\n  {visible}"),
            visible: visible.into(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn settled_rules() {
        let a = seen("\"42\"");
        let rule = |b: &Snapshot, early: Option<(&str, &str)>, user: bool, no_window: bool| {
            let v = judge_settled(&a, b, early, user, no_window, &[]);
            assert_eq!(v.verdict == Judgement::Harmful, v.rule.harmful());
            v.rule
        };
        assert_eq!(rule(&a.clone(), None, true, false), Rule::Equivalent);
        // The other order's state differed right after the pair, and settled the same.
        assert_eq!(
            rule(&a.clone(), Some(("x", "y")), false, false),
            Rule::SettlesItself
        );
        let mut thrown = a.clone();
        thrown.exceptions = vec!["Uncaught ReferenceError: f is not defined".into()];
        assert_eq!(rule(&thrown, None, true, false), Rule::Exception);
        let not_ready = seen("\"not ready\"");
        assert_eq!(rule(&not_ready, None, true, false), Rule::LostInput);
        assert_eq!(rule(&not_ready, None, false, false), Rule::VisibleState);
        // No room in a browser for the other order: harmless whatever differs.
        assert_eq!(rule(&not_ready, None, true, true), Rule::NoWindow);
        let mut hidden = a.clone();
        hidden.dom.push_str("\n  <i data-x=\"1\">");
        assert_eq!(rule(&hidden, None, false, false), Rule::InvisibleDom);
        let mut stored = a.clone();
        stored.storage.insert("cookie:cart".into(), "2".into());
        assert_eq!(rule(&stored, None, false, false), Rule::Storage);
        let mut sent = a.clone();
        sent.requests = vec!["POST https://a.test/buy body:1".into()];
        assert_eq!(rule(&sent, None, false, false), Rule::Requests);
        let mut beacon = a.clone();
        beacon.requests = vec!["telemetry POST https://a.test/log body:2".into()];
        assert_eq!(rule(&beacon, None, false, false), Rule::Telemetry);
        let mut heap = a.clone();
        heap.heap.insert("Global.x".into(), "1".into());
        assert_eq!(rule(&heap, None, false, false), Rule::HeapOnly);
    }

    #[test]
    fn typing_kept_in_both_orders_is_harmless() {
        let field = |v: &str| Snapshot {
            dom: format!("<input id=\"name\" .value={v:?}>\n<p>\n  \"hi\""),
            visible: format!("title \"a\"\nfield #name {v:?}\n\"hi\""),
            ..Snapshot::default()
        };
        let typed = vec!["Ada".to_string()];
        let rule = |a: &Snapshot, b: &Snapshot, typed: &[String]| {
            judge_settled(a, b, None, true, false, typed).rule
        };
        // A default written before the user typed: the typing is still there.
        assert_eq!(
            rule(&field("Ada"), &field("GuestAda"), &typed),
            Rule::TypingKept
        );
        // Overwritten after it: lost.
        assert_eq!(
            rule(&field("Ada"), &field("Guest"), &typed),
            Rule::LostInput
        );
        // Without typing, the same difference is the user's input lost.
        assert_eq!(
            rule(&field("Ada"), &field("GuestAda"), &[]),
            Rule::LostInput
        );
        // A key in a select chooses an option: its value is no typed text.
        let select = |v: &str| Snapshot {
            dom: format!("<select id=\"country\" .value={v:?}>"),
            visible: format!("field #country {v:?}"),
            ..Snapshot::default()
        };
        let f = vec!["F".to_string()];
        assert_eq!(rule(&select("FR"), &select("FI"), &f), Rule::LostInput);
        // Anything else that differs besides the field decides as before.
        let mut other = field("GuestAda");
        other.visible.push_str("\n\"welcome, Guest\"");
        other.dom.push_str("\n  \"welcome, Guest\"");
        assert_eq!(rule(&field("Ada"), &other, &typed), Rule::LostInput);
    }

    #[test]
    fn diff_shows_changed_lines() {
        let d = dom_diff("a\nb\nc\nd", "a\nB\nc\nd\ne", 10);
        assert_eq!(d, "@@ line 2 @@\n-b\n+B\n c\n d\n+e");
    }
}
