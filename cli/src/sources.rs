//! Script and page text from a recording, so reports can show the source lines of racing
//! accesses. Only text responses are loaded (HTML, JavaScript, JSON), each at most a few MB.

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

/// URL → text of every HTML/JavaScript response in the recording (the last one wins when a
/// URL was fetched several times).
pub fn from_recording(path: &Path) -> anyhow::Result<HashMap<String, String>> {
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
