//! The compiler: checked policies to the JSON the runtime loads (`docs/policies.md`,
//! "Compiled form"), plus the JavaScript expressions of `js` expirations, which the runtime
//! renders into its script as functions (no `eval`, so pages with a strict CSP work).

use crate::ast::{Action, Cmp, Op};
use crate::ir::{Expiry, Filter, Policy, Rule, Subject, Term};
use crate::kinds::{INDIRECT_TYPES, USER_TYPES};
use serde_json::{Value, json};

/// Version of the compiled form.
pub const COMPILED_VERSION: u32 = 1;

/// What the runtime is given.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    /// The JSON object (`{"version":1,"userTypes":[…],"policies":[…]}`).
    pub json: Value,
    /// JavaScript expressions of `js` expirations, indexed by the `js` entries of the JSON.
    pub js: Vec<String>,
    /// Whether some rule may postpone inserted scripts (they are then requested so the proxy
    /// can hold them for the page that asked).
    pub postpones_scripts: bool,
    /// The largest `max-delay` of the policies (the proxy's own bound on a held script).
    pub max_delay_ms: u64,
}

/// Compiles `policies` (composed: the union of their rules, each policy on its own scope).
pub fn compile(policies: &[Policy]) -> Compiled {
    let mut js = Vec::new();
    let mut out = Vec::new();
    for p in policies {
        let offset = js.len();
        js.extend(p.js.iter().cloned());
        let templates: serde_json::Map<String, Value> = p
            .templates
            .iter()
            .map(|(name, t)| {
                (
                    name.clone(),
                    json!({
                        "params": t.params,
                        "rules": t.rules.iter().map(|r| rule(r, offset)).collect::<Vec<_>>(),
                    }),
                )
            })
            .collect();
        out.push(json!({
            "name": p.name,
            "source": p.source,
            "spinner": p.spinner,
            "maxDelayMs": p.max_delay_ms,
            "scope": p.scopes.iter().map(|g| glob_regex(g)).collect::<Vec<_>>(),
            "rules": p.rules.iter().map(|r| rule(r, offset)).collect::<Vec<_>>(),
            "templates": templates,
        }));
    }
    Compiled {
        json: json!({
            "version": COMPILED_VERSION,
            "userTypes": USER_TYPES,
            "indirectTypes": INDIRECT_TYPES,
            "postponesScripts": policies.iter().any(Policy::may_postpone_scripts),
            "policies": out,
        }),
        js,
        postpones_scripts: policies.iter().any(Policy::may_postpone_scripts),
        max_delay_ms: policies.iter().map(|p| p.max_delay_ms).max().unwrap_or(0),
    }
}

fn rule(r: &Rule, js_offset: usize) -> Value {
    json!({
        "id": r.id,
        "text": r.text,
        "op": match r.op { Op::Begin => "begin", Op::Fork => "fork" },
        "action": match r.action { Action::Dispatch => 0, Action::Postpone => 1, Action::Discard => 2 },
        "pred": r.pred.iter().map(term).collect::<Vec<_>>(),
        "bind": r.bind,
        "until": r.until.iter().map(|e| expiry(e, js_offset)).collect::<Vec<_>>(),
        "once": r.once,
        "then": r.then.iter().map(|(t, a)| json!({"t": t, "a": a})).collect::<Vec<_>>(),
    })
}

fn term(t: &Term) -> Value {
    let mut o = match &t.subject {
        Subject::Kind(k) => json!({"k": k.as_str()}),
        Subject::Type(ty) => json!({"k": "type", "type": ty}),
        Subject::Var(v) => json!({"k": "var", "var": v}),
    };
    if !t.filters.is_empty() {
        o["f"] = Value::Array(
            t.filters
                .iter()
                .map(|(neg, f)| {
                    let mut x = match f {
                        Filter::On(sel) => json!({"on": sel}),
                        Filter::Url(g) => json!({"url": glob_regex(g)}),
                        Filter::State(s) => json!({"state": s}),
                        Filter::From(inner) => json!({"from": term(inner)}),
                        Filter::Delay(c, ms) => json!({"delay": [cmp(*c), ms]}),
                    };
                    if *neg {
                        x["not"] = json!(true);
                    }
                    x
                })
                .collect(),
        );
    }
    o
}

fn cmp(c: Cmp) -> &'static str {
    c.as_str()
}

fn expiry(e: &Expiry, js_offset: usize) -> Value {
    match e {
        Expiry::Parsed => json!({"parsed": true}),
        Expiry::Loaded => json!({"loaded": true}),
        Expiry::ArrivedVar(v) => json!({"arrived": v}),
        Expiry::ArrivedMatch(p) => json!({"match": p.iter().map(term).collect::<Vec<_>>()}),
        Expiry::After(ms) => json!({"after": ms}),
        Expiry::Js(i) => json!({"js": i + js_offset}),
    }
}

/// A URL glob as an anchored regular expression: `*` matches any run of characters, the rest
/// literally.
pub fn glob_regex(glob: &str) -> String {
    let mut re = String::from("^");
    for c in glob.chars() {
        if c == '*' {
            re.push_str(".*");
        } else {
            if "\\^$.|?+()[]{}/".contains(c) {
                re.push('\\');
            }
            re.push(c);
        }
    }
    re.push('$');
    re
}

/// Whether `url` matches `glob` (the same rule as the runtime's regular expression).
pub fn glob_matches(glob: &str, url: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    if parts.len() == 1 {
        return glob == url;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !url.starts_with(first) || url.len() < first.len() + last.len() || !url.ends_with(last) {
        return false;
    }
    let mut rest = &url[first.len()..url.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert_eq!(
            glob_regex("https://a.test/*"),
            "^https:\\/\\/a\\.test\\/.*$"
        );
        assert!(glob_matches("*/checkout/*", "https://a.test/checkout/1"));
        assert!(glob_matches("https://a.test/*", "https://a.test/"));
        assert!(!glob_matches("https://a.test/*", "https://b.test/"));
        assert!(glob_matches("*a*b*", "xaxbx"));
        assert!(!glob_matches("*ab*ba*", "aba"));
        assert!(glob_matches("exact", "exact"));
    }
}
