//! Merging recordings: every session of every input is appended to the output as a new session,
//! exchanges renumbered in input order, bodies streamed across (bounded memory).

use crate::error::Result;
use crate::model::{Exchange, Part, Progress, SessionId};
use crate::store::Recording;
use std::path::Path;

/// What a merge copied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Sessions created in the output.
    pub sessions: usize,
    /// Exchanges copied.
    pub exchanges: usize,
    /// Traces copied.
    pub traces: usize,
}

/// Appends all sessions of `inputs` (in order) to the recording at `out`, creating it if
/// needed. Inputs are opened read-only and never modified.
pub fn merge(inputs: &[&Path], out: &Path) -> Result<MergeReport> {
    merge_with_progress(inputs, out, &mut |_, _| {})
}

/// [`merge`], reporting `(exchanges copied, exchanges in all inputs)` to `progress`.
pub fn merge_with_progress(
    inputs: &[&Path],
    out: &Path,
    progress: Progress<'_>,
) -> Result<MergeReport> {
    let dst = Recording::open(out)?;
    let srcs = inputs
        .iter()
        .map(Recording::open_readonly)
        .collect::<Result<Vec<_>>>()?;
    let mut total = 0;
    for src in &srcs {
        total += src.exchange_count()?;
    }
    let mut report = MergeReport::default();
    for src in &srcs {
        copy_into(src, &dst, &mut report, &mut |done| progress(done, total))?;
    }
    dst.flush()?;
    Ok(report)
}

/// Copies every session of `src` into `dst` as new sessions; `copied` gets the running count
/// of exchanges in `report`.
pub(crate) fn copy_into(
    src: &Recording,
    dst: &Recording,
    report: &mut MergeReport,
    copied: &mut dyn FnMut(u64),
) -> Result<()> {
    let hosts = src.host_protocols()?;
    let traces = src.traces()?;
    for session in src.sessions()? {
        let new = dst.begin_session_at(&session.label, session.started_unix_us)?;
        report.sessions += 1;
        for ex in src.exchanges(Some(session.id))? {
            copy_exchange(src, dst, new, &ex)?;
            report.exchanges += 1;
            copied(report.exchanges as u64);
        }
        for h in hosts.iter().filter(|h| h.session == session.id) {
            dst.set_host_protocol(new, &h.authority, &h.alpn)?;
        }
        for t in traces.iter().filter(|t| t.session == session.id) {
            let jsonl = src.trace_jsonl(session.id, &t.doc)?;
            dst.append_trace_batch(new, &t.doc, 0, &jsonl)?;
            report.traces += 1;
        }
    }
    Ok(())
}

fn copy_exchange(
    src: &Recording,
    dst: &Recording,
    session: SessionId,
    ex: &Exchange,
) -> Result<()> {
    let mut w = dst.begin_exchange(session, ex.request.clone())?;
    let mut body = src.body(ex.id, Part::Request)?;
    while let Some(chunk) = body.next_chunk()? {
        w.request_body(&chunk)?;
    }
    if let Some(resp) = &ex.response {
        w.response_head(resp.clone());
    }
    let mut body = src.body(ex.id, Part::Response)?;
    while let Some(chunk) = body.next_chunk()? {
        w.response_body(&chunk)?;
    }
    if ex.websocket {
        w.set_websocket();
    }
    if let Some(e) = &ex.error {
        w.set_error(e.clone());
    }
    let id = w.finish(ex.timings)?;
    if ex.websocket {
        for (seq, msg) in src.ws_messages(ex.id)?.into_iter().enumerate() {
            dst.append_ws_message(id, seq as u64, msg)?;
        }
    }
    Ok(())
}
