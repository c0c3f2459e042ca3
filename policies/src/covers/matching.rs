//! Whether an action matches a rule's predicate: terms, subjects, filters and the simple CSS
//! selectors judged from the trace, under a rule instance's bindings ([`Env`]).

use super::facts::{Ev, Evs};
use crate::ast::Cmp;
use crate::compile::glob_matches;
use crate::ir::{Filter, Subject, Term};
use crate::kinds::{Kind, USER_TYPES};
use shepherd_trace::{ActionId, ActionKind};
use std::rc::Rc;

/// A rule instance's bindings: template parameter → action, sorted by name. Shared by the
/// rules of one template call and by the instance's key: a long trace makes a hundred
/// thousand instances, and a map of owned names per instance (cloned again for its key) was
/// most of the simulation's time and memory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(super) struct Env<'a>(Option<Rc<[(&'a str, ActionId)]>>);

impl<'a> Env<'a> {
    /// The bindings of `pairs` (a later binding of a name replaces an earlier one).
    pub(super) fn of(pairs: impl IntoIterator<Item = (&'a str, ActionId)>) -> Env<'a> {
        let mut v: Vec<(&'a str, ActionId)> = Vec::new();
        for (k, a) in pairs {
            match v.iter_mut().find(|(x, _)| *x == k) {
                Some(slot) => slot.1 = a,
                None => v.push((k, a)),
            }
        }
        if v.is_empty() {
            return Env(None);
        }
        v.sort_unstable();
        Env(Some(v.into()))
    }

    pub(super) fn get(&self, name: &str) -> Option<ActionId> {
        self.0
            .as_deref()
            .and_then(|v| v.iter().find(|(k, _)| *k == name))
            .map(|&(_, a)| a)
    }
}

/// Whether a term reads a bound variable (its subject or a `from` filter's).
pub(super) fn term_reads_vars(t: &Term) -> bool {
    matches!(t.subject, Subject::Var(_))
        || t.filters.iter().any(|(_, f)| match f {
            Filter::From(inner) => term_reads_vars(inner),
            _ => false,
        })
}

pub(super) fn pred_matches(p: &[Term], v: ActionId, evs: &Evs, env: &Env) -> bool {
    p.iter().any(|t| term_matches(t, v, evs, env))
}

fn term_matches(t: &Term, v: ActionId, evs: &Evs, env: &Env) -> bool {
    let Some(e) = evs.get(v) else {
        return false;
    };
    subject_matches(&t.subject, v, &e, env)
        && t.filters.iter().all(|(neg, f)| {
            let m = match f {
                Filter::On(sel) => selector_matches(sel, &e),
                Filter::Url(g) => e.url.is_some_and(|u| url_matches(g, u, evs.base())),
                Filter::Loading(l) => e.loading == Some(*l) && !e.inline,
                Filter::State(s) => *s == 4 && e.xhr_done,
                Filter::From(inner) => e.creator.is_some_and(|c| term_matches(inner, c, evs, env)),
                Filter::Delay(c, ms) => e.delay.is_some_and(|d| {
                    let d = u64::from(d);
                    match c {
                        Cmp::Lt => d < *ms,
                        Cmp::Le => d <= *ms,
                        Cmp::Gt => d > *ms,
                        Cmp::Ge => d >= *ms,
                        Cmp::Eq => d == *ms,
                    }
                }),
            };
            m != *neg
        })
}

/// Whether action `v` (described by `e`) is the term subject `s`.
pub(super) fn subject_matches(s: &Subject, v: ActionId, e: &Ev, env: &Env) -> bool {
    match s {
        Subject::Var(x) => env.get(x) == Some(v),
        Subject::Type(ty) => e.dom_type == Some(ty.as_str()),
        Subject::Kind(k) => match k {
            Kind::User => e.user && e.dom_type.is_some_and(|ty| USER_TYPES.contains(&ty)),
            Kind::Xhr => e.xhr_done,
            Kind::Script => {
                Kind::of_action(ActionKind::parse(e.kind)) == Some(Kind::Script) && e.url.is_some()
            }
            Kind::InlineScript => {
                Kind::of_action(ActionKind::parse(e.kind)) == Some(Kind::Script) && e.inline
            }
            Kind::Img => element_load(e, "IMG"),
            Kind::Iframe => element_load(e, "IFRAME"),
            k => Kind::of_action(ActionKind::parse(e.kind)) == Some(*k),
        },
    }
}

/// Whether request URL `u` matches glob `g`, `u` resolved against the page first when it is
/// relative (a page's `open('GET', 'me.json')`; the runtime matches the absolute URL).
fn url_matches(g: &str, u: &str, base: Option<&str>) -> bool {
    if glob_matches(g, u) {
        return true;
    }
    if u.contains("://") {
        return false;
    }
    base.and_then(|b| url::Url::parse(b).ok())
        .and_then(|b| b.join(u).ok())
        .is_some_and(|abs| glob_matches(g, abs.as_str()))
}

/// Whether `e` is the load or error of an element with tag `tag` (as target labels name it).
fn element_load(e: &Ev, tag: &str) -> bool {
    matches!(e.dom_type, Some("load" | "error"))
        && e.target.is_some_and(|t| t.eq_ignore_ascii_case(tag))
}

/// Simple selectors judged from the trace: `tag`, `#id`, `tag#id`, `*`, `window`, `document`.
fn selector_matches(sel: &str, e: &Ev) -> bool {
    sel.split(',').map(str::trim).any(|s| {
        let tag = e.target.unwrap_or("");
        match s {
            "window" => tag == "Window",
            "document" => tag == "Document",
            "*" => e.target.is_some(),
            _ => {
                let (t, id) = match s.split_once('#') {
                    Some((t, id)) => (t, Some(id)),
                    None => (s, None),
                };
                let simple = |x: &str| {
                    x.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                };
                if !simple(t) || !id.is_none_or(simple) {
                    return false;
                }
                (t.is_empty() || t.eq_ignore_ascii_case(tag))
                    && id.is_none_or(|id| e.target_id == Some(id))
            }
        }
    })
}
