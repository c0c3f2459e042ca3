//! Repair policies (EventRaceCommander §IV–§V) as checked data: a small line-oriented
//! language ([`parser`]), a validator ([`check`]), a compiler to the JSON the injected
//! controller loads ([`compile`]), explanations in words ([`explain`]), the five
//! application-independent policies shipped with Shepherd ([`SHIPPED`]), and the augmented
//! happens-before ≤_P of a policy over a recorded trace ([`covers`]).
//!
//! ```
//! let set = shepherd_policies::load("init-user").unwrap();
//! assert_eq!(set.policies[0].rules.len(), 1);
//! let compiled = shepherd_policies::compile::compile(&set.policies);
//! assert_eq!(compiled.json["policies"][0]["rules"][0]["action"], 1); // postpone
//! ```

pub mod ast;
pub mod check;
pub mod compile;
pub mod covers;
pub mod diag;
pub mod explain;
pub mod ir;
pub mod jscheck;
pub mod kinds;
pub mod lexer;
pub mod parser;

pub use diag::{Diagnostic, PolicyError, Severity, Span};
pub use ir::Policy;

use std::path::Path;
use std::sync::OnceLock;

/// The policies shipped with Shepherd: name and text.
pub const SHIPPED: &[(&str, &str)] = &[
    ("init-user", include_str!("../shipped/init-user.policy")),
    (
        "init-user-plus",
        include_str!("../shipped/init-user-plus.policy"),
    ),
    ("init-system", include_str!("../shipped/init-system.policy")),
    ("async-user", include_str!("../shipped/async-user.policy")),
    ("async-fifo", include_str!("../shipped/async-fifo.policy")),
];

/// The standard templates and names (`waitfor`, `waitrec`, `order`, `ordernext`, `async`).
pub const PRELUDE: &str = include_str!("../shipped/prelude.policy");

fn prelude() -> &'static ast::File {
    static P: OnceLock<ast::File> = OnceLock::new();
    P.get_or_init(|| {
        let mut d = Vec::new();
        // The prelude is tested to parse cleanly (tests/language.rs).
        parser::parse(PRELUDE, &mut d)
    })
}

/// Policies loaded from a `--policy` argument, with the warnings their files gave.
#[derive(Clone, Debug, Default)]
pub struct PolicySet {
    /// The policies, in the order given.
    pub policies: Vec<Policy>,
    /// Rendered warnings (`file:line:col: warning: …`), empty when none.
    pub warnings: String,
}

impl PolicySet {
    /// The policies compiled for the runtime.
    pub fn compile(&self) -> compile::Compiled {
        compile::compile(&self.policies)
    }

    /// The names, comma-separated.
    pub fn names(&self) -> String {
        let n: Vec<&str> = self.policies.iter().map(|p| p.name.as_str()).collect();
        n.join(",")
    }
}

/// Parses and checks one policy text. `name` names the policy (rule ids are `name:line`),
/// `file` is how diagnostics name the source.
pub fn parse_policy(
    name: &str,
    file: &str,
    text: &str,
) -> Result<(Policy, Vec<Diagnostic>), PolicyError> {
    let mut diags = Vec::new();
    let ast = parser::parse(text, &mut diags);
    let policy = check::check(name, file, &ast, Some(prelude()), &mut diags);
    diags.sort_by_key(|d| d.span);
    match policy {
        Some(p) if !diags.iter().any(|d| d.severity == Severity::Error) => Ok((p, diags)),
        _ => {
            // Rejected: the errors alone (warnings about a policy that does not load are noise).
            diags.retain(|d| d.severity == Severity::Error);
            let rendered: String = diags.iter().map(|d| d.render(file, text)).collect();
            Err(PolicyError {
                file: file.to_string(),
                rendered,
                diagnostics: diags,
            })
        }
    }
}

/// Loads a `--policy` argument: shipped names or file paths, comma-separated (`init-user,
/// async-fifo`, `site.policy`). Every error of every file is reported; nothing is returned
/// unless all of them are clean.
pub fn load(spec: &str) -> Result<PolicySet, PolicyError> {
    let mut set = PolicySet::default();
    let mut errors: Vec<PolicyError> = Vec::new();
    for item in spec.split(',').map(str::trim) {
        if item.is_empty() {
            errors.push(simple_error(spec, "empty policy name in the list"));
            continue;
        }
        let (name, file, text) = match SHIPPED.iter().find(|(n, _)| *n == item) {
            Some((n, t)) => (
                n.to_string(),
                format!("{n}.policy (shipped)"),
                t.to_string(),
            ),
            None => {
                let path = Path::new(item);
                match std::fs::read_to_string(path) {
                    Ok(t) => {
                        let stem = path
                            .file_stem()
                            .and_then(|s| s.to_str())
                            .unwrap_or(item)
                            .to_string();
                        (stem, item.to_string(), t)
                    }
                    Err(e) => {
                        let shipped: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
                        let hint = diag::suggest(item, shipped.iter().copied())
                            .map(|s| format!(" (did you mean `{s}`?)"))
                            .unwrap_or_default();
                        errors.push(simple_error(
                            item,
                            &format!(
                                "no shipped policy and no readable file named `{item}`{hint}: {e}; shipped policies are {}",
                                shipped.join(", ")
                            ),
                        ));
                        continue;
                    }
                }
            }
        };
        if set.policies.iter().any(|p| p.name == name) {
            errors.push(simple_error(
                item,
                &format!("policy `{name}` is given twice"),
            ));
            continue;
        }
        match parse_policy(&name, &file, &text) {
            Ok((p, warnings)) => {
                for w in warnings {
                    set.warnings.push_str(&w.render(&file, &text));
                }
                set.policies.push(p);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        return Ok(set);
    }
    let rendered: String = errors
        .iter()
        .map(|e| format!("{}\n", e.rendered.trim_end()))
        .collect();
    let diagnostics = errors.iter().flat_map(|e| e.diagnostics.clone()).collect();
    Err(PolicyError {
        file: errors[0].file.clone(),
        rendered,
        diagnostics,
    })
}

fn simple_error(file: &str, message: &str) -> PolicyError {
    PolicyError {
        file: file.to_string(),
        rendered: format!("{file}: error: {message}\n"),
        diagnostics: vec![Diagnostic::error(Span::new(1, 1), message)],
    }
}

/// The first comment paragraph of a shipped policy (what `shepherd policy list` prints).
pub fn summary(text: &str) -> String {
    let mut out = Vec::new();
    for line in text.lines() {
        match line.strip_prefix('#') {
            Some(c) if !c.trim().is_empty() => out.push(c.trim().to_string()),
            _ => break,
        }
    }
    out.join(" ")
}
