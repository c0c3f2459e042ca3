//! Script and page text from a recording, so reports can show the source lines of racing
//! accesses. Only text responses are loaded (HTML, JavaScript, JSON), each at most a few MB.
//! Positions in inline code (`<document url>#inline-<key>:line:col`) are resolved by
//! [`PageSources`] to the lines of the recorded HTML document, with the instrumenter's own
//! finder ([`inline_finder`]); `eval-<key>` positions (code built at run time) have no source
//! and show as positions only.

use shepherd_instrument::ScriptKind;
use shepherd_races::report::{CodeKind, InlineCode, PageSources};
use shepherd_recording::{Recording, header_value};
use std::collections::HashMap;
use std::path::Path;

/// Bodies larger than this are left out of reports.
const MAX_SOURCE: u64 = 8 * 1024 * 1024;

/// HTML, JavaScript (any of its MIME types) and JSON: what reports may quote.
fn is_source(content_type: &str) -> bool {
    let essence = shepherd_instrument::mime_essence(content_type);
    essence == "text/html"
        || essence == "application/xhtml+xml"
        || shepherd_instrument::is_javascript_mime(&essence)
        || essence == "application/json"
        || essence.ends_with("+json")
}

/// The inline code of an HTML document as the instrumenter finds it (same texts, same keys as
/// its HTML rewriter and JS pass), in the reports' terms.
pub fn inline_finder(html: &str) -> Vec<InlineCode> {
    shepherd_instrument::inline_code(html)
        .into_iter()
        .map(|c| InlineCode {
            key: c.key,
            line: c.line,
            col: c.col,
            text: c.text,
            kind: match c.kind {
                ScriptKind::Script => CodeKind::Script,
                ScriptKind::Module => CodeKind::Module,
                ScriptKind::Handler => CodeKind::Handler,
                ScriptKind::JsUrl => CodeKind::JsUrl,
            },
        })
        .collect()
}

/// Where `line:col` of the code the browser ran comes from in `text` (of this kind), as the
/// instrumenter made that code: the reports' position mapper.
pub fn position_mapper(text: &str, kind: CodeKind, line: u32, col: u32) -> Option<(u32, u32)> {
    let inline = match kind {
        CodeKind::File => return shepherd_instrument::original_position(text, line, col),
        CodeKind::Script => ScriptKind::Script,
        CodeKind::Module => ScriptKind::Module,
        CodeKind::Handler => ScriptKind::Handler,
        CodeKind::JsUrl => ScriptKind::JsUrl,
    };
    shepherd_instrument::original_inline_position(text, inline, line, col)
}

/// The sources of every HTML/JavaScript response in the recording, for reports.
pub fn from_recording(path: &Path) -> anyhow::Result<PageSources> {
    Ok(PageSources::new(texts(path)?)
        .with_inline_finder(inline_finder)
        .with_position_mapper(position_mapper))
}

/// Sources for a trace file: the recording's responses when `path` is a recording, none for
/// a bare trace file (reports then show positions only).
pub fn for_trace_file(path: &Path) -> PageSources {
    match crate::trace_file::is_recording(path) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_races::report::{self, RaceReport};
    use shepherd_races::{Options, analyze};
    use shepherd_recording::{Header, RequestHead, ResponseHead, Timings};

    const PAGE: &str = include_str!("../../races/tests/positions/index.html");
    const APP: &str = include_str!("../../races/tests/positions/app.js");
    const TRACE: &str = include_str!("../../races/tests/positions/trace.jsonl");

    fn exchange(
        rec: &Recording,
        s: shepherd_recording::SessionId,
        url: &str,
        ct: &str,
        body: &str,
    ) {
        let mut ex = rec
            .begin_exchange(
                s,
                RequestHead {
                    method: "GET".into(),
                    url: url.into(),
                    http_version: "HTTP/1.1".into(),
                    headers: vec![Header::new("Host", "a.test")],
                },
            )
            .unwrap();
        ex.response_head(ResponseHead {
            status: 200,
            reason: "OK".into(),
            http_version: "HTTP/1.1".into(),
            headers: vec![Header::new("Content-Type", ct)],
        });
        ex.response_body(body.as_bytes()).unwrap();
        ex.finish(Timings::default()).unwrap();
    }

    /// What `shepherd races REC --html` does with a recording: the racing lines come from the
    /// recorded HTML (inline code, in the document's numbering) and script.
    #[test]
    fn reports_on_a_recording_show_recorded_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.rec");
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("record").unwrap();
        exchange(&rec, s, "https://a.test/", "text/html; charset=utf-8", PAGE);
        exchange(&rec, s, "https://a.test/app.js", "text/javascript", APP);
        exchange(&rec, s, "https://a.test/pic.png", "image/png", "PNG");
        rec.append_trace_batch(s, "d1", 0, TRACE.as_bytes())
            .unwrap();
        rec.flush().unwrap();
        drop(rec);

        let sources = for_trace_file(&path);
        assert_eq!(sources.len(), 2, "HTML and JavaScript only");
        let trace = crate::trace_file::load(&path, None).unwrap().loaded.trace;
        let an = analyze(&trace, &Options::default()).unwrap();
        let mut rep = RaceReport::new(&trace, &an, false);
        rep.attach_sources(&sources);
        let text = report::text::render(&rep);
        for line in [
            "   11 | <button id=\"b\" onclick=\"if (init) show(count);\">go</button>",
            "    6 |   function ready() { init = true; }",
            "    4 |   count = count + 1;",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        let html = report::html::render(&RaceReport::new(&trace, &an, true), &an, &trace, &sources);
        assert!(html.contains(
            "<span class=hit>    6   function ready() { <mark class=at>init</mark> = true; }</span>"
        ));

        // A bare trace file has no sources: positions only.
        let bare = dir.path().join("t.jsonl");
        std::fs::write(&bare, TRACE).unwrap();
        assert!(for_trace_file(&bare).is_empty());
    }
}
