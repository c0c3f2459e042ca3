//! The docs name what exists: every repository path the README and `docs/*.md` mention (in
//! backticks, like `analysis/src/memory.rs`, or as a link target) exists, and every link to a
//! heading of the same document (`#the-js-pass`) finds that heading. A renamed file or section
//! fails here instead of leaving the map pointing at nothing.
//!
//! A backticked token counts as a path when its first segment is a top-level entry of the
//! repository (`docs/`, `races/`, `scripts/`, …) and it holds no pattern characters
//! (`examples/*/index.html`); a `:line` suffix is dropped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| panic!("testkit has no parent folder"))
}

/// The documents checked: the README and every `docs/*.md`.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap_or_else(|e| panic!("reading docs/: {e}"))
        .map(|e| e.unwrap_or_else(|e| panic!("reading docs/: {e}")).path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    docs.insert(0, root.join("README.md"));
    docs
}

/// The names at the repository's top level (what a path in the docs starts with).
fn top_level(root: &Path) -> BTreeSet<String> {
    std::fs::read_dir(root)
        .unwrap_or_else(|e| panic!("reading {}: {e}", root.display()))
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "target" && !n.starts_with(".git"))
        .collect()
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Splits markdown into its prose and its inline code spans (a span opens with a run of
/// backticks and closes with a run of the same length); fenced blocks are left out of both.
fn prose_and_code(text: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            prose.push_str(&rest[..open]);
            let ticks = rest[open..].chars().take_while(|&c| c == '`').count();
            let body = &rest[open + ticks..];
            let fence = "`".repeat(ticks);
            match body.find(&fence) {
                Some(close) => {
                    spans.push(body[..close].to_string());
                    rest = &body[close + ticks..];
                }
                None => {
                    rest = body;
                }
            }
        }
        prose.push_str(rest);
        prose.push('\n');
    }
    (prose, spans)
}

/// What `text` (a document in folder `dir`) names that does not exist under `root`.
fn missing(root: &Path, dir: &Path, text: &str) -> Vec<String> {
    let tops = top_level(root);
    let (prose, spans) = prose_and_code(text);
    let mut out = Vec::new();
    // Backticked paths.
    for span in &spans {
        for token in span.split_whitespace() {
            let token = token.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | '"'));
            let path = token.split(':').next().unwrap_or(token);
            let Some((first, _)) = path.split_once('/') else {
                continue;
            };
            if !tops.contains(first) || path.contains(['*', '<', '>', '{', '}', '…', '|', '$']) {
                continue;
            }
            if !root.join(path.trim_end_matches('/')).exists() {
                out.push(format!("`{path}`"));
            }
        }
    }
    // Link targets, `[text](target)`, in prose: a file beside the document or a heading of
    // the document itself.
    let mut anchors = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && let Some(h) = line.strip_prefix('#') {
            anchors.insert(slug(h.trim_start_matches('#')));
        }
    }
    for piece in prose.split("](").skip(1) {
        let Some(target) = piece.split(')').next() else {
            continue;
        };
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
        if file.is_empty() {
            if !anchors.contains(anchor) {
                out.push(format!("link to #{anchor} (no such heading)"));
            }
        } else if !dir.join(file).exists() {
            out.push(format!("link to {target}"));
        }
    }
    out
}

#[test]
fn every_path_and_link_in_the_docs_exists() {
    let root = workspace_root();
    let mut failures = Vec::new();
    let docs = documents(&root);
    assert!(docs.len() >= 5, "found only {docs:?}");
    for doc in &docs {
        let text = std::fs::read_to_string(doc)
            .unwrap_or_else(|e| panic!("reading {}: {e}", doc.display()));
        let dir = doc.parent().unwrap_or(&root);
        for m in missing(&root, dir, &text) {
            failures.push(format!(
                "{}: {m}",
                doc.strip_prefix(&root).unwrap_or(doc).display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "the docs name what does not exist:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn the_check_finds_what_is_missing() {
    let root = workspace_root();
    let text = "See `docs/architecture.md`, `races/src/no_such_file.rs:12` and \
                `examples/*/index.html`; [map](architecture.md), [gone](gone.md), \
                [here](#a-heading), [nowhere](#no-heading).\n\n## A heading\n";
    let found = missing(&root, &root.join("docs"), text);
    assert_eq!(
        found,
        vec![
            "`races/src/no_such_file.rs`".to_string(),
            "link to gone.md".to_string(),
            "link to #no-heading (no such heading)".to_string(),
        ]
    );
}
