//! JSON report (schema: `docs/races-json.md`, version [`super::JSON_VERSION`]).

use super::stream::{self, Batching};
use super::{RaceReport, RaceView, ReportPlan, SourceProvider};
use crate::Analysis;
use serde::Serialize;
use serde_json::ser::Formatter;
use shepherd_trace::Trace;
use std::io::Write;

/// Renders the report as pretty JSON.
pub fn render(r: &RaceReport) -> String {
    // The view model holds only strings, numbers and booleans: serialisation cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// Writes to `out` what [`render`] renders for `plan.into_report(trace, an)` with `sources`
/// attached, building the views of a few locations at a time: a long session's report is
/// tens of megabytes of JSON, twice that as views, and was held whole twice over. Large
/// reports render on two threads.
pub fn write(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
) -> std::io::Result<()> {
    write_batched(out, trace, an, plan, sources, Batching::DEFAULT)
}

/// [`write`], cutting and sharing the work as `batching` says.
pub(crate) fn write_batched(
    out: &mut dyn std::io::Write,
    trace: &Trace,
    an: &Analysis,
    plan: &ReportPlan,
    sources: &(dyn SourceProvider + Sync),
    batching: Batching,
) -> std::io::Result<()> {
    // `races` is the report's last field: the head renders with it empty, and each race is
    // printed as the pretty printer would nest it.
    let head = render(&plan.head);
    let Some(prefix) = head.strip_suffix("[]\n}") else {
        return out.write_all(head.as_bytes());
    };
    out.write_all(prefix.as_bytes())?;
    let batches = plan.batches(an, batching.races);
    stream::write_in_order(
        &mut stream::Plain(&mut *out),
        plan.shown.len(),
        batches.len(),
        batching,
        |memo, k, buf: &mut Vec<u8>| {
            let ks = batches.get(k).cloned().unwrap_or_default();
            for mut group in plan.groups_at(trace, an, ks) {
                memo.attach(&mut group, sources);
                for r in &group {
                    let first = k == 0 && buf.is_empty();
                    buf.extend_from_slice(if first { b"[\n    " } else { b",\n    " });
                    race(buf, r)?;
                }
            }
            Ok(())
        },
    )?;
    out.write_all(if batches.is_empty() {
        b"[]\n}"
    } else {
        b"\n  ]\n}"
    })
}

/// Appends race `r` to `buf` as the pretty printer nests it in the report's `races`.
fn race(buf: &mut Vec<u8>, r: &RaceView) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(buf, Nested::races());
    r.serialize(&mut ser).map_err(std::io::Error::from)
}

/// serde_json's `PrettyFormatter` (two spaces a level) starting at the depth of the report's
/// races: each race is printed straight into the report. Printing it alone and indenting every
/// line after was a fifth of the JSON report's instructions.
struct Nested {
    depth: usize,
    has_value: bool,
}

impl Nested {
    /// The depth of an element of the report's `races` array.
    fn races() -> Nested {
        Nested {
            depth: 2,
            has_value: false,
        }
    }

    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
        // One write per line, not one per level (a race has about fifty lines).
        let mut left = 2 * self.depth;
        while left > 0 {
            let n = left.min(SPACES.len());
            w.write_all(&SPACES[..n])?;
            left -= n;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }

    fn item<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

/// Indentation, written a line at a time.
const SPACES: &[u8; 32] = b"                                ";

impl Formatter for Nested {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.item(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}
