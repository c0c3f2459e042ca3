//! The validator: resolves names (kinds, event types, `let`s, bound events), expands `let`s,
//! checks template calls, and rejects rules that cannot mean what they say (discarding a
//! system event, forking user input, a filter that does not apply to its kind, an `on` rule
//! that adds nothing). Everything it reports has a line and column.

use crate::ast::{self, Action, Base, Expiry as AExpiry, FilterKind, Op, OptionValue};
use crate::diag::{Diagnostic, Span, suggest};
use crate::ir::{self, DEFAULT_MAX_DELAY_MS, Expiry, Filter, Policy, Subject, Term};
use crate::jscheck;
use crate::kinds::{self, Kind};
use std::collections::{BTreeMap, HashSet};

struct Ctx<'a> {
    file: &'a ast::File,
    prelude: Option<&'a ast::File>,
    diags: &'a mut Vec<Diagnostic>,
    js: Vec<String>,
    /// Templates referenced (transitively), to copy into the policy.
    used: BTreeMap<String, ir::Template>,
}

/// Checks `file` (named `name`, from `source`) against the prelude; diagnostics go to
/// `diags`. Returns the policy when there was no error.
pub fn check(
    name: &str,
    source: &str,
    file: &ast::File,
    prelude: Option<&ast::File>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Policy> {
    let errors_before = count_errors(diags);
    let mut cx = Ctx {
        file,
        prelude,
        diags,
        js: Vec::new(),
        used: BTreeMap::new(),
    };
    let mut spinner = true;
    let mut max_delay_ms = DEFAULT_MAX_DELAY_MS;
    let mut seen_options = HashSet::new();
    for o in &file.options {
        if !seen_options.insert(o.name.name.clone()) {
            cx.diags.push(Diagnostic::error(
                o.name.span,
                format!("option `{}` is set twice", o.name.name),
            ));
        }
        match (o.name.name.as_str(), &o.value) {
            ("spinner", OptionValue::Switch(on)) => spinner = *on,
            ("max-delay", OptionValue::Duration(ms)) => {
                if !(100..=600_000).contains(ms) {
                    cx.diags.push(Diagnostic::error(
                        o.name.span,
                        "max-delay must be between 100ms and 10m",
                    ));
                }
                max_delay_ms = *ms;
            }
            ("spinner", _) => cx
                .diags
                .push(Diagnostic::error(o.name.span, "spinner is `on` or `off`")),
            ("max-delay", _) => cx.diags.push(Diagnostic::error(
                o.name.span,
                "max-delay is a duration such as 10s",
            )),
            (other, _) => {
                let hint = suggest(other, ["spinner", "max-delay"].into_iter())
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                cx.diags.push(Diagnostic::error(
                    o.name.span,
                    format!("unknown option `{other}`{hint}: options are spinner and max-delay"),
                ));
            }
        }
    }
    let mut scopes = Vec::new();
    for (s, span) in &file.scopes {
        if s.trim().is_empty() {
            cx.diags.push(Diagnostic::error(
                *span,
                "an empty URL pattern matches nothing",
            ));
        } else {
            scopes.push(s.clone());
        }
    }
    // Definitions: duplicates and clashes with the prelude and the vocabulary.
    let mut names = HashSet::new();
    for l in &file.lets {
        cx.definition(&l.name, &mut names, "let");
    }
    for t in &file.templates {
        cx.definition(&t.name, &mut names, "template");
        let mut params = HashSet::new();
        for p in &t.params {
            if !params.insert(p.name.clone()) {
                cx.diags.push(Diagnostic::error(
                    p.span,
                    format!("parameter `{}` appears twice", p.name),
                ));
            } else {
                cx.not_a_vocabulary_word(p);
            }
        }
    }
    for t in &file.templates {
        let params: Vec<String> = t.params.iter().map(|p| p.name.clone()).collect();
        let rules: Vec<ir::Rule> = t
            .rules
            .iter()
            .filter_map(|r| cx.rule(name, r, &params))
            .collect();
        cx.used
            .insert(t.name.name.clone(), ir::Template { params, rules });
    }
    let rules: Vec<ir::Rule> = file
        .rules
        .iter()
        .filter_map(|r| cx.rule(name, r, &[]))
        .collect();
    if file.rules.is_empty() && count_errors(cx.diags) == 0 {
        cx.diags.push(Diagnostic::error(
            Span::new(1, 1),
            "the policy has no rules",
        ));
    }
    // Prelude templates the file calls (transitively).
    let mut todo: Vec<String> = rules
        .iter()
        .chain(cx.used.values().flat_map(|t| t.rules.iter()))
        .flat_map(|r| r.then.iter().map(|(n, _)| n.clone()))
        .collect();
    while let Some(n) = todo.pop() {
        if cx.used.contains_key(&n) {
            continue;
        }
        let Some(pt) = cx
            .prelude
            .and_then(|p| p.templates.iter().find(|t| t.name.name == n))
        else {
            continue;
        };
        let params: Vec<String> = pt.params.iter().map(|p| p.name.clone()).collect();
        let mut inner = Vec::new();
        let saved_file = cx.file;
        cx.file = cx.prelude.unwrap_or(saved_file);
        for r in &pt.rules {
            if let Some(ir) = cx.rule("prelude", r, &params) {
                inner.push(ir);
            }
        }
        cx.file = saved_file;
        for r in &inner {
            for (c, _) in &r.then {
                todo.push(c.clone());
            }
        }
        cx.used.insert(
            n,
            ir::Template {
                params,
                rules: inner,
            },
        );
    }
    if count_errors(cx.diags) > errors_before {
        return None;
    }
    Some(Policy {
        name: name.to_string(),
        source: source.to_string(),
        spinner,
        max_delay_ms,
        scopes,
        rules,
        templates: cx.used,
        js: cx.js,
    })
}

fn count_errors(d: &[Diagnostic]) -> usize {
    d.iter()
        .filter(|x| x.severity == crate::diag::Severity::Error)
        .count()
}

/// Where a name was found.
enum Found<'a> {
    Var,
    Let(&'a ast::Let),
    Kind(Kind),
    Type,
}

impl<'a> Ctx<'a> {
    fn definition(&mut self, id: &ast::Ident, names: &mut HashSet<String>, what: &str) {
        if !names.insert(id.name.clone()) {
            self.diags.push(Diagnostic::error(
                id.span,
                format!("`{}` is defined twice", id.name),
            ));
            return;
        }
        if let Some(p) = self.prelude
            && (p.lets.iter().any(|l| l.name.name == id.name)
                || p.templates.iter().any(|t| t.name.name == id.name))
        {
            self.diags.push(Diagnostic::error(
                id.span,
                format!(
                    "{what} `{}` is already defined by the standard templates; choose another name",
                    id.name
                ),
            ));
            return;
        }
        self.not_a_vocabulary_word(id);
    }

    fn not_a_vocabulary_word(&mut self, id: &ast::Ident) {
        if Kind::parse(&id.name).is_some() || kinds::known_type(&id.name) {
            self.diags.push(Diagnostic::error(
                id.span,
                format!(
                    "`{}` already names an event kind or type; choose another name",
                    id.name
                ),
            ));
        }
    }

    fn find_let(&self, name: &str) -> Option<&'a ast::Let> {
        self.file
            .lets
            .iter()
            .find(|l| l.name.name == name)
            .or_else(|| {
                self.prelude
                    .and_then(|p| p.lets.iter().find(|l| l.name.name == name))
            })
    }

    fn template_arity(&self, name: &str) -> Option<usize> {
        self.file
            .templates
            .iter()
            .find(|t| t.name.name == name)
            .or_else(|| {
                self.prelude
                    .and_then(|p| p.templates.iter().find(|t| t.name.name == name))
            })
            .map(|t| t.params.len())
    }

    fn lookup(&self, name: &str, vars: &[String]) -> Option<Found<'a>> {
        if vars.iter().any(|v| v == name) {
            return Some(Found::Var);
        }
        if let Some(l) = self.find_let(name) {
            return Some(Found::Let(l));
        }
        if let Some(k) = Kind::parse(name) {
            return Some(Found::Kind(k));
        }
        if kinds::known_type(name) {
            return Some(Found::Type);
        }
        None
    }

    fn rule(&mut self, policy: &str, r: &ast::Rule, params: &[String]) -> Option<ir::Rule> {
        let before = count_errors(self.diags);
        let pred = self.pred(&r.pred, params, &mut Vec::new());
        // The operation predicate's own conditions.
        for t in &pred {
            match (&t.subject, r.op) {
                (Subject::Var(v), Op::Fork) => self.diags.push(Diagnostic::error(
                    r.pred.span,
                    format!("`{v}` is one event that already exists: `on fork` cannot see it being created (use `on begin {v}`)"),
                )),
                (Subject::Kind(k), Op::Fork) if !k.forkable() => self.diags.push(Diagnostic::error(
                    r.pred.span,
                    "user input is not created by the page: `on fork` never sees it (use `on begin user`)",
                )),
                (Subject::Type(ty), Op::Fork) if !kinds::forkable_type(ty) => self.diags.push(Diagnostic::error(
                    r.pred.span,
                    format!("`{ty}` events are not created by page code the controller sees: `on fork` never matches them (forks are timers, intervals, animation-frame, idle-callback, xhr, fetch, script, inline-script, img, iframe, and load/error of images and iframes)"),
                )),
                _ => {}
            }
        }
        if r.action == Action::Discard {
            for t in &pred {
                let user = match &t.subject {
                    Subject::Kind(Kind::User) => true,
                    Subject::Type(ty) => kinds::input_type(ty),
                    _ => false,
                };
                if !user {
                    self.diags.push(Diagnostic::error(
                        r.pred.span,
                        "`discard` drops the event for good: only user input may be discarded (the user can repeat it); a system event would be lost, so use `postpone`",
                    ));
                    break;
                }
            }
        }
        if r.op == Op::Begin
            && r.action == Action::Postpone
            && r.until
                .iter()
                .any(|e| matches!(e, AExpiry::Parsed(_) | AExpiry::Loaded(_)))
            && pred.iter().any(stalls_parser)
        {
            self.diags.push(Diagnostic::warning(
                r.span,
                "the parser cannot finish while it waits for a parser-blocking or inline script: held until `parsed` or `loaded`, such a script runs only at the liveness limit (max-delay)",
            ));
        }
        if r.observer && r.then.is_empty() {
            self.diags.push(Diagnostic::error(
                r.span,
                "an `on` rule only adds rules: give it `then …` (or use postpone/discard)",
            ));
        }
        let bind = r.bind.as_ref().map(|b| {
            if params.contains(&b.name) || self.find_let(&b.name).is_some() {
                self.diags.push(Diagnostic::error(
                    b.span,
                    format!("`{}` is already a name here; choose another", b.name),
                ));
            } else {
                self.not_a_vocabulary_word(b);
            }
            if r.then
                .iter()
                .all(|c| c.args.iter().all(|a| a.name != b.name))
            {
                self.diags.push(Diagnostic::warning(
                    b.span,
                    format!("`{}` is bound but no template call uses it", b.name),
                ));
            }
            b.name.clone()
        });
        let mut until = Vec::new();
        for e in &r.until {
            if let Some(x) = self.expiry(e, params) {
                until.push(x);
            }
        }
        if r.until.iter().all(|e| matches!(e, AExpiry::Never(_)))
            && r.action != Action::Dispatch
            && !r.once
        {
            self.diags.push(Diagnostic::warning(
                r.span,
                "this rule never expires: every event it matches waits until the liveness limit (max-delay) and is then reported",
            ));
        }
        let mut call_vars: Vec<String> = params.to_vec();
        if let Some(b) = &bind {
            call_vars.push(b.clone());
        }
        let mut then = Vec::new();
        for c in &r.then {
            match self.template_arity(&c.name.name) {
                None => {
                    let all: Vec<String> = self
                        .file
                        .templates
                        .iter()
                        .chain(
                            self.prelude
                                .map(|p| p.templates.as_slice())
                                .unwrap_or_default(),
                        )
                        .map(|t| t.name.name.clone())
                        .collect();
                    let hint = suggest(&c.name.name, all.iter().map(String::as_str))
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    self.diags.push(Diagnostic::error(
                        c.name.span,
                        format!("no template `{}`{hint}; the standard ones are waitfor, waitrec, order and ordernext", c.name.name),
                    ));
                }
                Some(n) if n != c.args.len() => self.diags.push(Diagnostic::error(
                    c.name.span,
                    format!(
                        "template `{}` takes {n} event(s), {} given",
                        c.name.name,
                        c.args.len()
                    ),
                )),
                Some(_) => {}
            }
            for a in &c.args {
                if !call_vars.contains(&a.name) {
                    let how = if r.bind.is_none() {
                        " (name the matched event with `as NAME` first)"
                    } else {
                        ""
                    };
                    self.diags.push(Diagnostic::error(
                        a.span,
                        format!("`{}` is not a bound event here{how}", a.name),
                    ));
                }
            }
            then.push((
                c.name.name.clone(),
                c.args.iter().map(|a| a.name.clone()).collect(),
            ));
        }
        if count_errors(self.diags) > before {
            return None;
        }
        Some(ir::Rule {
            id: format!("{policy}:{}", r.span.line),
            line: r.span.line,
            text: r.text.clone(),
            op: r.op,
            action: r.action,
            pred,
            bind,
            until,
            once: r.once,
            then,
        })
    }

    fn expiry(&mut self, e: &AExpiry, vars: &[String]) -> Option<Expiry> {
        Some(match e {
            AExpiry::Parsed(_) => Expiry::Parsed,
            AExpiry::Loaded(_) => Expiry::Loaded,
            AExpiry::Never(_) => return None,
            AExpiry::After(ms, span) => {
                if *ms == 0 {
                    self.diags.push(Diagnostic::error(
                        *span,
                        "`after 0ms` expires at once: the rule would do nothing",
                    ));
                }
                Expiry::After(*ms)
            }
            AExpiry::Js(src, span) => match jscheck::check_expression(src) {
                Ok(()) => {
                    self.js.push(src.clone());
                    Expiry::Js(self.js.len() - 1)
                }
                Err((offset, why)) => {
                    let col = span.col + 1 + u32::try_from(offset).unwrap_or(0);
                    self.diags.push(Diagnostic::error(
                        Span::new(span.line, col),
                        format!("JavaScript expression: {why}"),
                    ));
                    return None;
                }
            },
            AExpiry::Arrived(p) => {
                if let [t] = p.terms.as_slice()
                    && t.filters.is_empty()
                    && let Base::Name(n) = &t.base
                    && vars.contains(&n.name)
                {
                    return Some(Expiry::ArrivedVar(n.name.clone()));
                }
                let pred = self.pred(p, &[], &mut Vec::new());
                if pred.iter().any(term_mentions_var) {
                    return None;
                }
                Expiry::ArrivedMatch(pred)
            }
        })
    }

    fn pred(&mut self, p: &ast::Pred, vars: &[String], expanding: &mut Vec<String>) -> ir::Pred {
        let mut out = Vec::new();
        for t in &p.terms {
            out.extend(self.term(t, vars, expanding));
        }
        out
    }

    /// One written term; a `let` name expands to its terms (each with the written filters).
    fn term(&mut self, t: &ast::Term, vars: &[String], expanding: &mut Vec<String>) -> Vec<Term> {
        let filters: Vec<(bool, Filter)> = t
            .filters
            .iter()
            .filter_map(|f| self.filter(f, vars, expanding).map(|x| (f.negated, x)))
            .collect();
        let subjects: Vec<Term> = match &t.base {
            Base::Custom(s, span) => {
                if s.is_empty() {
                    self.diags
                        .push(Diagnostic::error(*span, "an event type cannot be empty"));
                }
                vec![Term {
                    subject: Subject::Type(s.clone()),
                    filters: Vec::new(),
                }]
            }
            Base::Name(id) => match self.lookup(&id.name, vars) {
                Some(Found::Var) => vec![Term {
                    subject: Subject::Var(id.name.clone()),
                    filters: Vec::new(),
                }],
                Some(Found::Kind(k)) => vec![Term {
                    subject: Subject::Kind(k),
                    filters: Vec::new(),
                }],
                Some(Found::Type) => vec![Term {
                    subject: Subject::Type(id.name.clone()),
                    filters: Vec::new(),
                }],
                Some(Found::Let(l)) => {
                    if expanding.contains(&id.name) {
                        self.diags.push(Diagnostic::error(
                            id.span,
                            format!("`{}` is defined in terms of itself", id.name),
                        ));
                        return Vec::new();
                    }
                    expanding.push(id.name.clone());
                    let inner = self.pred(&l.pred, &[], expanding);
                    expanding.pop();
                    inner
                }
                None => {
                    let mut candidates: Vec<String> =
                        kinds::all_names().map(str::to_string).collect();
                    candidates.extend(vars.iter().cloned());
                    candidates.extend(self.file.lets.iter().map(|l| l.name.name.clone()));
                    let hint = suggest(&id.name, candidates.iter().map(String::as_str))
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    let msg = if vars.is_empty() && id.name.len() <= 2 {
                        format!(
                            "unknown event `{}`{hint}: a bound event can only be used inside a template",
                            id.name
                        )
                    } else {
                        format!(
                            "unknown event kind or type `{}`{hint} (quote custom event types: \"my-event\")",
                            id.name
                        )
                    };
                    self.diags.push(Diagnostic::error(id.span, msg));
                    return Vec::new();
                }
            },
        };
        let mut out = Vec::new();
        for mut s in subjects {
            for (neg, f) in &filters {
                if let Some(why) = misfit(&s.subject, f) {
                    self.diags.push(Diagnostic::error(t.span, why));
                }
                s.filters.push((*neg, f.clone()));
            }
            out.push(s);
        }
        out
    }

    fn filter(
        &mut self,
        f: &ast::Filter,
        vars: &[String],
        expanding: &mut Vec<String>,
    ) -> Option<Filter> {
        Some(match &f.kind {
            FilterKind::On(sel) => {
                if let Err(why) = check_selector(sel) {
                    self.diags.push(Diagnostic::error(f.span, why));
                    return None;
                }
                Filter::On(sel.clone())
            }
            FilterKind::Url(u) => {
                if u.is_empty() {
                    self.diags.push(Diagnostic::error(
                        f.span,
                        "an empty URL pattern matches nothing",
                    ));
                    return None;
                }
                Filter::Url(u.clone())
            }
            FilterKind::State(n) => {
                if *n > 4 {
                    self.diags
                        .push(Diagnostic::error(f.span, "readyState is 0 to 4"));
                    return None;
                }
                Filter::State(u8::try_from(*n).unwrap_or(4))
            }
            FilterKind::From(t) => {
                let mut ts = self.term(t, vars, expanding);
                if ts.len() != 1 {
                    if !ts.is_empty() {
                        self.diags.push(Diagnostic::error(
                            f.span,
                            "`from` takes one kind, type or event (not a list)",
                        ));
                    }
                    return None;
                }
                Filter::From(Box::new(ts.remove(0)))
            }
            FilterKind::Delay(c, ms) => Filter::Delay(*c, *ms),
            FilterKind::Loading(l) => Filter::Loading(*l),
        })
    }
}

/// Why filter `f` cannot apply to `s`, if it cannot.
fn misfit(s: &Subject, f: &Filter) -> Option<String> {
    let kind = match s {
        Subject::Kind(k) => Some(*k),
        _ => None,
    };
    match f {
        Filter::On(_) => match kind {
            Some(k) if !k.has_element() => Some(format!(
                "`on` needs an element target: {} have none",
                k.describe()
            )),
            _ => None,
        },
        Filter::Url(_) => match (kind, s) {
            (Some(Kind::Xhr | Kind::Fetch | Kind::Script | Kind::Img | Kind::Iframe), _) => None,
            (_, Subject::Type(t)) if matches!(t.as_str(), "load" | "error" | "abort") => None,
            (_, Subject::Var(_)) => None,
            (Some(Kind::InlineScript), _) => Some(
                "an inline script has no URL of its own: name it with `on \"selector\"`"
                    .to_string(),
            ),
            _ => Some(
                "`url` applies to xhr, fetch, script, img, iframe and load/error events"
                    .to_string(),
            ),
        },
        Filter::State(_) => match (kind, s) {
            (Some(Kind::Xhr), _) => None,
            (_, Subject::Type(t)) if t == "readystatechange" => None,
            _ => Some("`state` (readyState) applies to xhr".to_string()),
        },
        Filter::Delay(..) => match kind {
            Some(Kind::Timer | Kind::Interval) => None,
            _ => Some("`delay` applies to timer and interval".to_string()),
        },
        Filter::Loading(l) => match (kind, s) {
            (Some(Kind::Script), _) | (_, Subject::Var(_)) => None,
            _ => Some(format!(
                "`{}` says how an external script loads: it applies to script",
                l.as_str()
            )),
        },
        Filter::From(_) => None,
    }
}

/// Whether events matching `t` may be scripts the parser waits for (inline scripts, external
/// ones not said to load otherwise).
fn stalls_parser(t: &Term) -> bool {
    use crate::kinds::Loading;
    match t.subject {
        Subject::Kind(Kind::InlineScript) => true,
        Subject::Kind(Kind::Script) => t.filters.iter().all(|(neg, f)| match f {
            Filter::Loading(l) => (*l == Loading::Blocking) != *neg,
            _ => true,
        }),
        _ => false,
    }
}

fn term_mentions_var(t: &Term) -> bool {
    matches!(t.subject, Subject::Var(_))
        || t.filters
            .iter()
            .any(|(_, f)| matches!(f, Filter::From(inner) if term_mentions_var(inner)))
}

/// A light check of a CSS selector (the browser has the last word; a selector it rejects
/// matches nothing): not empty, brackets and quotes balanced.
fn check_selector(sel: &str) -> Result<(), String> {
    if sel.trim().is_empty() {
        return Err("an empty selector matches nothing".into());
    }
    let mut stack = Vec::new();
    let mut quote: Option<char> = None;
    for c in sel.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '(' => stack.push(c),
                ']' if stack.pop() != Some('[') => {
                    return Err("unbalanced `]` in the selector".into());
                }
                ')' if stack.pop() != Some('(') => {
                    return Err("unbalanced `)` in the selector".into());
                }
                _ => {}
            },
        }
    }
    if quote.is_some() || !stack.is_empty() {
        return Err("unclosed quote or bracket in the selector".into());
    }
    Ok(())
}
