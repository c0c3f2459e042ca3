//! Content-Security-Policy: letting Shepherd's runtime script load without weakening the
//! page's policy more than needed, and deciding which inline code may be rewritten without its
//! CSP status changing.
//!
//! Decisions (why, in `docs/instrumentation.md`):
//! - The runtime `<script src>` is injected before any `<meta http-equiv>` policy takes
//!   effect, so only header policies are adjusted, and only the directive that governs script
//!   elements (`script-src-elem`, else `script-src`, else `default-src`).
//! - Inline code is rewritten only when its permission does not depend on its bytes (no
//!   directive, a matching nonce, or an effective `'unsafe-inline'`). Code allowed by a hash
//!   is kept byte-identical, since its rewritten hash would not match.

use serde::Serialize;

/// Which header a policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CspHeader {
    /// `Content-Security-Policy`.
    Enforce,
    /// `Content-Security-Policy-Report-Only`.
    ReportOnly,
}

/// One modification of a page policy, reported to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CspChange {
    /// Which header was changed.
    pub header: CspHeader,
    /// Index of the policy in the header's comma-separated list.
    pub policy: usize,
    /// Directive modified.
    pub directive: String,
    /// Source expressions added.
    pub added: Vec<String>,
    /// Source expressions removed (only `'none'`, which cannot coexist with other sources).
    pub removed: Vec<String>,
    /// Why.
    pub reason: String,
}

/// Directives governing `<script>` elements, in fallback order.
pub(crate) const ELEM: &[&str] = &["script-src-elem", "script-src", "default-src"];
/// Directives governing `on*` attributes, in fallback order.
pub(crate) const ATTR: &[&str] = &["script-src-attr", "script-src", "default-src"];

/// A directive found in a policy: its name and the byte range of the whole directive text.
struct Directive<'a> {
    name: String,
    text: &'a str,
    start: usize,
}

impl Directive<'_> {
    fn sources(&self) -> impl Iterator<Item = &str> {
        self.text.split_ascii_whitespace().skip(1)
    }
    fn has(&self, keyword: &str) -> bool {
        self.sources().any(|s| s.eq_ignore_ascii_case(keyword))
    }
    fn has_nonce_or_hash(&self) -> bool {
        self.sources().any(|s| {
            let l = s.to_ascii_lowercase();
            l.starts_with("'nonce-")
                || l.starts_with("'sha256-")
                || l.starts_with("'sha384-")
                || l.starts_with("'sha512-")
        })
    }
    fn has_hash(&self) -> bool {
        self.sources().any(|s| {
            let l = s.to_ascii_lowercase();
            l.starts_with("'sha256-") || l.starts_with("'sha384-") || l.starts_with("'sha512-")
        })
    }
    /// `'unsafe-inline'` counts only without nonces, hashes and `'strict-dynamic'`.
    fn unsafe_inline_effective(&self) -> bool {
        self.has("'unsafe-inline'") && !self.has_nonce_or_hash() && !self.has("'strict-dynamic'")
    }
    fn matches_nonce(&self, nonce: &str) -> bool {
        !nonce.is_empty()
            && self.sources().any(|s| {
                s.len() == nonce.len() + 8
                    && s[..7].eq_ignore_ascii_case("'nonce-")
                    && s.ends_with('\'')
                    && &s[7..s.len() - 1] == nonce
            })
    }
}

fn directives(policy: &str) -> Vec<Directive<'_>> {
    let mut out: Vec<Directive<'_>> = Vec::new();
    let mut start = 0;
    for part in policy.split(';') {
        let name = part
            .split_ascii_whitespace()
            .next()
            .map(|n| n.to_ascii_lowercase());
        if let Some(name) = name
            && !out.iter().any(|d| d.name == name)
        {
            out.push(Directive {
                name,
                text: part,
                start,
            });
        }
        start += part.len() + 1;
    }
    out
}

fn effective<'a, 'b>(dirs: &'b [Directive<'a>], order: &[&str]) -> Option<&'b Directive<'a>> {
    order
        .iter()
        .find_map(|n| dirs.iter().find(|d| d.name == *n))
}

/// Parameters of the runtime-script adjustment.
#[derive(Debug, Clone)]
pub(crate) struct RuntimeSource<'a> {
    /// `scheme://host[:port]` of the page, when known.
    pub origin: Option<&'a str>,
    /// Path of the runtime script.
    pub path: &'a str,
    /// Nonce the runtime script carries when a nonce is needed.
    pub nonce: &'a str,
}

/// Adjusts one CSP header value so the runtime script at `origin + path` may load. Returns the
/// new value, the changes made, and whether the runtime `<script>` must carry the nonce.
pub fn adjust_csp_for_runtime(
    value: &str,
    header: CspHeader,
    origin: Option<&str>,
    path: &str,
    nonce: &str,
) -> (String, Vec<CspChange>, bool) {
    adjust(
        value,
        header,
        &RuntimeSource {
            origin,
            path,
            nonce,
        },
    )
}

pub(crate) fn adjust(
    value: &str,
    header: CspHeader,
    rt: &RuntimeSource<'_>,
) -> (String, Vec<CspChange>, bool) {
    let mut out = String::with_capacity(value.len() + 64);
    let mut changes = Vec::new();
    let mut needs_nonce = false;
    for (i, policy) in value.split(',').enumerate() {
        if i > 0 {
            out.push(',');
        }
        let mut policy = std::borrow::Cow::Borrowed(policy);
        // The runtime's script allowed, then its Trusted Types policy (each edit on the last).
        let edits: [&PolicyEditor<'_>; 2] = [&|p| adjust_policy(p, rt), &allow_runtime_policy];
        for edit in edits {
            if let Some((new, directive, added, removed, reason, nonce)) = edit(&policy) {
                policy = std::borrow::Cow::Owned(new);
                needs_nonce |= nonce;
                changes.push(CspChange {
                    header,
                    policy: i,
                    directive,
                    added,
                    removed,
                    reason,
                });
            }
        }
        out.push_str(&policy);
    }
    (out, changes, needs_nonce)
}

/// The Trusted Types policy the runtime creates (`ttPolicy` in `runtime-js/gates.js`, by this
/// name) to vouch for the script URLs and written markup it marks with hold markers under
/// `require-trusted-types-for`.
pub(crate) const RUNTIME_TT_POLICY: &str = "shepherd-runtime";

/// A `trusted-types` directive that names the policies a page may create, with the runtime's
/// added (`'none'` alone replaced: the page creates none either way). Without it the runtime
/// could not mark a script URL, and a repair policy could not hold the script.
fn allow_runtime_policy(policy: &str) -> Option<PolicyEdit> {
    let dirs = directives(policy);
    let d = dirs.iter().find(|d| d.name == "trusted-types")?;
    if d.has("*") || d.sources().any(|s| s == RUNTIME_TT_POLICY) {
        return None;
    }
    let (new, removed) = with_source(policy, d, RUNTIME_TT_POLICY);
    Some((
        new,
        d.name.clone(),
        vec![RUNTIME_TT_POLICY.to_string()],
        removed,
        "the runtime's Trusted Types policy vouches for the hold markers it adds to URLs"
            .to_string(),
        false,
    ))
}

type PolicyEdit = (String, String, Vec<String>, Vec<String>, String, bool);
/// One edit of a policy's text: what it becomes, or None to leave it.
type PolicyEditor<'a> = dyn Fn(&str) -> Option<PolicyEdit> + 'a;

/// `policy` with source `add` in directive `d` (a lone `'none'` replaced by it, since the two
/// cannot stand together), and what was removed.
fn with_source(policy: &str, d: &Directive<'_>, add: &str) -> (String, Vec<String>) {
    let only_none = d.sources().count() == 1 && d.has("'none'");
    let mut removed = Vec::new();
    let new_text = match d.text.to_ascii_lowercase().find("'none'") {
        Some(pos) if only_none => {
            removed.push("'none'".to_string());
            format!("{}{}{}", &d.text[..pos], add, &d.text[pos + 6..])
        }
        _ => {
            let end = d.text.trim_end().len();
            format!("{} {}{}", &d.text[..end], add, &d.text[end..])
        }
    };
    let mut new = String::with_capacity(policy.len() + add.len() + 1);
    new.push_str(&policy[..d.start]);
    new.push_str(&new_text);
    new.push_str(&policy[d.start + d.text.len()..]);
    (new, removed)
}

fn adjust_policy(policy: &str, rt: &RuntimeSource<'_>) -> Option<PolicyEdit> {
    let dirs = directives(policy);
    let d = effective(&dirs, ELEM)?;
    let nonce_src = format!("'nonce-{}'", rt.nonce);
    let scheme = rt
        .origin
        .and_then(|o| o.split_once("://"))
        .map(|(s, _)| format!("{}:", s.to_ascii_lowercase()));
    let (add, reason, uses_nonce) = if d.has("'strict-dynamic'") || d.has_nonce_or_hash() {
        (
            nonce_src,
            "policy trusts scripts by nonce/hash/strict-dynamic: runtime carries a fresh nonce",
            true,
        )
    } else if d.has("'self'")
        || d.has("*")
        || scheme
            .as_deref()
            .is_some_and(|s| d.sources().any(|x| x.eq_ignore_ascii_case(s)))
    {
        return None;
    } else if d.has("'unsafe-inline'") {
        // A nonce here would switch 'unsafe-inline' off for the page's own inline scripts.
        match rt.origin {
            Some(o) => (
                format!("{}{}", o.trim_end_matches('/'), rt.path),
                "allow exactly the runtime URL (a nonce would disable 'unsafe-inline')",
                false,
            ),
            None => (
                "'self'".to_string(),
                "origin unknown: allow same-origin scripts",
                false,
            ),
        }
    } else {
        (
            nonce_src,
            "runtime carries a fresh nonce (no 'unsafe-inline' to preserve)",
            true,
        )
    };
    let (new, removed) = with_source(policy, d, &add);
    Some((
        new,
        d.name.clone(),
        vec![add],
        removed,
        reason.to_string(),
        uses_nonce,
    ))
}

/// How a piece of inline code fares under the policies in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InlineVerdict {
    /// Permission does not depend on the bytes: the code may be rewritten.
    Rewritable,
    /// Allowed only by a hash of its bytes (or `'unsafe-hashes'`): keep it byte-identical.
    HashBound,
    /// Blocked anyway: rewriting is pointless, keep it.
    Blocked,
}

/// Enforced policies collected from headers and `<meta http-equiv>`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policies {
    enforced: Vec<String>,
}

impl Policies {
    pub(crate) fn add(&mut self, value: &str) {
        self.enforced.extend(
            value
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(str::to_string),
        );
    }

    /// Verdict for inline code governed by `order` (`ELEM` or `ATTR`), with the element's
    /// `nonce` attribute (scripts only).
    pub(crate) fn verdict(&self, order: &[&str], nonce: Option<&str>) -> InlineVerdict {
        let mut verdict = InlineVerdict::Rewritable;
        for p in &self.enforced {
            let dirs = directives(p);
            let Some(d) = effective(&dirs, order) else {
                continue;
            };
            if nonce.is_some_and(|n| d.matches_nonce(n)) || d.unsafe_inline_effective() {
                continue;
            }
            let hash_ok = d.has_hash() && (order == ELEM || d.has("'unsafe-hashes'"));
            if hash_ok {
                verdict = InlineVerdict::HashBound;
            } else {
                return InlineVerdict::Blocked;
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> RuntimeSource<'static> {
        RuntimeSource {
            origin: Some("https://a.test"),
            path: "/__shepherd/runtime.js",
            nonce: "N",
        }
    }

    #[test]
    fn runtime_adjustments() {
        let (v, c, n) = adjust(
            "script-src 'nonce-abc' 'strict-dynamic'; object-src 'none'",
            CspHeader::Enforce,
            &rt(),
        );
        assert_eq!(
            v,
            "script-src 'nonce-abc' 'strict-dynamic' 'nonce-N'; object-src 'none'"
        );
        assert!(n);
        assert_eq!(c[0].directive, "script-src");
        let (v, _, n) = adjust("default-src 'self'", CspHeader::Enforce, &rt());
        assert_eq!(v, "default-src 'self'");
        assert!(!n);
        let (v, _, n) = adjust(
            "script-src 'unsafe-inline' cdn.test",
            CspHeader::Enforce,
            &rt(),
        );
        assert_eq!(
            v,
            "script-src 'unsafe-inline' cdn.test https://a.test/__shepherd/runtime.js"
        );
        assert!(!n);
        let (v, c, n) = adjust("script-src 'none'; img-src *", CspHeader::Enforce, &rt());
        assert_eq!(v, "script-src 'nonce-N'; img-src *");
        assert_eq!(c[0].removed, vec!["'none'"]);
        assert!(n);
        let (v, _, _) = adjust("img-src *", CspHeader::Enforce, &rt());
        assert_eq!(v, "img-src *");
        // script-src-elem wins over script-src; two policies each adjusted
        let (v, c, _) = adjust(
            "script-src 'none'; script-src-elem cdn.test, default-src https:",
            CspHeader::ReportOnly,
            &rt(),
        );
        assert_eq!(
            v,
            "script-src 'none'; script-src-elem cdn.test 'nonce-N', default-src https:"
        );
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn trusted_types_allow_the_runtimes_policy() {
        let (v, c, n) = adjust(
            "require-trusted-types-for 'script'; trusted-types app dompurify",
            CspHeader::Enforce,
            &rt(),
        );
        assert_eq!(
            v,
            "require-trusted-types-for 'script'; trusted-types app dompurify shepherd-runtime"
        );
        assert!(!n);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].directive, "trusted-types");
        assert_eq!(c[0].added, vec!["shepherd-runtime"]);
        // With a script edit in the same policy, both are made and reported.
        let (v, c, _) = adjust(
            "script-src 'none'; trusted-types 'none' , trusted-types *",
            CspHeader::Enforce,
            &rt(),
        );
        assert_eq!(
            v,
            "script-src 'nonce-N'; trusted-types shepherd-runtime , trusted-types *"
        );
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].removed, vec!["'none'"]);
        // Already allowed, or no directive naming policies: unchanged.
        for kept in [
            "trusted-types shepherd-runtime app",
            "require-trusted-types-for 'script'",
            "trusted-types * 'allow-duplicates'",
        ] {
            let (v, c, _) = adjust(kept, CspHeader::Enforce, &rt());
            assert_eq!(v, kept);
            assert!(c.is_empty(), "{kept}: {c:?}");
        }
    }

    #[test]
    fn verdicts() {
        let mut p = Policies::default();
        assert_eq!(p.verdict(ELEM, None), InlineVerdict::Rewritable);
        p.add("script-src 'nonce-abc' 'sha256-xyz'");
        assert_eq!(p.verdict(ELEM, Some("abc")), InlineVerdict::Rewritable);
        assert_eq!(p.verdict(ELEM, None), InlineVerdict::HashBound);
        assert_eq!(p.verdict(ATTR, None), InlineVerdict::Blocked);
        let mut q = Policies::default();
        q.add("default-src 'self' 'unsafe-inline'");
        assert_eq!(q.verdict(ATTR, None), InlineVerdict::Rewritable);
        q.add("script-src-attr 'unsafe-hashes' 'sha256-q'");
        assert_eq!(q.verdict(ATTR, None), InlineVerdict::HashBound);
    }
}
