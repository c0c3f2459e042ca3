//! The compiler: checked policies to the JSON the runtime loads (`docs/policies.md`,
//! "Compiled form"), plus the JavaScript expressions of `js` expirations, which the runtime
//! renders into its script as functions (no `eval`, so pages with a strict CSP work).

use crate::ast::{Action, Cmp, Op};
use crate::ir::{Expiry, Filter, Policy, Rule, Subject, Term};
use crate::kinds::{INDIRECT_TYPES, Kind, USER_TYPES};
use globset::{GlobBuilder, GlobMatcher};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::HashMap;

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
    /// What of the parser's own resources some policy may postpone, on any page.
    pub gates: ParserGates,
    /// What of them the proxy must make holdable in a document, by the document's URL: only
    /// pages in the scope of a policy that may postpone them (on other pages the runtime
    /// enforces nothing, so nothing would release a hold).
    pub document_gates: DocumentGates,
    /// The largest `max-delay` of the policies (the proxy's own bound on a held script).
    pub max_delay_ms: u64,
}

/// The parser's resources a policy may postpone, which the proxy makes holdable in every
/// document it serves (`docs/proxy.md`, "Parser gates"): external scripts and images by a
/// hold marker in their URL, inline scripts by holding the document's rest at the script.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParserGates {
    /// `<script src>` in the document.
    pub scripts: bool,
    /// Inline classic `<script>` in the document.
    pub inline_scripts: bool,
    /// `<img src>` (and `srcset`) in the document.
    pub images: bool,
}

impl ParserGates {
    /// Whether anything is gated.
    pub fn any(self) -> bool {
        self.scripts || self.inline_scripts || self.images
    }

    fn of(policies: &[Policy]) -> ParserGates {
        let kinds: Vec<Kind> = policies
            .iter()
            .flat_map(Policy::postponable_kinds)
            .collect();
        ParserGates {
            scripts: kinds.contains(&Kind::Script),
            inline_scripts: kinds.contains(&Kind::InlineScript),
            images: kinds.contains(&Kind::Img),
        }
    }

    fn union(self, other: ParserGates) -> ParserGates {
        ParserGates {
            scripts: self.scripts || other.scripts,
            inline_scripts: self.inline_scripts || other.inline_scripts,
            images: self.images || other.images,
        }
    }
}

/// The parser gates of a document by its URL: the union over the policies whose scope takes
/// the page in (as the runtime decides which policies apply to a page, by the same globs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DocumentGates {
    /// Each policy that may postpone some of the parser's resources: its scope globs (none:
    /// every page) and what it may postpone.
    by_policy: Vec<(Vec<String>, ParserGates)>,
}

impl DocumentGates {
    fn of(policies: &[Policy]) -> DocumentGates {
        DocumentGates {
            by_policy: policies
                .iter()
                .map(|p| (p.scopes.clone(), ParserGates::of(std::slice::from_ref(p))))
                .filter(|(_, g)| g.any())
                .collect(),
        }
    }

    /// What a document at `url` makes holdable.
    pub fn for_page(&self, url: &str) -> ParserGates {
        self.by_policy
            .iter()
            .filter(|(scopes, _)| scopes.is_empty() || scopes.iter().any(|g| glob_matches(g, url)))
            .fold(ParserGates::default(), |acc, (_, g)| acc.union(*g))
    }

    /// Whether some page makes something holdable.
    pub fn any(&self) -> bool {
        !self.by_policy.is_empty()
    }
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
    let gates = ParserGates::of(policies);
    let watched: Vec<&str> = {
        let mut k: Vec<Kind> = policies.iter().flat_map(Policy::watched_kinds).collect();
        k.sort_unstable();
        k.dedup();
        k.into_iter()
            .filter(|k| {
                matches!(
                    k,
                    Kind::Script | Kind::InlineScript | Kind::Img | Kind::Iframe
                )
            })
            .map(Kind::as_str)
            .collect()
    };
    Compiled {
        json: json!({
            "version": COMPILED_VERSION,
            "userTypes": USER_TYPES,
            "indirectTypes": INDIRECT_TYPES,
            "postponesScripts": policies.iter().any(Policy::may_postpone_scripts),
            "parser": {
                "watch": watched,
                "gates": {
                    "script": gates.scripts,
                    "inline": gates.inline_scripts,
                    "img": gates.images,
                },
            },
            "policies": out,
        }),
        js,
        gates,
        document_gates: DocumentGates::of(policies),
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
                        Filter::Loading(l) => json!({"loading": l.as_str()}),
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

/// Whether `url` matches `glob` (the same rule as the runtime's regular expression: `*` is any
/// run of characters, `/` and `.` included; everything else is literal).
pub fn glob_matches(glob: &str, url: &str) -> bool {
    // The trace simulation asks once per event and filter: each glob is compiled once per
    // thread. A glob that does not compile (not expected: only `*` is left special) matches
    // nothing, as the runtime's invalid expressions do.
    thread_local! {
        static COMPILED: RefCell<HashMap<String, Option<GlobMatcher>>> =
            RefCell::new(HashMap::new());
    }
    COMPILED.with(|compiled| {
        let mut compiled = compiled.borrow_mut();
        if !compiled.contains_key(glob) {
            if compiled.len() >= 1024 {
                compiled.clear();
            }
            compiled.insert(glob.to_string(), url_glob(glob));
        }
        compiled
            .get(glob)
            .and_then(Option::as_ref)
            .is_some_and(|m| m.is_match(url))
    })
}

/// `glob` as a globset matcher with the policies' meaning: globset's other metacharacters
/// (`?`, `[…]`, `{a,b}`, `\`) are literal, as `?` in a query string must be, and a run of `*`
/// is one `*` (globset reads `/**/` as "any number of directories", which may be none).
fn url_glob(glob: &str) -> Option<GlobMatcher> {
    let mut pattern = String::with_capacity(glob.len() + 8);
    for (i, part) in glob.split('*').enumerate() {
        // `escape` never leaves a bare `*`: a trailing one is ours.
        if i > 0 && !pattern.ends_with('*') {
            pattern.push('*');
        }
        pattern.push_str(&globset::escape(part));
    }
    GlobBuilder::new(&pattern)
        .literal_separator(false)
        .backslash_escape(false)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
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
        // Only `*` is special: globset's other metacharacters are literal.
        assert!(glob_matches("https://a.test/?q=*", "https://a.test/?q=1"));
        assert!(!glob_matches("https://a.test/?q=*", "https://a.test/xq=1"));
        assert!(glob_matches("*/[id]/{x,y}\\*", "/a/[id]/{x,y}\\z"));
        assert!(!glob_matches("*/[id]/*", "/a/i/b"));
        assert!(!glob_matches("*/{x,y}", "/x"));
        // `**` is `*`: `/**/` needs two slashes, `**/` one.
        assert!(!glob_matches("https://a.test/**/x", "https://a.test/x"));
        assert!(glob_matches("https://a.test/**/x", "https://a.test//x"));
        assert!(!glob_matches("**/x", "x"));
        assert!(glob_matches("", ""));
        assert!(!glob_matches("", "x"));
    }

    /// The rule before globset: `*` any run of characters, the rest literal.
    fn old_glob_matches(glob: &str, url: &str) -> bool {
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

    proptest::proptest! {
        /// globset with the policies' escaping decides as the hand-written matcher did, over
        /// the characters that could mean something to either.
        #[test]
        fn globset_agrees_with_the_old_matcher(
            glob in "[a/.*?\\[\\]{},!é\\\\\n]{0,8}",
            url in "[a/.*?\\[\\]{},!é\\\\\n]{0,10}",
        ) {
            proptest::prop_assert_eq!(glob_matches(&glob, &url), old_glob_matches(&glob, &url));
        }
    }
}
