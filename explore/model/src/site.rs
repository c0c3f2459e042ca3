//! What exploring one recording starts from: the page to load, the recorded trace, the user's
//! gestures, and the recorded order of the events the explorer schedules.

use crate::gesture::{Gesture, gestures};
use crate::naming::{self, EventName};
use anyhow::{Context, bail};
use shepherd_recording::Recording;
use shepherd_trace::{ActionType, Trace};
use std::path::{Path, PathBuf};

/// A recording prepared for exploration.
#[derive(Clone, Debug)]
pub struct Site {
    /// The recording file.
    pub recording: PathBuf,
    /// The top-level page the recording loaded.
    pub page: String,
    /// Its recorded trace.
    pub trace: Trace,
    /// The user's gestures, in order (event `user:<index>`).
    pub gestures: Vec<Gesture>,
    /// The recorded order of the events the explorer controls (held callbacks by stable id,
    /// gestures): what the initial execution follows.
    pub recorded_order: Vec<String>,
    /// The page's HTML as recorded (decoded), when the recording holds it: where the replay
    /// cuts it ([`crate::document`]).
    pub document: Option<Vec<u8>>,
    /// The document's recorded `Content-Type`.
    pub document_type: Option<String>,
}

impl Site {
    /// Loads the top-level page trace of the newest recording session of `path` (a replay
    /// session, if the file has one, is not a recording of the user's order).
    pub fn load(path: &Path) -> anyhow::Result<Site> {
        let rec = Recording::open_readonly(path)
            .with_context(|| format!("opening recording {}", path.display()))?;
        let sessions = rec.sessions()?;
        let recorded: Vec<_> = sessions
            .iter()
            .filter(|s| !s.label.starts_with("replay"))
            .map(|s| s.id)
            .collect();
        let traces = rec.traces()?;
        let newest = traces
            .iter()
            .filter(|t| recorded.contains(&t.session))
            .map(|t| t.session)
            .max();
        let Some(chosen) = traces
            .iter()
            .filter(|t| Some(t.session) == newest)
            .max_by_key(|t| t.bytes)
        else {
            bail!(
                "{} holds no recorded trace: record the page with `shepherd record URL` first",
                path.display()
            );
        };
        let bytes = rec.trace_jsonl(chosen.session, &chosen.doc)?;
        let trace = shepherd_trace::read_jsonl(&bytes[..])
            .with_context(|| format!("reading the trace of {}", chosen.doc))?;
        let page = trace
            .header
            .page
            .clone()
            .or_else(|| chosen.page_url.clone())
            .with_context(|| format!("the trace of {} names no page", chosen.doc))?;
        let mut site = Site::from_trace(path.to_path_buf(), page, trace);
        if let Some((body, ct)) = recorded_document(&rec, &site.page) {
            site.document = Some(body);
            site.document_type = ct;
        }
        Ok(site)
    }

    /// The page's document with every gesture's target located in it, when it was recorded.
    pub fn document_structure(&self) -> Option<crate::document::Document> {
        let html = self.document.as_ref()?;
        let selectors: Vec<String> = self
            .gestures
            .iter()
            .map(|g| {
                g.needs()
                    .map(|s| crate::document::streaming_selector(&s))
                    .unwrap_or_default()
            })
            .collect();
        Some(crate::document::Document::parse(html, &selectors))
    }

    /// A site from a trace already loaded.
    pub fn from_trace(recording: PathBuf, page: String, trace: Trace) -> Site {
        let gestures = gestures(&trace);
        let recorded_order = recorded_order(&trace, &gestures);
        Site {
            recording,
            page,
            trace,
            gestures,
            recorded_order,
            document: None,
            document_type: None,
        }
    }
}

/// The decoded body of the newest recorded `GET page` answered with HTML, and its
/// `Content-Type`.
fn recorded_document(rec: &Recording, page: &str) -> Option<(Vec<u8>, Option<String>)> {
    let exchanges = rec.exchanges(None).ok()?;
    let ex = exchanges.iter().rev().find(|e| {
        e.request.method == "GET"
            && e.request.url == page
            && e.response.as_ref().is_some_and(|r| {
                (200..300).contains(&r.status)
                    && r.headers.iter().any(|h| {
                        h.name.eq_ignore_ascii_case("content-type")
                            && String::from_utf8_lossy(&h.value)
                                .to_ascii_lowercase()
                                .contains("text/html")
                    })
            })
    })?;
    let ct = ex.response.as_ref().and_then(|r| {
        r.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| String::from_utf8_lossy(&h.value).into_owned())
    });
    let body = rec
        .decoded_response_body(ex.id, 32 * 1024 * 1024)
        .ok()
        .flatten()?;
    Some((body, ct))
}

/// The recorded actions the explorer can schedule, as event names, in trace order: each
/// gesture at its first action, every held callback by its stable id. Parsing, scripts and
/// network arrival follow from those (the initial execution releases them as needed).
fn recorded_order(trace: &Trace, gestures: &[Gesture]) -> Vec<String> {
    let mut starts: Vec<(u32, usize)> = gestures
        .iter()
        .enumerate()
        .filter_map(|(k, g)| g.actions.first().map(|&a| (a, k)))
        .collect();
    starts.sort_unstable();
    let mut out = Vec::new();
    // The XHR whose DONE `readystatechange` the last action was: what follows it in the same
    // task is run with it.
    let mut done_xhr: Option<&str> = None;
    for a in &trace.actions {
        if a.ty == ActionType::UserInterface {
            done_xhr = None;
            if let Ok(at) = starts.binary_search_by_key(&a.id, |s| s.0) {
                out.push(EventName::User(starts[at].1).to_string());
            }
            continue;
        }
        let stable = trace.strings.get(a.stable);
        let xhr = xhr_event(stable);
        if let (Some((x, e)), Some(done)) = (xhr, done_xhr)
            && x == done
            && END_OF_BODY_TAIL.contains(&e)
        {
            continue;
        }
        done_xhr = match xhr {
            Some((x, "readystatechange")) => Some(x),
            _ => None,
        };
        if naming::held_kind(trace.kind_of(a)) {
            out.push(EventName::Callback(stable.to_string()).to_string());
        }
    }
    out
}

/// What an XHR fires after its DONE `readystatechange`, in the same task (XMLHttpRequest,
/// "handle response end-of-body"): the runtime holds them with it, as one callback, so the
/// explorer never schedules them on their own (`DONE_TAIL` in `runtime-js/events.js`).
const END_OF_BODY_TAIL: &[&str] = &["progress", "load", "error", "abort", "timeout", "loadend"];

/// An XHR event's request (its stable id up to the event) and event type:
/// `…/xhr@/api#1/event:load#1` is `(…/xhr@/api#1, load)`; `None` for anything else.
fn xhr_event(stable: &str) -> Option<(&str, &str)> {
    // The request's step is `xhr@<url>#<n>` and its URL may hold slashes: the event is what
    // follows the last `/event:`, the request's step begins at the last `xhr@` before it (and
    // holds no event of its own: `…/xhr@/api#1/event:load#1/event:focus#1` is no XHR event).
    let cut = stable.rfind("/event:")?;
    let (request, last) = (&stable[..cut], &stable[cut + "/event:".len()..]);
    let step = match request.rfind("/xhr@") {
        Some(i) => &request[i + 1..],
        None if request.starts_with("xhr@") => request,
        None => return None,
    };
    let (_, n) = step.rsplit_once('#')?;
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) || step.contains("/event:") {
        return None;
    }
    let (event, _) = last.rsplit_once('#')?;
    Some((request, event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::TraceBuilder;

    fn callback(b: &mut TraceBuilder, kind: &str, stable: &str) {
        b.begin(ActionType::Network, kind, stable);
        b.end();
    }

    #[test]
    fn an_xhrs_end_of_body_is_scheduled_as_its_done_readystatechange() {
        let mut b = TraceBuilder::new();
        let x = "doc/script@app.js#1/xhr@/api#1";
        callback(
            &mut b,
            "event:readystatechange",
            &format!("{x}/event:readystatechange#1"),
        );
        callback(
            &mut b,
            "event:readystatechange",
            &format!("{x}/event:readystatechange#2"),
        );
        callback(&mut b, "event:load", &format!("{x}/event:load#1"));
        callback(&mut b, "event:loadend", &format!("{x}/event:loadend#1"));
        // Another request's load with no readystatechange before it: its own event.
        callback(
            &mut b,
            "event:load",
            "doc/script@app.js#1/xhr@/other#1/event:load#1",
        );
        let order = recorded_order(&b.finish(), &[]);
        assert_eq!(
            order,
            vec![
                format!("cb:{x}/event:readystatechange#1"),
                format!("cb:{x}/event:readystatechange#2"),
                "cb:doc/script@app.js#1/xhr@/other#1/event:load#1".to_string(),
            ]
        );
    }

    #[test]
    fn xhr_events_are_split_into_their_request_and_type() {
        assert_eq!(
            xhr_event("doc/x#1/xhr@/api#1/event:load#1"),
            Some(("doc/x#1/xhr@/api#1", "load"))
        );
        assert_eq!(
            xhr_event("xhr@/api#1/event:loadend#2"),
            Some(("xhr@/api#1", "loadend"))
        );
        assert_eq!(xhr_event("doc/parse#2/event:load@img#1"), None);
        assert_eq!(xhr_event("doc/timer#1"), None);
        assert_eq!(xhr_event("xhr@/api#1/event:load#1/event:focus#1"), None);
    }
}
