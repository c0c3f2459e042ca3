//! A checked policy in words, for `shepherd policy check`.

use crate::ast::{Action, Op};
use crate::ir::{Expiry, Filter, Policy, Rule, Subject, Term};
use std::fmt::Write as _;

/// The whole policy explained: scope, options, each rule and each template it uses.
pub fn explain(p: &Policy) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "policy {} ({})", p.name, p.source);
    if p.scopes.is_empty() {
        let _ = writeln!(s, "  applies to every page");
    } else {
        let _ = writeln!(s, "  applies to pages matching {}", p.scopes.join(", "));
    }
    let _ = writeln!(
        s,
        "  spinner {}; an event is held at most {} ms, then it runs and the incident is reported",
        if p.spinner {
            "shown while user input waits"
        } else {
            "off"
        },
        p.max_delay_ms
    );
    for r in &p.rules {
        let _ = writeln!(s, "  line {}: {}", r.line, rule(r));
    }
    for (name, t) in &p.templates {
        let _ = writeln!(s, "  template {name}({}):", t.params.join(", "));
        for r in &t.rules {
            let _ = writeln!(s, "    {}", rule(r));
        }
    }
    s
}

/// One rule in words.
pub fn rule(r: &Rule) -> String {
    let what = pred(&r.pred);
    let mut s = match (r.op, r.action) {
        (Op::Fork, _) => format!("whenever the page creates {what}"),
        (Op::Begin, Action::Dispatch) => format!("whenever {what} runs"),
        (Op::Begin, Action::Postpone) => format!("postpone {what}"),
        (Op::Begin, Action::Discard) => format!("discard {what}"),
    };
    if let Some(b) = &r.bind {
        let _ = write!(s, " (call it {b})");
    }
    if r.until.is_empty() {
        if r.action != Action::Dispatch {
            s.push_str(", always");
        }
    } else {
        let conds: Vec<String> = r.until.iter().map(expiry).collect();
        let _ = write!(s, ", until {}", conds.join(" or "));
    }
    if r.once {
        s.push_str(", only the first time");
    }
    if !r.then.is_empty() {
        let calls: Vec<String> = r
            .then
            .iter()
            .map(|(t, a)| format!("{t}({})", a.join(", ")))
            .collect();
        let _ = write!(s, "; then add {}", calls.join(", "));
    }
    s
}

fn pred(p: &[Term]) -> String {
    let parts: Vec<String> = p.iter().map(term).collect();
    parts.join(" or ")
}

fn term(t: &Term) -> String {
    let mut s = match &t.subject {
        Subject::Kind(k) => k.describe().to_string(),
        Subject::Type(ty) => format!("`{ty}` events"),
        Subject::Var(v) => format!("event {v}"),
    };
    for (neg, f) in &t.filters {
        let not = if *neg { "not " } else { "" };
        let _ = match f {
            Filter::On(sel) => write!(s, " {not}on {sel}"),
            Filter::Url(u) => write!(s, " whose URL {not}matches {u}"),
            Filter::State(n) => write!(s, " {not}at readyState {n}"),
            Filter::From(inner) => write!(s, " {not}created by {}", term(inner)),
            Filter::Delay(c, ms) => write!(s, " with a delay {not}{} {ms} ms", c.as_str()),
            Filter::Loading(l) => write!(s, " {not}loaded {}", loading(*l)),
        };
    }
    s
}

fn loading(l: crate::kinds::Loading) -> &'static str {
    use crate::kinds::Loading;
    match l {
        Loading::Blocking => "by the parser, which waits for it",
        Loading::Async => "by the parser with async",
        Loading::Defer => "by the parser to run after parsing (defer, modules)",
        Loading::Inserted => "by the page's code (inserted or written)",
    }
}

fn expiry(e: &Expiry) -> String {
    match e {
        Expiry::Parsed => "the document is parsed (DOMContentLoaded ran)".into(),
        Expiry::Loaded => "the page has loaded (window load ran)".into(),
        Expiry::ArrivedVar(v) => format!("{v} has run"),
        Expiry::ArrivedMatch(p) => format!("{} has run", pred(p)),
        Expiry::After(ms) => format!("{ms} ms have passed"),
        Expiry::Js(i) => format!("JavaScript expression #{} is true", i + 1),
    }
}
