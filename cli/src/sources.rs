//! Script and page text from a recording, so reports can show the source lines of racing
//! accesses. Only text responses are loaded (HTML, JavaScript, JSON), each at most a few MB.
//! Positions in inline code (`<document url>#inline-<key>:line:col`) are resolved by
//! [`PageSources`] to the lines of the recorded HTML document; `eval-<key>` positions (code
//! built at run time) have no source and show as positions only.

use shepherd_races::report::PageSources;
use shepherd_recording::{Recording, header_value};
use std::collections::HashMap;
use std::path::Path;

/// Bodies larger than this are left out of reports.
const MAX_SOURCE: u64 = 8 * 1024 * 1024;

fn is_source(content_type: &str) -> bool {
    let ct = content_type.to_ascii_lowercase();
    ct.contains("html")
        || ct.contains("javascript")
        || ct.contains("ecmascript")
        || ct.contains("json")
}

/// The sources of every HTML/JavaScript response in the recording, for reports.
pub fn from_recording(path: &Path) -> anyhow::Result<PageSources> {
    Ok(PageSources::new(texts(path)?))
}

/// Sources for a trace file: the recording's responses when `path` is a recording, none for
/// a bare trace file (reports then show positions only).
pub fn for_trace_file(path: &Path) -> PageSources {
    match crate::trace_source::is_recording(path) {
        Ok(true) => from_recording(path).unwrap_or_else(|e| {
            tracing::warn!("{}: no sources for the report: {e:#}", path.display());
            PageSources::default()
        }),
        _ => PageSources::default(),
    }
}

/// URL → text of every HTML/JavaScript response in the recording (the last one wins when a
/// URL was fetched several times).
fn texts(path: &Path) -> anyhow::Result<HashMap<String, String>> {
    let rec = Recording::open_readonly(path)?;
    let mut out = HashMap::new();
    for ex in rec.exchanges(None)? {
        let Some(resp) = &ex.response else { continue };
        let ctype = header_value(&resp.headers, "content-type").unwrap_or_default();
        if !is_source(&String::from_utf8_lossy(ctype)) {
            continue;
        }
        if let Some(body) = rec.decoded_response_body(ex.id, MAX_SOURCE)? {
            out.insert(
                ex.request.url.clone(),
                String::from_utf8_lossy(&body).into_owned(),
            );
        }
    }
    Ok(out)
}
