//! The per-page background task: collects console output, uncaught exceptions and dialogs,
//! tracks requests in flight for quiet detection, and accepts dialogs so pages never block.
//!
//! Requests are tracked across the page's workers and out-of-process frames too: the page
//! session reports a dedicated worker's script request starting, but its end only on the
//! worker's own session, so without the children a page with a worker was never quiet (and
//! every quiet wait on it ran to its limit). The page auto-attaches to its children
//! (`Target.setAutoAttach`, paused until the child's network is watched) and one task per
//! child feeds its requests into the same state.
//!
//! A request other than a document counts as in flight until its response arrives, then only
//! while its body does: Chromium reports no end for a `fetch` whose body the page never reads
//! (an analytics POST), and waiting for it made such a page never quiet too. A document stays
//! in flight until it ends: the parser works on its body as it comes.
//!
//! A service worker of the page's origin that is installing or activating counts as work in
//! flight as well (the `ServiceWorker` domain's version states): its setup runs in its own
//! context with no request necessarily open, and the page's `controllerchange` or
//! `serviceWorker.ready` comes only at its end.
//!
//! So does a frame that is still loading with no request of its own in flight: its document
//! has arrived and it is parsing or running scripts, and its element's `load` in the page
//! is still to come (under load, that took longer than a quiet period). A frame waiting for
//! a request is left to the request's own accounting (a scheduler may be holding it).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::connection::{Connection, EventStream};

/// Events the monitor listens to.
pub(crate) const METHODS: &[&str] = &[
    "Runtime.consoleAPICalled",
    "Runtime.exceptionThrown",
    "Page.javascriptDialogOpening",
    "Page.frameNavigated",
    "Page.frameAttached",
    "Page.frameDetached",
    "Page.frameStartedLoading",
    "Page.frameStoppedLoading",
    "Network.requestWillBeSent",
    "Network.loadingFinished",
    "Network.loadingFailed",
    "Network.dataReceived",
    "Network.responseReceived",
    "Target.attachedToTarget",
    "Target.detachedFromTarget",
    "ServiceWorker.workerVersionUpdated",
];

/// The Network domain's settings for every session watched: request bodies are left out of
/// `Network.requestWillBeSent` (`hasPostData` still says there is one; a one-byte body still
/// comes, and 0 would mean no limit). Nothing here reads them, and the runtime's trace
/// uploads made them ≈ 1.3 MB of DevTools messages, built by the renderer and relayed by the
/// browser, in each of the explorer's executions.
pub(crate) fn network_settings() -> Value {
    json!({ "maxPostDataSize": 1 })
}

/// Events a child session (a worker, a frame in another process) is watched for.
const CHILD_METHODS: &[&str] = &[
    "Network.requestWillBeSent",
    "Network.dataReceived",
    "Network.responseReceived",
    "Network.loadingFinished",
    "Network.loadingFailed",
];

/// How long a child's setup commands may take: a child left paused would stall the page, so
/// the resume is sent whatever the enable answered.
const CHILD_CALL_LIMIT: Duration = Duration::from_secs(10);

/// A child's task, stopped when the child detaches or the page's monitor ends.
struct ChildTask(tokio::task::JoinHandle<()>);

impl Drop for ChildTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One `console.*` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleMessage {
    /// `log`, `warning`, `error`, `info`, `debug`, …
    pub level: String,
    /// The arguments rendered as text, separated by spaces.
    pub text: String,
    /// Script URL of the call site, when known.
    pub url: Option<String>,
    /// Zero-based line of the call site, when known.
    pub line: Option<u64>,
}

/// One uncaught exception or unhandled promise rejection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageException {
    /// The exception's description (`ReferenceError: x is not defined` plus stack), or the
    /// protocol's summary text when there is none.
    pub message: String,
    /// Script URL, when known.
    pub url: Option<String>,
    /// Zero-based line, when known.
    pub line: Option<u64>,
    /// Zero-based column, when known.
    pub column: Option<u64>,
}

/// One JavaScript dialog the page opened (it was accepted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// The dialog's message.
    pub message: String,
}

/// What the monitor knows about a page.
#[derive(Debug)]
pub(crate) struct PageState {
    pub console: Vec<ConsoleMessage>,
    pub exceptions: Vec<PageException>,
    pub dialogs: Vec<Dialog>,
    /// Requests started and not finished, by request id.
    pub in_flight: HashMap<String, InFlight>,
    /// Service workers of the page's origin that are still being set up (registered and not
    /// yet activated or discarded), by version id -> script URL: installing and activating
    /// run in the worker's own context, where no request need be in flight, and a page that
    /// waits for its worker (`controllerchange`, `navigator.serviceWorker.ready`) is not done.
    pub workers_starting: HashMap<String, String>,
    /// Frames in the page (not the main frame), by frame id.
    pub child_frames: HashSet<String>,
    /// Child frames that have started loading and not stopped (their load event has not
    /// fired): with no request of theirs in flight, they are parsing or running scripts.
    pub frames_loading: HashSet<String>,
    /// Last time a request started or ended (or a service worker changed state).
    pub last_network: Instant,
    /// Body bytes the page received per document URL (main frame and frames), summed over
    /// its requests: a scheduler that releases a document in parts knows from this when a
    /// part has reached the renderer.
    pub document_bytes: HashMap<String, u64>,
    /// The resource type DevTools gave each requested URL (`Script`, `XHR`, `Stylesheet`…),
    /// the last one per URL: a scheduler that releases a response learns from it whether the
    /// page will run code when it arrives.
    pub resource_types: HashMap<String, String>,
    /// Main-frame document commits seen (a change means the page navigated).
    pub main_navigations: u64,
    /// URL of the last main-frame commit.
    pub main_url: Option<String>,
    /// The quiet probe's isolated world: (main_navigations when created, context id).
    pub quiet_world: Option<(u64, i64)>,
    /// The tools world of [`Page::evaluate_isolated`](crate::Page::evaluate_isolated):
    /// (main_navigations when created, context id).
    pub tools_world: Option<(u64, i64)>,
}

impl PageState {
    /// Child frames still loading with no request of theirs in flight.
    pub fn frames_parsing(&self) -> usize {
        self.frames_loading
            .iter()
            .filter(|f| !self.in_flight.values().any(|r| &r.frame_id == *f))
            .count()
    }
}

impl Default for PageState {
    fn default() -> Self {
        PageState {
            console: Vec::new(),
            exceptions: Vec::new(),
            dialogs: Vec::new(),
            in_flight: HashMap::new(),
            workers_starting: HashMap::new(),
            child_frames: HashSet::new(),
            frames_loading: HashSet::new(),
            last_network: Instant::now(),
            document_bytes: HashMap::new(),
            resource_types: HashMap::new(),
            main_navigations: 0,
            main_url: None,
            quiet_world: None,
            tools_world: None,
        }
    }
}

/// One request in flight.
#[derive(Debug, Clone)]
pub(crate) struct InFlight {
    pub url: String,
    pub loader_id: String,
    /// The frame that made it (empty when DevTools did not say: a worker's).
    pub frame_id: String,
    /// A document (a page or a frame): its received bytes are counted.
    pub document: bool,
}

/// Most documents whose received bytes are counted (a page that creates frames in a loop
/// cannot grow the map without bound).
const MAX_DOCUMENTS: usize = 1_000;

/// Most URLs whose resource type is kept (a page that requests endlessly stops adding).
const MAX_URLS: usize = 10_000;

/// The key a URL is kept under: its first 300 characters (a page's data URLs can be
/// megabytes long).
pub(crate) fn url_key(url: &str) -> String {
    url.chars().take(300).collect()
}

/// Caps so a page that logs in a loop cannot exhaust memory.
const MAX_LOG: usize = 10_000;

pub(crate) async fn run(
    conn: Connection,
    session: String,
    mut events: EventStream,
    state: Arc<Mutex<PageState>>,
) {
    // Dropped with this task (the page closed): the children's tasks stop too.
    let mut children: HashMap<String, ChildTask> = HashMap::new();
    while let Some(ev) = events.next().await {
        let p = &ev.params;
        match ev.method.as_str() {
            "Target.attachedToTarget" => {
                if let Some(child) = p.get("sessionId").and_then(Value::as_str) {
                    let task =
                        tokio::spawn(watch_child(conn.clone(), child.to_string(), state.clone()));
                    children.insert(child.to_string(), ChildTask(task));
                }
                continue;
            }
            "Target.detachedFromTarget" => {
                if let Some(child) = p.get("sessionId").and_then(Value::as_str) {
                    children.remove(child);
                }
                continue;
            }
            _ => {}
        }
        if ev.method == "Page.javascriptDialogOpening" {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("alert");
            let message = p.get("message").and_then(Value::as_str).unwrap_or("");
            push(
                &mut lock(&state).dialogs,
                Dialog {
                    kind: kind.to_string(),
                    message: message.to_string(),
                },
            );
            let mut answer = json!({ "accept": true });
            if kind == "prompt" {
                answer["promptText"] = p.get("defaultPrompt").cloned().unwrap_or(json!(""));
            }
            // Spawned: the answer must not hold up event processing.
            let conn = conn.clone();
            let session = session.clone();
            tokio::spawn(async move {
                let _ = conn
                    .call(
                        Some(&session),
                        "Page.handleJavaScriptDialog",
                        answer,
                        Duration::from_secs(5),
                    )
                    .await;
            });
            continue;
        }
        let mut st = lock(&state);
        match ev.method.as_str() {
            "Runtime.consoleAPICalled" => {
                let text = p
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|args| args.iter().map(remote_text).collect::<Vec<_>>().join(" "))
                    .unwrap_or_default();
                let frame = p
                    .get("stackTrace")
                    .and_then(|s| s.get("callFrames"))
                    .and_then(|f| f.get(0));
                let msg = ConsoleMessage {
                    level: p
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("log")
                        .to_string(),
                    text,
                    url: frame
                        .and_then(|f| f.get("url"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    line: frame
                        .and_then(|f| f.get("lineNumber"))
                        .and_then(Value::as_u64),
                };
                push(&mut st.console, msg);
            }
            "Runtime.exceptionThrown" => {
                let Some(d) = p.get("exceptionDetails") else {
                    continue;
                };
                let exc = PageException {
                    message: exception_text(d),
                    url: d.get("url").and_then(Value::as_str).map(str::to_string),
                    line: d.get("lineNumber").and_then(Value::as_u64),
                    column: d.get("columnNumber").and_then(Value::as_u64),
                };
                push(&mut st.exceptions, exc);
            }
            "Page.frameNavigated" => {
                let Some(frame) = p.get("frame") else {
                    continue;
                };
                if frame.get("parentId").is_none() {
                    st.main_navigations += 1;
                    st.main_url = frame.get("url").and_then(Value::as_str).map(str::to_string);
                    // Requests of the old document that will never report an end (cancelled
                    // with their loader) must not keep the new one from being quiet.
                    if let Some(loader) = frame.get("loaderId").and_then(Value::as_str) {
                        st.in_flight.retain(|_, r| r.loader_id == loader);
                    }
                }
            }
            "Network.requestWillBeSent" => request_started(&mut st, p),
            "Network.dataReceived" => data_received(&mut st, p),
            "Network.responseReceived" => response_received(&mut st, p),
            "Network.loadingFinished" | "Network.loadingFailed" => request_ended(&mut st, p),
            "ServiceWorker.workerVersionUpdated" => worker_versions(&mut st, p),
            "Page.frameAttached" => {
                if let Some(f) = p.get("frameId").and_then(Value::as_str)
                    && st.child_frames.len() < MAX_DOCUMENTS
                {
                    st.child_frames.insert(f.to_string());
                }
            }
            "Page.frameDetached" => {
                if let Some(f) = p.get("frameId").and_then(Value::as_str) {
                    st.child_frames.remove(f);
                    st.frames_loading.remove(f);
                }
            }
            "Page.frameStartedLoading" => {
                if let Some(f) = p.get("frameId").and_then(Value::as_str)
                    && st.child_frames.contains(f)
                {
                    st.frames_loading.insert(f.to_string());
                    st.last_network = Instant::now();
                }
            }
            "Page.frameStoppedLoading" => {
                if let Some(f) = p.get("frameId").and_then(Value::as_str)
                    && st.frames_loading.remove(f)
                {
                    st.last_network = Instant::now();
                }
            }
            _ => {}
        }
    }
}

/// Watches one child session's requests (they count for the page's quiet), then lets the
/// child run: it was paused at its start so that no request of it goes unseen.
async fn watch_child(conn: Connection, session: String, state: Arc<Mutex<PageState>>) {
    let mut events = conn.subscribe(Some(&session), CHILD_METHODS);
    // Both are sent at once, the enable first (DevTools runs a session's commands in order,
    // so no request of the child goes unseen), and the resume does not wait for the enable's
    // answer: a paused service worker answers it only once it runs, so waiting held the
    // worker (and every page that waited for it) for the whole call limit. Not every child
    // has a network domain; it is resumed either way.
    let _ = futures_util::future::join(
        conn.call(
            Some(&session),
            "Network.enable",
            network_settings(),
            CHILD_CALL_LIMIT,
        ),
        conn.call(
            Some(&session),
            "Runtime.runIfWaitingForDebugger",
            json!({}),
            CHILD_CALL_LIMIT,
        ),
    )
    .await;
    while let Some(ev) = events.next().await {
        let p = &ev.params;
        let mut st = lock(&state);
        match ev.method.as_str() {
            "Network.requestWillBeSent" => request_started(&mut st, p),
            "Network.dataReceived" => data_received(&mut st, p),
            "Network.responseReceived" => response_received(&mut st, p),
            _ => request_ended(&mut st, p),
        }
    }
}

/// A request started: in flight until it ends.
fn request_started(st: &mut PageState, p: &Value) {
    let Some(id) = p.get("requestId").and_then(Value::as_str) else {
        return;
    };
    let url = p
        .get("request")
        .and_then(|r| r.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let loader = p.get("loaderId").and_then(Value::as_str).unwrap_or("");
    let frame = p.get("frameId").and_then(Value::as_str).unwrap_or("");
    let kind = p.get("type").and_then(Value::as_str);
    let document = kind == Some("Document");
    let url = url_key(url);
    if let Some(kind) = kind
        && (st.resource_types.len() < MAX_URLS || st.resource_types.contains_key(&url))
    {
        st.resource_types.insert(url.clone(), kind.to_string());
    }
    st.in_flight.insert(
        id.to_string(),
        InFlight {
            url,
            loader_id: loader.to_string(),
            frame_id: frame.to_string(),
            document,
        },
    );
    st.last_network = Instant::now();
}

/// Body bytes arrived: counted for documents (a frame's document may be reported on its own
/// session).
fn data_received(st: &mut PageState, p: &Value) {
    let Some(id) = p.get("requestId").and_then(Value::as_str) else {
        return;
    };
    // A body still arriving is network activity, whether or not its request is still counted.
    st.last_network = Instant::now();
    let n = p.get("dataLength").and_then(Value::as_u64).unwrap_or(0);
    let url = match st.in_flight.get(id) {
        Some(r) if r.document => r.url.clone(),
        _ => return,
    };
    if st.document_bytes.len() < MAX_DOCUMENTS || st.document_bytes.contains_key(&url) {
        *st.document_bytes.entry(url).or_insert(0) += n;
    }
}

/// A response's headers arrived: a request other than a document is no longer waited for
/// (see the module's comment).
fn response_received(st: &mut PageState, p: &Value) {
    let Some(id) = p.get("requestId").and_then(Value::as_str) else {
        return;
    };
    if st.in_flight.get(id).is_some_and(|r| !r.document) {
        st.in_flight.remove(id);
    }
    st.last_network = Instant::now();
}

/// A request finished or failed (on whichever session reported it: a worker's script request
/// starts on the page's and ends on the worker's).
fn request_ended(st: &mut PageState, p: &Value) {
    if let Some(id) = p.get("requestId").and_then(Value::as_str) {
        st.in_flight.remove(id);
        st.last_network = Instant::now();
    }
}

/// Service worker versions changed state. Only the page's own origin counts: the domain
/// reports every worker of the browser context, and another page's (a test beside this one)
/// must not keep this one from being quiet.
fn worker_versions(st: &mut PageState, p: &Value) {
    let Some(versions) = p.get("versions").and_then(Value::as_array) else {
        return;
    };
    let page_origin = st.main_url.as_deref().and_then(origin_of);
    for v in versions {
        let (Some(id), Some(script), Some(status)) = (
            v.get("versionId").and_then(Value::as_str),
            v.get("scriptURL").and_then(Value::as_str),
            v.get("status").and_then(Value::as_str),
        ) else {
            continue;
        };
        let ours = page_origin.is_some() && origin_of(script) == page_origin;
        // `installed` without `skipWaiting` waits for the old worker's pages to close, which
        // this page does not wait for: only the steps that run on their own count.
        if ours && matches!(status, "new" | "installing" | "activating") {
            st.workers_starting.insert(id.to_string(), url_key(script));
        } else {
            st.workers_starting.remove(id);
        }
        st.last_network = Instant::now();
    }
    if st.workers_starting.len() > MAX_DOCUMENTS {
        st.workers_starting.clear();
    }
}

/// `scheme://host:port` of `url`, when it has one.
/// The serialized origin of `url` (`https://host:port`), or `None` for an opaque one
/// (`data:`, `about:`, `blob:` of an opaque origin) or an unparseable URL.
pub fn origin_of(url: &str) -> Option<String> {
    let o = url::Url::parse(url).ok()?.origin();
    o.is_tuple().then(|| o.ascii_serialization())
}

fn lock(state: &Mutex<PageState>) -> std::sync::MutexGuard<'_, PageState> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

fn push<T>(v: &mut Vec<T>, item: T) {
    if v.len() < MAX_LOG {
        v.push(item);
    }
}

/// A `RemoteObject` as console text.
fn remote_text(o: &Value) -> String {
    if let Some(v) = o.get("value") {
        return match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
    }
    for key in ["unserializableValue", "description"] {
        if let Some(s) = o.get(key).and_then(Value::as_str) {
            return s.to_string();
        }
    }
    o.get("type")
        .and_then(Value::as_str)
        .unwrap_or("undefined")
        .to_string()
}

/// The most useful text of an `ExceptionDetails`.
pub(crate) fn exception_text(d: &Value) -> String {
    let exc = d.get("exception");
    if let Some(desc) = exc
        .and_then(|e| e.get("description"))
        .and_then(Value::as_str)
    {
        return desc.to_string();
    }
    if let Some(v) = exc.and_then(|e| e.get("value")) {
        let shown = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return format!("Uncaught {shown}");
    }
    d.get("text")
        .and_then(Value::as_str)
        .unwrap_or("exception")
        .to_string()
}
