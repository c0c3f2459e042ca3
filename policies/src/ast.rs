//! The syntax tree of a policy file, as written (names not yet resolved).

use crate::diag::Span;

/// A name and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// What a rule does with the events it matches (ordered: the strongest active rule wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Let the event run.
    Dispatch,
    /// Hold it and emit it again later.
    Postpone,
    /// Drop it (user input only).
    Discard,
}

impl Action {
    /// The keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Dispatch => "dispatch",
            Action::Postpone => "postpone",
            Action::Discard => "discard",
        }
    }
}

/// Which operation a rule looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `begin(u)`: an event is about to run its handlers.
    Begin,
    /// `fork(·, v)`: the running event creates an event `v` that runs later.
    Fork,
}

/// Comparison in a `delay` filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
}

impl Cmp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Eq => "=",
        }
    }
}

/// One condition on an event besides its kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// `on "selector"`: the event's target matches a CSS selector (`window`, `document` name
    /// those targets).
    On(String),
    /// `url "pattern"`: the request or script URL matches a glob (`*` any run of characters).
    Url(String),
    /// `state N`: an XHR event at this `readyState`.
    State(u64),
    /// `from TERM`: the event was created by an event matching TERM.
    From(Box<Term>),
    /// `delay OP DURATION`: a timer's delay.
    Delay(Cmp, u64),
    /// `blocking`, `async`, `defer` or `inserted`: how a script loads.
    Loading(crate::kinds::Loading),
}

/// A filter, possibly negated with `not`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// `not` before it.
    pub negated: bool,
    /// The condition.
    pub kind: FilterKind,
    /// Where it starts.
    pub span: Span,
}

/// What a term starts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Base {
    /// A name: a kind (`user`, `timer`, `xhr`, …), an event type (`click`), a `let` name or an
    /// event bound by `as` or a template parameter.
    Name(Ident),
    /// A quoted event type (custom events).
    Custom(String, Span),
}

/// One alternative of an event predicate: a base and filters that all hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// The kind, type or variable.
    pub base: Base,
    /// Further conditions.
    pub filters: Vec<Filter>,
    /// Where it starts.
    pub span: Span,
}

/// An event predicate: any of the terms (comma-separated).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pred {
    /// The alternatives.
    pub terms: Vec<Term>,
    /// Where it starts.
    pub span: Span,
}

/// One expiration condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expiry {
    /// `parsed`: DOMContentLoaded has run.
    Parsed(Span),
    /// `loaded`: the window's load event has run.
    Loaded(Span),
    /// `arrived(P)`: an event matching P (or the bound event P) has run.
    Arrived(Pred),
    /// `after D`: D after the rule was added.
    After(u64, Span),
    /// `js "expr"`: a JavaScript expression of the page's state is truthy.
    Js(String, Span),
    /// `never` (the default).
    Never(Span),
}

/// A template call in `then`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The template.
    pub name: Ident,
    /// Bound events passed to it.
    pub args: Vec<Ident>,
}

/// A rule (q, s, t, a, r).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Where it starts.
    pub span: Span,
    /// The line as written (comment stripped).
    pub text: String,
    /// The operation it looks at.
    pub op: Op,
    /// What it does to matching begin operations (`on` rules: dispatch).
    pub action: Action,
    /// The operation predicate's event part.
    pub pred: Pred,
    /// `as NAME`: the matched event (begin) or the created event (fork), for `then`.
    pub bind: Option<Ident>,
    /// Expiration: the rule is inactive once any holds. Empty: never.
    pub until: Vec<Expiry>,
    /// Scope `once`: removed the first time it is activated.
    pub once: bool,
    /// Extension: rules added each time it is activated.
    pub then: Vec<Call>,
    /// Written as `on …` (an observer) rather than with an action word.
    pub observer: bool,
}

/// `template NAME(params):` and its indented rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// The name.
    pub name: Ident,
    /// Parameters (events).
    pub params: Vec<Ident>,
    /// The rules, instantiated with the arguments.
    pub rules: Vec<Rule>,
}

/// `let NAME = predicate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Let {
    /// The name.
    pub name: Ident,
    /// What it stands for.
    pub pred: Pred,
}

/// `option NAME VALUE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    /// `on` / `off`.
    Switch(bool),
    /// A duration in ms.
    Duration(u64),
}

/// An option line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionLine {
    /// The option's name.
    pub name: Ident,
    /// Its value.
    pub value: OptionValue,
}

/// A parsed policy file.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct File {
    /// `option` lines.
    pub options: Vec<OptionLine>,
    /// `scope` patterns with their positions.
    pub scopes: Vec<(String, Span)>,
    /// `let` definitions.
    pub lets: Vec<Let>,
    /// Templates.
    pub templates: Vec<Template>,
    /// Top-level rules.
    pub rules: Vec<Rule>,
}
