//! A checked policy: names resolved, `let`s expanded, templates and calls verified. This is
//! what the compiler turns into the runtime's JSON and what the trace simulation runs.

use crate::ast::{Action, Cmp, Op};
use crate::kinds::{Kind, Loading};
use std::collections::BTreeMap;

/// What a term is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// A built-in kind.
    Kind(Kind),
    /// A DOM event type (`click`, `load`, `DOMContentLoaded`, a custom type).
    Type(String),
    /// One particular event, bound by `as` or passed to a template.
    Var(String),
}

/// A resolved filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    /// Target matches a CSS selector (`window` / `document`: those targets).
    On(String),
    /// URL matches a glob.
    Url(String),
    /// XHR `readyState`.
    State(u8),
    /// Created by an event matching the term.
    From(Box<Term>),
    /// Timer delay comparison, in ms.
    Delay(Cmp, u64),
    /// How a script loads.
    Loading(Loading),
}

/// A resolved term: subject and conditions (`negated`, filter).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Kind, type or variable.
    pub subject: Subject,
    /// Conditions that all hold (a `true` flag negates).
    pub filters: Vec<(bool, Filter)>,
}

/// Any of the terms.
pub type Pred = Vec<Term>;

/// A resolved expiration condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// DOMContentLoaded has run.
    Parsed,
    /// The window's load event has run.
    Loaded,
    /// The bound event has run.
    ArrivedVar(String),
    /// Some event matching the predicate has run (no variables inside).
    ArrivedMatch(Pred),
    /// Milliseconds after the rule was added.
    After(u64),
    /// A JavaScript expression over the page's state (index into [`Policy::js`]).
    Js(usize),
}

/// A checked rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// `policy:line`, how incidents and reports name the rule.
    pub id: String,
    /// Its line in the policy file.
    pub line: u32,
    /// The line as written.
    pub text: String,
    /// Begin or fork.
    pub op: Op,
    /// Dispatch, postpone or discard.
    pub action: Action,
    /// The operation predicate.
    pub pred: Pred,
    /// Name of the matched event for `then`.
    pub bind: Option<String>,
    /// Expires once any holds (empty: never).
    pub until: Vec<Expiry>,
    /// Removed the first time it is activated.
    pub once: bool,
    /// Template calls: name and argument variables.
    pub then: Vec<(String, Vec<String>)>,
}

/// A checked template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Parameter names.
    pub params: Vec<String>,
    /// Rules instantiated on each call.
    pub rules: Vec<Rule>,
}

/// A checked policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Its name (shipped name, or the file stem).
    pub name: String,
    /// Where it came from (a path, or `shipped:NAME`).
    pub source: String,
    /// Show the spinner while user input waits (option `spinner`).
    pub spinner: bool,
    /// Longest an event is held before it runs anyway (option `max-delay`).
    pub max_delay_ms: u64,
    /// URL globs of the pages it applies to (empty: every page).
    pub scopes: Vec<String>,
    /// The initial rules.
    pub rules: Vec<Rule>,
    /// Templates the rules may call (the file's and the prelude's that it uses).
    pub templates: BTreeMap<String, Template>,
    /// JavaScript expressions of `js` expirations.
    pub js: Vec<String>,
}

/// Default of `option max-delay`.
pub const DEFAULT_MAX_DELAY_MS: u64 = 10_000;

impl Policy {
    /// Every rule: the initial ones and those of the templates.
    fn all_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules
            .iter()
            .chain(self.templates.values().flat_map(|t| t.rules.iter()))
    }

    /// The kinds of the events a bound name may stand for: what the rules that bind one
    /// (`as NAME`) match. A template parameter gets what its callers bound, and every call
    /// passes a bound name, so the union over the binding rules covers them.
    fn bindable_kinds(&self) -> Vec<Kind> {
        let mut out = Vec::new();
        for r in self.all_rules().filter(|r| r.bind.is_some()) {
            for t in &r.pred {
                match &t.subject {
                    Subject::Kind(k) => out.push(*k),
                    Subject::Type(ty) if crate::kinds::forkable_type(ty) => {
                        out.extend([Kind::Img, Kind::Iframe]);
                    }
                    _ => {}
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The kinds of event some rule may postpone: named by a postpone rule on begin, or
    /// bound to a name such a rule names.
    pub fn postponable_kinds(&self) -> Vec<Kind> {
        let mut out = Vec::new();
        let mut by_name = false;
        for r in self
            .all_rules()
            .filter(|r| r.op == Op::Begin && r.action == Action::Postpone)
        {
            for t in &r.pred {
                match &t.subject {
                    Subject::Kind(k) => out.push(*k),
                    Subject::Var(_) => by_name = true,
                    Subject::Type(_) => {}
                }
            }
        }
        if by_name {
            out.extend(self.bindable_kinds());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The kinds of event whose creation or running some rule looks at (its predicate, a
    /// `from` filter, an `arrived(…)` pattern), bound names standing for what they may be
    /// bound to: the runtime must see the parser create these.
    pub fn watched_kinds(&self) -> Vec<Kind> {
        fn term_kinds(t: &Term, out: &mut Vec<Kind>, by_name: &mut bool) {
            match &t.subject {
                Subject::Kind(k) => out.push(*k),
                Subject::Var(_) => *by_name = true,
                Subject::Type(ty) if crate::kinds::forkable_type(ty) => {
                    out.extend([Kind::Img, Kind::Iframe]);
                }
                Subject::Type(_) => {}
            }
            for (_, f) in &t.filters {
                if let Filter::From(inner) = f {
                    term_kinds(inner, out, by_name);
                }
            }
        }
        let mut out = Vec::new();
        let mut by_name = false;
        for r in self.all_rules() {
            for t in &r.pred {
                term_kinds(t, &mut out, &mut by_name);
            }
            for e in &r.until {
                if let Expiry::ArrivedMatch(p) = e {
                    for t in p {
                        term_kinds(t, &mut out, &mut by_name);
                    }
                }
            }
        }
        if by_name {
            out.extend(self.bindable_kinds());
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether any rule (initial or from a template) may postpone script executions: then
    /// scripts are requested so the proxy can hold them.
    pub fn may_postpone_scripts(&self) -> bool {
        self.postponable_kinds().contains(&Kind::Script)
    }
}
