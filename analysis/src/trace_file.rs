//! A trace read from a file: a recording (`.rec`, SQLite: one trace per document), our JSONL
//! trace, or EventRacer's `ER_actionlog`, told apart by their first bytes. Commands take any
//! of them.

use anyhow::{Context, bail};
use shepherd_recording::{Progress, Recording};
use shepherd_trace::{Format, Loaded, load_bytes, load_path_with_progress};
use std::io::Read;
use std::path::Path;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Where a loaded trace came from, for messages and reports.
#[derive(Debug, Clone)]
pub struct Source {
    /// The loaded trace.
    pub loaded: Loaded,
    /// For a recording: the document id of the chosen trace.
    pub doc: Option<String>,
    /// The page URL when known.
    pub page: Option<String>,
}

/// True when `path` is a recording (an SQLite file) rather than a trace file.
pub fn is_recording(path: &Path) -> anyhow::Result<bool> {
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let n = f.read(&mut head)?;
    Ok(n == head.len() && head == SQLITE_MAGIC)
}

/// Loads the trace in `path`. For a recording, `doc` picks the document (a document id or a
/// substring of its page URL); by default the largest trace of the newest session, which is
/// the top-level page in a normal recording.
pub fn load(path: &Path, doc: Option<&str>) -> anyhow::Result<Source> {
    load_with_progress(path, doc, &mut |_, _| {})
}

/// [`load`], reporting `(bytes parsed, bytes in the trace)` to `progress`, for large traces.
/// A large JSONL trace is parsed in parts on several threads
/// (`shepherd_trace::load_path_with_progress`, `load_bytes`).
pub fn load_with_progress(
    path: &Path,
    doc: Option<&str>,
    progress: Progress<'_>,
) -> anyhow::Result<Source> {
    if !is_recording(path)? {
        let loaded = load_path_with_progress(path, progress)
            .with_context(|| format!("reading {}", path.display()))?;
        let page = loaded.trace.header.page.clone();
        return Ok(Source {
            loaded,
            doc: None,
            page,
        });
    }
    let rec = Recording::open_readonly(path)
        .with_context(|| format!("opening recording {}", path.display()))?;
    let traces = rec.traces()?;
    if traces.is_empty() {
        bail!(
            "{} holds no trace: record with `shepherd record URL` (or browse through \
             `shepherd record --listen`) so the injected runtime can upload one",
            path.display()
        );
    }
    let chosen = match doc {
        Some(want) => traces
            .iter()
            .find(|t| t.doc == want)
            .or_else(|| {
                traces
                    .iter()
                    .find(|t| t.page_url.as_deref().is_some_and(|u| u.contains(want)))
            })
            .with_context(|| {
                let known: Vec<String> = traces
                    .iter()
                    .map(|t| format!("{} ({})", t.doc, t.page_url.as_deref().unwrap_or("?")))
                    .collect();
                format!(
                    "no trace {want:?} in {}; traces: {}",
                    path.display(),
                    known.join(", ")
                )
            })?,
        None => {
            let newest = traces.iter().map(|t| t.session).max();
            traces
                .iter()
                .filter(|t| Some(t.session) == newest)
                .max_by_key(|t| t.bytes)
                .context("no trace")?
        }
    };
    let bytes = rec.trace_jsonl(chosen.session, &chosen.doc)?;
    let loaded = load_bytes(&bytes, progress)
        .with_context(|| format!("reading trace {} of {}", chosen.doc, path.display()))?;
    if loaded.format != Format::Jsonl {
        bail!(
            "trace {} in {} is not a JSONL trace",
            chosen.doc,
            path.display()
        );
    }
    Ok(Source {
        loaded,
        doc: Some(chosen.doc.clone()),
        page: chosen.page_url.clone(),
    })
}
