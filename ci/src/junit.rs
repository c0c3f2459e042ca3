//! JUnit XML, the format test report viewers read: one test suite per report, one test case
//! per finding. Harmful findings fail with their witness as the failure's text; undecided and
//! filtered ones are skipped with the reason; harmless and covered ones pass.

use crate::finding::{Finding, Status};
use std::fmt::Write;

/// The suite's name and figures.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// `shepherd explore https://a.test/`.
    pub name: String,
    /// Seconds the run took (`time`), when known.
    pub seconds: Option<f64>,
    /// `<property>`s of the suite (recording, bound, policy, …).
    pub properties: Vec<(String, String)>,
}

/// The JUnit XML document of `findings`.
pub fn render(findings: &[Finding], suite: &Suite) -> String {
    let failures = findings
        .iter()
        .filter(|f| f.status == Status::Harmful)
        .count();
    let skipped = findings
        .iter()
        .filter(|f| matches!(f.status, Status::Uncovered | Status::Filtered))
        .count();
    let time = format!("{:.3}", suite.seconds.unwrap_or(0.0).max(0.0));
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time}\"",
        findings.len()
    );
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let name = attr(&suite.name);
    let _ = writeln!(out, "<testsuites name=\"{name}\" {counts}>");
    let _ = writeln!(out, "  <testsuite name=\"{name}\" {counts}>");
    if !suite.properties.is_empty() {
        out.push_str("    <properties>\n");
        for (k, v) in &suite.properties {
            let _ = writeln!(
                out,
                "      <property name=\"{}\" value=\"{}\"/>",
                attr(k),
                attr(v)
            );
        }
        out.push_str("    </properties>\n");
    }
    for f in findings {
        case(&mut out, f);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn case(out: &mut String, f: &Finding) {
    let classname = f.class.rule_id().replace('/', ".");
    let name = if f.kind.is_empty() {
        f.headline()
    } else {
        format!(
            "{} {}: {} / {}",
            f.location,
            f.kind,
            f.first.place(),
            f.second.place()
        )
    };
    let _ = write!(
        out,
        "    <testcase classname=\"{}\" name=\"{}\" time=\"0\"",
        attr(&classname),
        attr(&name)
    );
    let mut body = f.message();
    if let Some(d) = &f.details {
        body.push_str("\n\n");
        body.push_str(d);
    }
    match f.status {
        Status::Harmful => {
            out.push_str(">\n");
            let _ = writeln!(
                out,
                "      <failure type=\"harmful\" message=\"{}\">{}</failure>",
                attr(&f.headline()),
                text(&body)
            );
            out.push_str("    </testcase>\n");
        }
        Status::Uncovered | Status::Filtered => {
            out.push_str(">\n");
            let _ = writeln!(
                out,
                "      <skipped message=\"{}: {}\"/>",
                f.status.as_str(),
                attr(f.verdict.as_deref().unwrap_or(&f.reason))
            );
            let _ = writeln!(out, "      <system-out>{}</system-out>", text(&body));
            out.push_str("    </testcase>\n");
        }
        Status::Harmless | Status::Covered => {
            out.push_str(">\n");
            let _ = writeln!(out, "      <system-out>{}</system-out>", text(&body));
            out.push_str("    </testcase>\n");
        }
    }
}

/// Text content: markup characters escaped, and the characters XML 1.0 cannot hold at all
/// (most control characters, lone surrogates cannot occur in a `str`) replaced.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value (double-quoted): [`text`], quotes escaped, and line breaks kept as
/// character references (a parser would fold them into spaces).
fn attr(s: &str) -> String {
    text(s)
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
        .replace('\r', "&#13;")
        .replace('\t', "&#9;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_control_characters_are_escaped() {
        assert_eq!(text("a<b>&c\u{1}d\n"), "a&lt;b&gt;&amp;c\u{FFFD}d\n");
        assert_eq!(attr("say \"hi\"\n"), "say &quot;hi&quot;&#10;");
    }
}
