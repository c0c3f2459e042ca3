//! Diagnostics: an error or warning at a line and column of a policy file, rendered the way
//! compilers do (`file:line:col: error: message`, the source line, a caret).

use std::fmt;

/// A position in a policy file: 1-based line and column (columns count characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1, in characters.
    pub col: u32,
}

impl Span {
    /// A span at `line`, `col`.
    pub fn new(line: u32, col: u32) -> Span {
        Span { line, col }
    }
}

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The policy is rejected.
    Error,
    /// The policy is accepted, but probably not what was meant.
    Warning,
}

/// One message about a policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// Where.
    pub span: Span,
    /// What, in one sentence.
    pub message: String,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            span,
            message: message.into(),
        }
    }

    /// `file:line:col: error: message`, then the source line and a caret under the column.
    pub fn render(&self, file: &str, source: &str) -> String {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut out = format!(
            "{file}:{}:{}: {kind}: {}\n",
            self.span.line, self.span.col, self.message
        );
        if let Some(text) = source
            .lines()
            .nth(self.span.line.saturating_sub(1) as usize)
        {
            let shown: String = text
                .chars()
                .map(|c| if c == '\t' { ' ' } else { c })
                .collect();
            out.push_str(&format!("  {shown}\n"));
            let pad = " ".repeat(self.span.col.saturating_sub(1) as usize);
            out.push_str(&format!("  {pad}^\n"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.span.line, self.span.col, self.message)
    }
}

/// Errors of a policy that could not be loaded, each rendered with its file and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The file (or shipped name) the errors are about.
    pub file: String,
    /// The rendered diagnostics (errors and the warnings that came with them).
    pub rendered: String,
    /// The diagnostics themselves.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.rendered.trim_end())
    }
}

impl std::error::Error for PolicyError {}

/// The edit distance of two short words (for "did you mean" hints).
pub(crate) fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_ascii_lowercase().chars().collect();
    let b: Vec<char> = b.to_ascii_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest of `candidates` to `word`, when close enough to be a typo.
pub(crate) fn suggest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_with_a_caret() {
        let d = Diagnostic::error(Span::new(2, 10), "unknown event type `clik`");
        let s = d.render("p.policy", "# c\npostpone clik until parsed\n");
        assert_eq!(
            s,
            "p.policy:2:10: error: unknown event type `clik`\n  postpone clik until parsed\n           ^\n"
        );
    }

    #[test]
    fn suggests_close_words() {
        assert_eq!(
            suggest("clik", ["click", "keydown"].into_iter()),
            Some("click")
        );
        assert_eq!(suggest("zzzzz", ["click"].into_iter()), None);
    }
}
