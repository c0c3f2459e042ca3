//! JSON report (schema: `docs/races-json.md`, version [`super::JSON_VERSION`]).

use super::{RaceReport, ReportPlan, SourceMemo, SourceProvider};
use crate::Analysis;
use shepherd_trace::Trace;

/// Renders the report as pretty JSON.
pub fn render(r: &RaceReport) -> String {
    // The view model holds only strings, numbers and booleans: serialisation cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Writes to `out` what [`render`] renders for `plan.into_report(trace, an)` with `sources`
/// attached, building the views of one location at a time: a long session's report is tens
/// of megabytes of JSON, twice that as views, and was held whole twice over.
pub fn write(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &dyn SourceProvider,
) -> std::io::Result<()> {
    // `races` is the report's last field: the head renders with it empty, and each race is
    // spliced in as the pretty printer would nest it (two levels deeper: four spaces).
    let head = render(&plan.head);
    let Some(prefix) = head.strip_suffix("[]\n}") else {
        return out.write_all(head.as_bytes());
    };
    out.write_all(prefix.as_bytes())?;
    let mut memo = SourceMemo::default();
    let mut buf = String::new();
    let mut first = true;
    for mut group in plan.groups(trace, an) {
        memo.attach(&mut group, sources);
        for r in &group {
            let one = serde_json::to_string_pretty(r).map_err(std::io::Error::from)?;
            buf.push_str(if first { "[\n    " } else { ",\n    " });
            // Strings are escaped: every newline is the printer's own.
            for (k, line) in one.split('\n').enumerate() {
                if k > 0 {
                    buf.push_str("\n    ");
                }
                buf.push_str(line);
            }
            first = false;
        }
        out.write_all(buf.as_bytes())?;
        buf.clear();
    }
    out.write_all(if first { b"[]\n}" } else { b"\n  ]\n}" })
}
