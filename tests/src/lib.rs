//! Shared helpers for the end-to-end tests: a loopback origin that serves fixture pages from
//! `tests/pages/` with the runtime injected and collects uploaded traces, a small sequential
//! case runner (one browser per test file), and trace queries for assertions.
//!
//! The origin stands in for the proxy until the proxy's own tests cover the same paths: it
//! serves `GET /__shepherd/runtime.js?s=SECRET&m=MODE` (403 without the secret), accepts
//! `POST /__shepherd/trace?s=SECRET&doc=DOC&seq=N` (first body per seq wins, 2 MiB limit) and
//! serves every other path from the pages directory. HTML gets
//! `<script src="/__shepherd/runtime.js?…">` right after the doctype. `?delay=MS` on any
//! request delays the answer (how race tests force an order, as EventRaceCommander's test
//! server did); `?status=N` answers with that status.

pub mod query;
pub mod scenarios;

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use shepherd_runtime::{Config, Mode};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use query::TraceQuery;

/// Largest trace batch the origin accepts.
const MAX_BATCH: usize = 2 * 1024 * 1024;

/// The fixture pages shipped with this crate.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pages")
}

#[derive(Default)]
struct State {
    /// doc -> seq -> body
    traces: BTreeMap<String, BTreeMap<u64, Bytes>>,
    /// Paths requested, in arrival order (without query).
    requests: Vec<String>,
}

struct Shared {
    root: PathBuf,
    secret: String,
    mode: Mutex<Mode>,
    /// false: serve pages untouched (the plain baseline of benchmarks)
    inject: std::sync::atomic::AtomicBool,
    /// record/replay: instrument `.js` files with the JS pass, as the proxy does
    instrument_js: std::sync::atomic::AtomicBool,
    state: Mutex<State>,
    extra: Mutex<HashMap<String, (String, Bytes)>>,
}

/// A loopback origin serving fixture pages with the runtime injected.
pub struct TestOrigin {
    addr: SocketAddr,
    ws_addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
    ws_task: JoinHandle<()>,
}

impl Drop for TestOrigin {
    fn drop(&mut self) {
        self.task.abort();
        self.ws_task.abort();
    }
}

/// A WebSocket echo server: every text message comes back prefixed with `echo:`.
async fn serve_ws(listener: TcpListener) {
    use futures_util::{SinkExt, StreamExt};
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let Ok(mut ws) = tokio_tungstenite::accept_async(stream).await else {
                return;
            };
            while let Some(Ok(msg)) = ws.next().await {
                match msg {
                    tokio_tungstenite::tungstenite::Message::Text(t) => {
                        let reply = format!("echo:{}", t.as_str());
                        if ws.send(reply.into()).await.is_err() {
                            return;
                        }
                    }
                    tokio_tungstenite::tungstenite::Message::Close(_) => {
                        let _ = ws.close(None).await;
                        return;
                    }
                    _ => {}
                }
            }
        });
    }
}

impl TestOrigin {
    /// Starts serving `root` on 127.0.0.1 (a free port) with runtime mode `mode`.
    pub async fn start(root: PathBuf, mode: Mode) -> Result<TestOrigin> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            root,
            secret: format!("test-secret-{}", addr.port()),
            mode: Mutex::new(mode),
            inject: std::sync::atomic::AtomicBool::new(true),
            instrument_js: std::sync::atomic::AtomicBool::new(false),
            state: Mutex::new(State::default()),
            extra: Mutex::new(HashMap::new()),
        });
        let s2 = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let s3 = s2.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| {
                        let s4 = s3.clone();
                        async move { Ok::<_, Infallible>(handle(s4, req).await) }
                    });
                    let _ = http1::Builder::new()
                        .keep_alive(true)
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        let ws_listener = TcpListener::bind("127.0.0.1:0").await?;
        let ws_addr = ws_listener.local_addr()?;
        let ws_task = tokio::spawn(serve_ws(ws_listener));
        Ok(TestOrigin {
            addr,
            ws_addr,
            shared,
            task,
            ws_task,
        })
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Port of the WebSocket echo server (`ws://127.0.0.1:PORT/`).
    pub fn ws_port(&self) -> u16 {
        self.ws_addr.port()
    }

    /// The per-run secret the runtime is rendered with.
    pub fn secret(&self) -> &str {
        &self.shared.secret
    }

    /// Changes the runtime mode for documents loaded from now on.
    pub fn set_mode(&self, mode: Mode) {
        if let Ok(mut m) = self.shared.mode.lock() {
            *m = mode;
        }
    }

    /// Whether HTML gets the runtime script tag (false: the plain baseline).
    pub fn set_inject(&self, on: bool) {
        self.shared
            .inject
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Record and replay: serve HTML through the HTML rewriter and `.js` files through the JS
    /// pass, as the proxy does (the full instrumentation pipeline).
    pub fn set_instrument_js(&self, on: bool) {
        self.shared
            .instrument_js
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Serves `body` at `path` (overrides files; for generated pages).
    pub fn put(&self, path: &str, content_type: &str, body: impl Into<Bytes>) {
        if let Ok(mut e) = self.shared.extra.lock() {
            e.insert(path.to_string(), (content_type.to_string(), body.into()));
        }
    }

    /// Forgets every uploaded trace and request.
    pub fn clear(&self) {
        if let Ok(mut st) = self.shared.state.lock() {
            *st = State::default();
        }
    }

    /// Paths requested so far (no query strings), in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .map(|s| s.requests.clone())
            .unwrap_or_default()
    }

    /// Documents that uploaded at least one batch.
    pub fn docs(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .map(|s| s.traces.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The contiguous prefix (seq 0, 1, …) of what `doc` uploaded.
    pub fn trace_bytes(&self, doc: &str) -> Vec<u8> {
        let Ok(st) = self.shared.state.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(batches) = st.traces.get(doc) {
            for (want, (seq, body)) in batches.iter().enumerate() {
                if *seq != want as u64 {
                    break;
                }
                out.extend_from_slice(body);
            }
        }
        out
    }

    /// Parses `doc`'s trace with shepherd-trace's reader.
    pub fn trace(&self, doc: &str) -> Result<TraceQuery> {
        let bytes = self.trace_bytes(doc);
        let trace = shepherd_trace::read_jsonl(&bytes[..])
            .with_context(|| format!("trace of {doc}:\n{}", String::from_utf8_lossy(&bytes)))?;
        Ok(TraceQuery::new(trace))
    }

    /// Waits until some document's trace satisfies `pred`, returning that trace.
    pub async fn wait_trace(
        &self,
        limit: Duration,
        mut pred: impl FnMut(&TraceQuery) -> bool,
    ) -> Result<TraceQuery> {
        let start = Instant::now();
        loop {
            for doc in self.docs() {
                if let Ok(t) = self.trace(&doc)
                    && pred(&t)
                {
                    return Ok(t);
                }
            }
            if start.elapsed() > limit {
                let mut dump = String::new();
                for doc in self.docs() {
                    dump.push_str(&format!("--- {doc}\n"));
                    if let Ok(t) = self.trace(&doc) {
                        dump.push_str(&t.dump());
                    }
                }
                bail!("no trace matched within {limit:?}; traces:\n{dump}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then_some(v)
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len() + 1
            && let Some(h) = s.get(i + 1..i + 3)
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn respond(status: StatusCode, ctype: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = ctype.parse() {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    if let Ok(v) = "no-store".parse() {
        r.headers_mut().insert(hyper::header::CACHE_CONTROL, v);
    }
    r
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "css" => "text/css",
        "png" => "image/png",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Inserts the runtime's script tag after the doctype (or at the very start).
pub fn inject(html: &str, tag: &str) -> String {
    let trimmed = html.trim_start();
    let lead = html.len() - trimmed.len();
    if trimmed.len() >= 9
        && trimmed[..9].eq_ignore_ascii_case("<!doctype")
        && let Some(end) = trimmed.find('>')
    {
        let at = lead + end + 1;
        return format!("{}{}{}", &html[..at], tag, &html[at..]);
    }
    format!("{tag}{html}")
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    if let Ok(mut st) = shared.state.lock() {
        st.requests.push(path.clone());
    }
    if let Some(ms) = query_param(&query, "delay").and_then(|v| v.parse::<u64>().ok()) {
        tokio::time::sleep(Duration::from_millis(ms.min(10_000))).await;
    }
    let secret_ok =
        query_param(&query, "s").map(percent_decode).as_deref() == Some(&*shared.secret);
    if path == "/__shepherd/runtime.js" {
        if !secret_ok {
            return respond(StatusCode::FORBIDDEN, "text/plain", "bad secret");
        }
        let mode = query_param(&query, "m")
            .and_then(Mode::parse)
            .unwrap_or(Mode::Record);
        let cfg = Config::new(mode, shared.secret.clone());
        return respond(
            StatusCode::OK,
            "text/javascript; charset=utf-8",
            shepherd_runtime::render(&cfg),
        );
    }
    if path == "/__shepherd/instrument" {
        if !secret_ok {
            return respond(StatusCode::FORBIDDEN, "text/plain", "bad secret");
        }
        return instrument_endpoint(&query, req).await;
    }
    if path == "/__shepherd/trace" {
        if !secret_ok {
            return respond(StatusCode::FORBIDDEN, "text/plain", "bad secret");
        }
        if req.method() != Method::POST {
            return respond(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "POST only");
        }
        let doc = query_param(&query, "doc").map(percent_decode);
        let seq = query_param(&query, "seq").and_then(|v| v.parse::<u64>().ok());
        let (Some(doc), Some(seq)) = (doc, seq) else {
            return respond(
                StatusCode::BAD_REQUEST,
                "text/plain",
                "doc and seq required",
            );
        };
        let body = match Limited::new(req.into_body(), MAX_BATCH).collect().await {
            Ok(b) => b.to_bytes(),
            Err(_) => return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large"),
        };
        if let Ok(mut st) = shared.state.lock() {
            st.traces.entry(doc).or_default().entry(seq).or_insert(body);
        }
        return respond(StatusCode::NO_CONTENT, "text/plain", Bytes::new());
    }
    let status = query_param(&query, "status")
        .and_then(|v| v.parse::<u16>().ok())
        .and_then(|v| StatusCode::from_u16(v).ok())
        .unwrap_or(StatusCode::OK);
    let extra = shared.extra.lock().ok().and_then(|e| e.get(&path).cloned());
    let (ctype, body) = match extra {
        Some((c, b)) => (c, b),
        None => match read_page(&shared.root, &path).await {
            Some((file, bytes)) => (content_type(&file).to_string(), Bytes::from(bytes)),
            None => return respond(StatusCode::NOT_FOUND, "text/plain", "not found"),
        },
    };
    let mode = shared.mode.lock().map(|m| *m).unwrap_or(Mode::Record);
    let injecting = shared.inject.load(std::sync::atomic::Ordering::SeqCst);
    if injecting
        && mode != Mode::Repair
        && ctype.starts_with("text/javascript")
        && shared
            .instrument_js
            .load(std::sync::atomic::Ordering::SeqCst)
    {
        let src = String::from_utf8_lossy(&body).into_owned();
        let name = path.clone();
        // As the proxy does: classic first, module when the classic parse fails (a file with
        // `import`/`export`).
        let job = move || {
            use shepherd_instrument_js::{Kind, Options, instrument};
            instrument(&src, &Options::new(Kind::Script, name.clone()))
                .or_else(|_| instrument(&src, &Options::new(Kind::Module, name)))
        };
        if let Ok(out) = tokio::task::spawn_blocking(job).await
            && let Ok(out) = out
        {
            return respond(status, &ctype, out.code);
        }
    }
    if injecting
        && mode != Mode::Repair
        && ctype.starts_with("text/html")
        && shared
            .instrument_js
            .load(std::sync::atomic::Ordering::SeqCst)
    {
        // The full pipeline: the HTML rewriter injects the runtime and instruments inline
        // scripts, `on*` handlers and `javascript:` URLs.
        let imode = if mode == Mode::Replay {
            shepherd_instrument::Mode::Replay
        } else {
            shepherd_instrument::Mode::Record
        };
        let cfg = shepherd_instrument::HtmlConfig::new(imode, shared.secret.clone());
        let input = body.clone();
        if let Ok(Ok((html, _, _))) = tokio::task::spawn_blocking(move || {
            shepherd_instrument::instrument_html(&input, cfg, &[])
        })
        .await
        {
            return respond(status, &ctype, html);
        }
    }
    if injecting && ctype.starts_with("text/html") {
        let tag = format!(
            "<script src=\"/__shepherd/runtime.js?s={}&m={}\"></script>",
            shared.secret, mode
        );
        let html = inject(&String::from_utf8_lossy(&body), &tag);
        return respond(status, &ctype, html);
    }
    respond(status, &ctype, body)
}

/// Marker a test puts into dynamic code to make the instrumenter fail (the runtime must then
/// run the original code natively).
pub const FAIL_INSTRUMENT: &str = "shepherd-test:fail-instrument";

/// `POST /__shepherd/instrument?kind=script|module|handler`: the JS pass on dynamic code, as the
/// proxy serves it (unchanged source when the pass refuses it).
async fn instrument_endpoint(query: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    use shepherd_instrument_js::Kind;
    let kind = match query_param(query, "kind").unwrap_or("script") {
        "script" => Kind::Script,
        "module" => Kind::Module,
        "handler" => Kind::Handler,
        "html" => return instrument_fragment(req).await,
        _ => return respond(StatusCode::BAD_REQUEST, "text/plain", "bad kind"),
    };
    let body = match Limited::new(req.into_body(), MAX_BATCH).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large"),
    };
    let src = String::from_utf8_lossy(&body).into_owned();
    if src.contains(FAIL_INSTRUMENT) {
        return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "refused");
    }
    let opts = shepherd_instrument_js::Options::new(kind, "dynamic".to_string());
    let out = tokio::task::spawn_blocking(move || {
        shepherd_instrument_js::instrument(&src, &opts)
            .map(|o| o.code)
            .unwrap_or(src)
    })
    .await;
    match out {
        Ok(code) => respond(StatusCode::OK, "text/javascript; charset=utf-8", code),
        Err(_) => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "failed"),
    }
}

/// `kind=html`: an HTML fragment (document.write, innerHTML) through the HTML rewriter in
/// fragment mode, as the proxy does.
async fn instrument_fragment(req: Request<Incoming>) -> Response<Full<Bytes>> {
    let body = match Limited::new(req.into_body(), MAX_BATCH).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return respond(StatusCode::PAYLOAD_TOO_LARGE, "text/plain", "too large"),
    };
    if body
        .windows(FAIL_INSTRUMENT.len())
        .any(|w| w == FAIL_INSTRUMENT.as_bytes())
    {
        return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "refused");
    }
    let out = tokio::task::spawn_blocking(move || {
        let mut cfg = shepherd_instrument::HtmlConfig::new(shepherd_instrument::Mode::Record, "");
        cfg.fragment = true;
        shepherd_instrument::instrument_html(&body, cfg, &[]).map(|(html, _, _)| html)
    })
    .await;
    match out {
        Ok(Ok(html)) => respond(StatusCode::OK, "text/html; charset=utf-8", html),
        _ => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "failed"),
    }
}

async fn read_page(root: &Path, path: &str) -> Option<(PathBuf, Vec<u8>)> {
    let rel = Path::new(path.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let mut file = root.join(rel);
    if path.ends_with('/') || tokio::fs::metadata(&file).await.ok()?.is_dir() {
        file = file.join("index.html");
    }
    let bytes = tokio::fs::read(&file).await.ok()?;
    Some((file, bytes))
}

/// The future a case returns.
pub type CaseFuture = Pin<Box<dyn Future<Output = Result<()>> + Send>>;

/// A test case: a name and an async body run against the shared harness.
pub type Case = (&'static str, fn(Arc<Harness>) -> CaseFuture);

/// One browser and one origin shared by every case of a test file.
pub struct Harness {
    /// The headless Chromium.
    pub browser: shepherd_browser::Browser,
    /// The loopback origin.
    pub origin: TestOrigin,
}

impl Harness {
    /// Opens `path` in a fresh tab, waits for `load`, and returns the tab.
    pub async fn open(&self, path: &str) -> Result<shepherd_browser::Page> {
        let page = self.browser.new_page().await?;
        let nav = page
            .navigate_with(&self.origin.url(path), Duration::from_secs(8))
            .await?;
        if !nav.loaded {
            bail!("{path} did not load");
        }
        Ok(page)
    }

    /// Evaluates `expr` with `C` bound to the control surface (promises are awaited).
    pub async fn control(
        &self,
        page: &shepherd_browser::Page,
        expr: &str,
    ) -> Result<serde_json::Value> {
        Ok(page
            .evaluate(&format!(
                "(() => {{ const C = __shepherd.control({:?}); return {expr}; }})()",
                self.origin.secret()
            ))
            .await?)
    }

    /// Ends the open action, uploads everything and returns the page's trace parsed.
    pub async fn flushed_trace(&self, page: &shepherd_browser::Page) -> Result<TraceQuery> {
        let doc = self
            .control(page, "C.flush().then(() => __shepherd.doc)")
            .await?;
        let doc = doc
            .as_str()
            .ok_or_else(|| anyhow!("no document id: {doc}"))?
            .to_string();
        self.origin.trace(&doc)
    }

    /// Opens `path`, waits `settle`, flushes and returns the trace (the tab is closed).
    pub async fn record(&self, path: &str, settle: Duration) -> Result<TraceQuery> {
        let page = self.open(path).await?;
        tokio::time::sleep(settle).await;
        let t = self.flushed_trace(&page).await;
        let _ = page.close().await;
        t
    }
}

/// Runs `cases` in order with one browser and one origin (a `harness = false` test's main).
/// Command-line words filter cases by substring; every case gets 10 s at most.
pub fn run_cases(mode: Mode, cases: &[Case]) -> std::process::ExitCode {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|(n, _)| filters.is_empty() || filters.iter().any(|f| n.contains(f.as_str())))
        .collect();
    println!("running {} tests", selected.len());
    if selected.is_empty() {
        return std::process::ExitCode::SUCCESS;
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        let browser = shepherd_browser::Browser::launch(shepherd_browser::LaunchOptions::default())
            .await
            .context("launching Chromium")?;
        let origin = TestOrigin::start(pages_dir(), mode).await?;
        let harness = Arc::new(Harness { browser, origin });
        let mut failed = Vec::new();
        for (name, case) in &selected {
            let start = Instant::now();
            let r = tokio::time::timeout(Duration::from_secs(10), case(harness.clone())).await;
            let outcome = match r {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(format!("{e:#}")),
                Err(_) => Err("timed out after 10 s".to_string()),
            };
            match outcome {
                Ok(()) => println!("test {name} ... ok ({:.2?})", start.elapsed()),
                Err(e) => {
                    println!("test {name} ... FAILED ({:.2?})\n{e}\n", start.elapsed());
                    failed.push(*name);
                }
            }
        }
        if let Ok(h) = Arc::try_unwrap(harness) {
            let Harness { browser, origin } = h;
            drop(origin);
            let _ = browser.close().await;
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(anyhow!("failed: {}", failed.join(", ")))
        }
    });
    match result {
        Ok(()) => {
            println!("test result: ok. {} passed", selected.len());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            println!("test result: FAILED. {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Declares a case function: `case!(name, |h| async move { ... })`.
#[macro_export]
macro_rules! case {
    ($name:ident, |$h:ident| $body:expr) => {
        fn $name($h: std::sync::Arc<$crate::Harness>) -> $crate::CaseFuture {
            Box::pin($body)
        }
    };
}
