//! `shepherd trace FILE [--json] [--action N]...`: statistics of a trace and a look at single
//! actions (their operations with strings resolved, their predecessors and successors).
//!
//! The trace can come from a recording, a JSONL trace or an `ER_actionlog`
//! (`shepherd_analysis::trace_file` tells them apart).

use anyhow::Context;
use serde::Serialize;
use shepherd_trace::{ActionView, Format, Loaded, OpView, TraceStats};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Version of the `--json` output of this command.
const JSON_VERSION: u32 = 1;

/// Print statistics of a trace (Shepherd JSONL or EventRacer ER_actionlog) or look at actions.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The trace file.
    file: PathBuf,
    /// Machine-readable output (versioned JSON on stdout).
    #[arg(long)]
    json: bool,
    /// Show this action (dense id): its operations, predecessors and successors. Repeatable.
    #[arg(long = "action", value_name = "N")]
    actions: Vec<u32>,
    /// Also write the trace as an EventRacer ER_actionlog to this file (for its raceanalyzer).
    #[arg(long = "to-er", value_name = "OUT")]
    to_er: Option<PathBuf>,
    /// Also write the trace as Shepherd JSONL to this file.
    #[arg(long = "to-jsonl", value_name = "OUT")]
    to_jsonl: Option<PathBuf>,
    /// For a recording: the document whose trace to use (document id or part of its URL;
    /// default: the top-level page).
    #[arg(long, value_name = "DOC")]
    doc: Option<String>,
}

/// Loads a trace from any supported file: a recording (`doc` picks the document), our JSONL
/// trace or an `ER_actionlog`. Adding a kind of source is done in `shepherd_analysis::trace_file`.
/// Returns the trace and, for a recording, the id of the document it belongs to.
pub(crate) fn load(path: &Path, doc: Option<&str>) -> anyhow::Result<(Loaded, Option<String>)> {
    let s = shepherd_analysis::trace_file::load(path, doc)?;
    Ok((s.loaded, s.doc))
}

#[derive(Serialize)]
struct JsonOut<'a> {
    version: u32,
    file: String,
    format: &'static str,
    /// For a recording: the document whose trace this is.
    #[serde(skip_serializing_if = "Option::is_none")]
    doc: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<&'a str>,
    trace_version: u32,
    warnings: &'a [String],
    stats: TraceStats,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    actions: Vec<JsonAction>,
}

#[derive(Serialize)]
struct JsonAction {
    #[serde(flatten)]
    view: ActionView,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_id: Option<i64>,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let (loaded, doc) = load(&args.file, args.doc.as_deref())?;
    if let Some(out) = &args.to_er {
        write_file(out, |w| shepherd_trace::er::write_er(&loaded.trace, w))?;
    }
    if let Some(out) = &args.to_jsonl {
        write_file(out, |w| shepherd_trace::write_jsonl(&loaded.trace, w))?;
    }
    if !args.json {
        for w in &loaded.warnings {
            eprintln!("warning: {w}");
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    report(&args, &loaded, doc.as_deref(), &mut out)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::new(
        File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    write(&mut w).with_context(|| format!("writing {}", path.display()))?;
    w.flush()?;
    Ok(())
}

/// Writes the statistics or the requested actions, as text or JSON.
fn report(
    args: &Args,
    loaded: &Loaded,
    doc: Option<&str>,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let trace = &loaded.trace;
    let mut views = Vec::new();
    for &id in &args.actions {
        match ActionView::of(trace, id) {
            Some(view) => views.push(JsonAction {
                original_id: loaded
                    .original_ids
                    .as_ref()
                    .and_then(|ids| ids.get(id as usize).copied()),
                view,
            }),
            None => anyhow::bail!(
                "no action {id}: the trace has {} actions (0..{})",
                trace.actions.len(),
                trace.actions.len()
            ),
        }
    }
    let stats = TraceStats::of(trace);
    if args.json {
        let doc = JsonOut {
            version: JSON_VERSION,
            file: args.file.display().to_string(),
            format: loaded.format.name(),
            doc,
            page: trace.header.page.as_deref(),
            trace_version: trace.header.version,
            warnings: &loaded.warnings,
            stats,
            actions: views,
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        if views.is_empty() {
            print_stats(out, &args.file, loaded, doc, &stats)?;
        }
        for v in &views {
            print_action(out, v)?;
        }
    }
    Ok(())
}

fn print_stats(
    out: &mut impl Write,
    file: &Path,
    loaded: &Loaded,
    doc: Option<&str>,
    s: &TraceStats,
) -> std::io::Result<()> {
    let format = match (loaded.format, doc) {
        (Format::Jsonl, Some(d)) => format!(
            "recording, document {d}, trace format v{}",
            loaded.trace.header.version
        ),
        (Format::Jsonl, None) => format!("Shepherd JSONL v{}", loaded.trace.header.version),
        (Format::ErActionlog, _) => "EventRacer ER_actionlog".to_owned(),
    };
    writeln!(out, "{} ({format})", file.display())?;
    if let Some(p) = &loaded.trace.header.page {
        writeln!(out, "page       {p}")?;
    }
    writeln!(
        out,
        "actions    {} ({} without operations)",
        s.actions, s.empty_actions
    )?;
    let by_type: Vec<String> = s
        .actions_by_type
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    writeln!(out, "  by type  {}", by_type.join(", "))?;
    let mut kinds: Vec<(&String, &usize)> = s.actions_by_kind.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let shown: Vec<String> = kinds
        .iter()
        .take(12)
        .map(|(k, n)| format!("{} {n}", if k.is_empty() { "(none)" } else { k }))
        .collect();
    let more = kinds.len().saturating_sub(12);
    writeln!(
        out,
        "  by kind  {}{}",
        shown.join(", "),
        if more > 0 {
            format!(", … {more} more kinds (--json lists all)")
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "arcs       {} (fork {}, of which timed {}; join {})",
        s.arcs, s.forks, s.timed_forks, s.joins
    )?;
    writeln!(
        out,
        "ops        {} (read {}, write {}, scope {}, exception {})",
        s.ops, s.reads, s.writes, s.scopes, s.exceptions
    )?;
    writeln!(
        out,
        "locations  {} (read {}, written {})",
        s.locations, s.locations_read, s.locations_written
    )?;
    writeln!(out, "strings    {}", s.strings)?;
    Ok(())
}

fn print_action(out: &mut impl Write, a: &JsonAction) -> std::io::Result<()> {
    let v = &a.view;
    write!(
        out,
        "action {} [{}] kind {:?}, stable {:?}",
        v.id, v.ty, v.kind, v.stable
    )?;
    if let Some(o) = a.original_id {
        write!(out, ", ER id {o}")?;
    }
    writeln!(out)?;
    let arcs = |ns: &[shepherd_trace::stats::Neighbour]| -> String {
        if ns.is_empty() {
            return "none".to_owned();
        }
        ns.iter()
            .map(|n| match n.delay_ms {
                Some(d) => format!("{} ({}, {d} ms)", n.action, n.kind),
                None => format!("{} ({})", n.action, n.kind),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    writeln!(out, "  predecessors  {}", arcs(&v.predecessors))?;
    writeln!(out, "  successors    {}", arcs(&v.successors))?;
    writeln!(out, "  ops           {}", v.ops.len())?;
    let mut depth = 2usize;
    let at = |src: &Option<String>| src.as_ref().map(|p| format!("  @ {p}")).unwrap_or_default();
    let val = |v: &Option<String>| v.as_ref().map(|v| format!(" = {v}")).unwrap_or_default();
    for op in &v.ops {
        let pad = "  ".repeat(depth);
        match op {
            OpView::Read { loc, value, src } => {
                writeln!(out, "{pad}read  {loc}{}{}", val(value), at(src))?
            }
            OpView::Write { loc, value, src } => {
                writeln!(out, "{pad}write {loc}{}{}", val(value), at(src))?
            }
            OpView::Enter { scope, src } => {
                writeln!(out, "{pad}enter {scope}{}", at(src))?;
                depth += 1;
            }
            OpView::Exit => {
                depth = depth.saturating_sub(1).max(2);
                writeln!(out, "{}exit", "  ".repeat(depth))?;
            }
            OpView::Exception { message, src } => {
                writeln!(out, "{pad}exception {message}{}", at(src))?
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    fn sample() -> shepherd_trace::Trace {
        let mut b = TraceBuilder::new();
        b.page("https://a.test/");
        let a = b.begin(ActionType::Unknown, "script", "doc/script:0");
        b.enter("script:inline #0", Some("https://a.test/:3:9"));
        b.write("Global.init", Some("false"));
        b.exit();
        b.end();
        let t = b.begin(ActionType::Timer, "timer", "doc/script:0/timer:0");
        b.read("Global.init", None);
        b.exception("TypeError: x is undefined", None);
        b.end();
        b.fork_delay(a, t, 100);
        b.finish()
    }

    fn args(file: &Path, json: bool, actions: Vec<u32>) -> Args {
        Args {
            file: file.to_owned(),
            json,
            actions,
            to_er: None,
            to_jsonl: None,
            doc: None,
        }
    }

    fn text(args: &Args, loaded: &Loaded) -> String {
        let mut out = Vec::new();
        report(args, loaded, None, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A fresh path in the system temp directory (removed by the caller).
    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("shepherd-trace-cli-{}-{name}", std::process::id()))
    }

    #[test]
    fn stats_and_actions_from_jsonl_and_er() {
        let jsonl = temp("t.jsonl");
        let er = temp("t.er");
        std::fs::write(&jsonl, shepherd_trace::to_jsonl_bytes(&sample())).unwrap();
        std::fs::write(&er, shepherd_trace::er::to_er_bytes(&sample())).unwrap();

        let (j, _) = load(&jsonl, None).unwrap();
        assert_eq!(j.format, Format::Jsonl);
        let s = text(&args(&jsonl, false, vec![]), &j);
        let v = format!("Shepherd JSONL v{}", shepherd_trace::FORMAT_VERSION);
        assert!(s.contains(&v), "{s}");
        assert!(s.contains("actions    2 (0 without operations)"), "{s}");
        assert!(
            s.contains("arcs       1 (fork 1, of which timed 1; join 0)"),
            "{s}"
        );
        assert!(
            s.contains("ops        5 (read 1, write 1, scope 1, exception 1)"),
            "{s}"
        );

        let (e, _) = load(&er, None).unwrap();
        assert_eq!(e.format, Format::ErActionlog);
        let s = text(&args(&er, false, vec![1]), &e);
        assert!(
            s.contains("action 1 [timer] kind \"timer\", stable \"doc/script:0/timer:0\", ER id 1"),
            "{s}"
        );
        assert!(s.contains("predecessors  0 (fork, 100 ms)"), "{s}");
        assert!(s.contains("exception TypeError: x is undefined"), "{s}");

        let v: serde_json::Value =
            serde_json::from_str(&text(&args(&er, true, vec![0]), &e)).unwrap();
        assert_eq!(v["version"], 1);
        assert_eq!(v["format"], "er_actionlog");
        assert_eq!(v["page"], "https://a.test/");
        assert_eq!(v["stats"]["forks"], 1);
        assert_eq!(v["actions"][0]["ops"][1]["op"], "write");
        assert_eq!(v["actions"][0]["ops"][1]["value"], "false");
        assert_eq!(v["actions"][0]["successors"][0]["action"], 1);

        let mut out = Vec::new();
        let err = report(&args(&er, false, vec![7]), &e, None, &mut out).unwrap_err();
        assert!(err.to_string().contains("no action 7"), "{err}");
        std::fs::remove_file(&jsonl).ok();
        std::fs::remove_file(&er).ok();
    }

    #[test]
    fn bad_files_are_named_with_the_offset() {
        let bad = temp("bad.jsonl");
        std::fs::write(
            &bad,
            "{\"format\":\"shepherd-trace\",\"version\":1}\n[\"q\"]\n",
        )
        .unwrap();
        let err = format!("{:#}", load(&bad, None).unwrap_err());
        assert!(err.contains("line 2 (byte 41)"), "{err}");
        std::fs::write(&bad, [1u8, 0, 0]).unwrap();
        let err = format!("{:#}", load(&bad, None).unwrap_err());
        assert!(err.contains("ER_actionlog byte 0"), "{err}");
        std::fs::remove_file(&bad).ok();
    }
}
