//! Shared helpers for the end-to-end tests: a loopback origin that serves fixture pages from
//! `tests/pages/`, Shepherd itself in front of it (the real proxy, rewriter and runtime, one
//! stack per mode, started through `shepherd-session` like the binary starts them), a small
//! sequential case runner (one browser per test file), and trace queries for assertions.
//!
//! The origin is a plain file server: `?delay=MS` on any request delays the answer (how race
//! tests force an order, as EventRaceCommander's test server did), `?status=N` answers with
//! that status, `?split_at=N` sends the first N bytes of the body, then the rest 300 ms later
//! (a document the browser parses in two pieces, wherever N falls), `?csp=POLICY`
//! (percent-encoded) sends that `Content-Security-Policy` header, and every path it is asked
//! for is logged. Pages reach it through the proxy of
//! the current mode (each tab is an isolated browser context with that proxy), so what a test
//! sees is what a user of `shepherd record` / `serve` / `replay` gets. Traces uploaded by pages
//! are kept in memory (first batch per sequence number wins).
//!
//! Every wait for a condition (a page expression, a trace, a navigation) takes the limit an
//! idle machine needs and multiplies it by the patience factor ([`patience`],
//! `$SHEPHERD_TEST_PATIENCE`): it ends as soon as the condition holds, so a loaded machine
//! makes tests slower, never red. Each case's watchdog is a liveness guard of minutes.

pub mod explore_site;
pub mod query;
pub mod scenarios;

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use shepherd_proxy::{CertificateAuthority, ReplayOptions, TraceSink, UpstreamTrust};
use shepherd_runtime::Mode;
use shepherd_session::{MemoryTraces, Run, Stack, StackOptions};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use query::TraceQuery;
pub use shepherd_testkit::patience;

/// What one case of [`run_cases`] may take on an idle machine before its watchdog fires (times
/// the patience factor: minutes). Only a hung case comes near it.
pub const CASE_LIMIT: Duration = Duration::from_secs(60);

/// The fixture pages shipped with this crate.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pages")
}

/// What the file server shares with its connections.
struct Files {
    root: PathBuf,
    /// Paths requested, in arrival order (without query).
    requests: Mutex<Vec<String>>,
    extra: Mutex<HashMap<String, (String, Bytes)>>,
}

/// The stacks and what routes pages through them.
struct Proxies {
    mode: Mode,
    /// false: pages go straight to the origin (the plain baseline of benchmarks).
    inject: bool,
    record: Stack,
    serve: Stack,
    /// Built from the record stack's recording when replay is chosen.
    replay: Option<Stack>,
}

/// A loopback origin serving fixture pages, with Shepherd in front of it.
pub struct TestOrigin {
    addr: SocketAddr,
    ws_addr: SocketAddr,
    files: Arc<Files>,
    traces: Arc<MemoryTraces>,
    proxies: tokio::sync::Mutex<Proxies>,
    ca: Arc<CertificateAuthority>,
    secret: String,
    recording: PathBuf,
    _dir: tempfile::TempDir,
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
    /// Starts serving `root` on 127.0.0.1 (a free port), with Shepherd's record and serve
    /// stacks in front of it; pages open in `mode`.
    pub async fn start(root: PathBuf, mode: Mode) -> Result<TestOrigin> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let secret = format!("test-secret-{}", addr.port());
        let files = Arc::new(Files {
            root,
            requests: Mutex::new(Vec::new()),
            extra: Mutex::new(HashMap::new()),
        });
        let f2 = files.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let f3 = f2.clone();
                tokio::spawn(async move {
                    let svc = service_fn(move |req| {
                        let f4 = f3.clone();
                        async move { Ok::<_, Infallible>(serve_split(&f4, req).await) }
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
        let dir = tempfile::tempdir()?;
        let recording = dir.path().join("e2e.rec");
        let ca = Arc::new(CertificateAuthority::ephemeral()?);
        let traces = Arc::new(MemoryTraces::default());
        let opts = stack_options(&secret, &traces);
        let record = Stack::start(
            Run::Record {
                out: recording.clone(),
                trust: UpstreamTrust::default(),
            },
            opts.clone(),
            ca.clone(),
        )
        .await?;
        let serve = Stack::start(
            Run::Serve {
                trust: UpstreamTrust::default(),
            },
            opts,
            ca.clone(),
        )
        .await?;
        let mut proxies = Proxies {
            mode: Mode::Record,
            inject: true,
            record,
            serve,
            replay: None,
        };
        if mode == Mode::Replay {
            proxies.replay =
                Some(start_replay(&recording, &proxies.record, &secret, &traces, &ca).await?);
        }
        proxies.mode = mode;
        Ok(TestOrigin {
            addr,
            ws_addr,
            files,
            traces,
            proxies: tokio::sync::Mutex::new(proxies),
            ca,
            secret,
            recording,
            _dir: dir,
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

    /// The recording the record stack writes (exchanges only: traces go to memory). Call
    /// [`TestOrigin::flush`] first to have everything committed.
    pub fn recording(&self) -> &Path {
        &self.recording
    }

    /// The per-run secret every stack's runtime is rendered with.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Pages opened from now on go through the stack of `mode`. Replay serves what the record
    /// stack has recorded so far (a new replay stack each time, its queues fresh).
    pub async fn set_mode(&self, mode: Mode) -> Result<()> {
        let mut p = self.proxies.lock().await;
        if mode == Mode::Replay {
            let replay = start_replay(
                &self.recording,
                &p.record,
                &self.secret,
                &self.traces,
                &self.ca,
            )
            .await?;
            if let Some(old) = p.replay.replace(replay) {
                old.shutdown().await;
            }
        }
        p.mode = mode;
        Ok(())
    }

    /// Pages opened in repair mode from now on run under `policy` (shipped names or policy
    /// files, comma-separated; `None`: no policy): the serve stack is started again with it.
    pub async fn set_policy(&self, policy: Option<&str>) -> Result<()> {
        let set = match policy {
            Some(p) => Some(shepherd_policies::load(p).map_err(|e| anyhow!("{e}"))?),
            None => None,
        };
        let mut opts = stack_options(&self.secret, &self.traces);
        opts.policy = set;
        let serve = Stack::start(
            Run::Serve {
                trust: UpstreamTrust::default(),
            },
            opts,
            self.ca.clone(),
        )
        .await?;
        let old = std::mem::replace(&mut self.proxies.lock().await.serve, serve);
        old.shutdown().await;
        Ok(())
    }

    /// What repair policies cost per page, as the serve stack's operator side reports it.
    pub async fn repair_stats(&self) -> Vec<shepherd_proxy::PageSummary> {
        self.proxies.lock().await.serve.proxy().repair_stats()
    }

    /// Serves the same files over HTTPS on another port (a staging origin for reverse mode);
    /// returns its address and the certificate of the CA that signed it.
    pub async fn start_https(
        &self,
    ) -> Result<(
        SocketAddr,
        rustls_pki_types::CertificateDer<'static>,
        JoinHandle<()>,
    )> {
        let ca = CertificateAuthority::ephemeral()?;
        let mut tls = (*ca.server_config("127.0.0.1").await?).clone();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()]; // the file server speaks HTTP/1.1
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let files = self.files.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, files) = (acceptor.clone(), files.clone());
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = service_fn(move |req| {
                        let f = files.clone();
                        async move { Ok::<_, Infallible>(serve_file(&f, req).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok((addr, ca.cert_der().clone(), task))
    }

    /// Whether pages go through Shepherd at all (false: the plain baseline).
    pub async fn set_inject(&self, on: bool) {
        self.proxies.lock().await.inject = on;
    }

    /// The proxy address pages of the current mode use (`None`: straight to the origin).
    pub async fn proxy_for_pages(&self) -> Option<String> {
        let p = self.proxies.lock().await;
        if !p.inject {
            return None;
        }
        let stack = match p.mode {
            Mode::Record => &p.record,
            Mode::Repair => &p.serve,
            Mode::Replay => p.replay.as_ref()?,
        };
        Some(stack.proxy().addr().to_string())
    }

    /// `http://localhost:PORT{path}`: the same file server as another origin.
    pub fn other_origin_url(&self, path: &str) -> String {
        format!("http://localhost:{}{}", self.addr.port(), path)
    }

    /// The record stack's proxy (holds, counters, credentials), for tests that look behind a
    /// page's back.
    pub async fn record_proxy<R>(&self, f: impl FnOnce(&shepherd_proxy::ProxyHandle) -> R) -> R {
        f(self.proxies.lock().await.record.proxy())
    }

    /// Pieces of dynamic code and markup pages sent to the instrument endpoint so far.
    pub async fn instrument_requests(&self) -> u64 {
        let p = self.proxies.lock().await;
        let count = |s: &Stack| {
            s.proxy()
                .stats()
                .instrument_requests
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        count(&p.record) + count(&p.serve) + p.replay.as_ref().map_or(0, count)
    }

    /// Serves `body` at `path` (overrides files; for generated pages).
    pub fn put(&self, path: &str, content_type: &str, body: impl Into<Bytes>) {
        if let Ok(mut e) = self.files.extra.lock() {
            e.insert(path.to_string(), (content_type.to_string(), body.into()));
        }
    }

    /// Forgets every uploaded trace and request.
    pub fn clear(&self) {
        if let Ok(mut r) = self.files.requests.lock() {
            r.clear();
        }
        self.traces.clear();
    }

    /// Paths the origin was asked for so far (no query strings), in arrival order.
    pub fn requests(&self) -> Vec<String> {
        self.files
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    /// Documents that uploaded at least one batch.
    pub fn docs(&self) -> Vec<String> {
        self.traces.docs()
    }

    /// The contiguous prefix (seq 0, 1, …) of what `doc` uploaded.
    pub fn trace_bytes(&self, doc: &str) -> Vec<u8> {
        self.traces.bytes(doc)
    }

    /// Parses `doc`'s trace with shepherd-trace's reader.
    pub fn trace(&self, doc: &str) -> Result<TraceQuery> {
        let bytes = self.trace_bytes(doc);
        let trace = shepherd_trace::read_jsonl(&bytes[..])
            .with_context(|| format!("trace of {doc}:\n{}", String::from_utf8_lossy(&bytes)))?;
        Ok(TraceQuery::new(trace))
    }

    /// Waits until some document's trace satisfies `pred`, returning that trace (at most
    /// `limit` times the patience factor).
    pub async fn wait_trace(
        &self,
        limit: Duration,
        mut pred: impl FnMut(&TraceQuery) -> bool,
    ) -> Result<TraceQuery> {
        let limit = patience(limit);
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

    /// Commits what the record stack has queued for its recording.
    pub async fn flush(&self) {
        self.proxies.lock().await.record.proxy().flush();
    }
}

fn stack_options(secret: &str, traces: &Arc<MemoryTraces>) -> StackOptions {
    StackOptions {
        operator_secret: Some(secret.to_string()),
        trace_sink: Some(traces.clone() as Arc<dyn TraceSink>),
        ..StackOptions::default()
    }
}

/// A replay stack over what the record stack has stored so far.
async fn start_replay(
    recording: &Path,
    record: &Stack,
    secret: &str,
    traces: &Arc<MemoryTraces>,
    ca: &Arc<CertificateAuthority>,
) -> Result<Stack> {
    record.proxy().flush();
    Stack::start(
        Run::Replay {
            recording: recording.to_path_buf(),
            options: ReplayOptions::default(),
            trace_out: None,
        },
        stack_options(secret, traces),
        ca.clone(),
    )
    .await
}

fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (k == key).then_some(v)
    })
}

pub(crate) fn respond(
    status: StatusCode,
    ctype: &str,
    body: impl Into<Bytes>,
) -> Response<Full<Bytes>> {
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

pub(crate) fn content_type(path: &Path) -> &'static str {
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

/// How long the second piece of a `?split_at=N` answer waits.
const SPLIT_PAUSE: Duration = Duration::from_millis(300);

/// One request to the file server, its body in two pieces with `?split_at=N`.
async fn serve_split(
    files: &Files,
    req: Request<Incoming>,
) -> Response<BoxBody<Bytes, Infallible>> {
    let split = req
        .uri()
        .query()
        .and_then(|q| query_param(q, "split_at"))
        .and_then(|v| v.parse::<usize>().ok());
    let resp = serve_file(files, req).await;
    let Some(at) = split else {
        return resp.map(BodyExt::boxed);
    };
    let (parts, body) = resp.into_parts();
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    let at = at.min(bytes.len());
    let (first, rest) = (bytes.slice(..at), bytes.slice(at..));
    let pieces = futures_util::stream::once(async move { Ok(Frame::data(first)) }).chain(
        futures_util::stream::once(async move {
            tokio::time::sleep(SPLIT_PAUSE).await;
            Ok(Frame::data(rest))
        }),
    );
    Response::from_parts(parts, BodyExt::boxed(StreamBody::new(pieces)))
}

/// One request to the file server.
async fn serve_file(files: &Files, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    if let Ok(mut r) = files.requests.lock() {
        r.push(path.clone());
    }
    if let Some(ms) = query_param(&query, "delay").and_then(|v| v.parse::<u64>().ok()) {
        tokio::time::sleep(Duration::from_millis(ms.min(10_000))).await;
    }
    let status = query_param(&query, "status")
        .and_then(|v| v.parse::<u16>().ok())
        .and_then(|v| StatusCode::from_u16(v).ok())
        .unwrap_or(StatusCode::OK);
    let extra = files.extra.lock().ok().and_then(|e| e.get(&path).cloned());
    let (ctype, body) = match extra {
        Some((c, b)) => (c, b),
        None => match read_page(&files.root, &path).await {
            Some((file, bytes)) => (content_type(&file).to_string(), Bytes::from(bytes)),
            None => return respond(StatusCode::NOT_FOUND, "text/plain", "not found"),
        },
    };
    let mut r = respond(status, &ctype, body);
    if let Some(csp) = query_param(&query, "csp")
        && let Ok(v) = percent_encoding::percent_decode_str(csp)
            .decode_utf8_lossy()
            .parse()
    {
        r.headers_mut()
            .insert(hyper::header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

pub(crate) async fn read_page(root: &Path, path: &str) -> Option<(PathBuf, Vec<u8>)> {
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
    /// Opens `path` in a fresh tab (an isolated browser context whose proxy is the current
    /// mode's stack), waits for `load`, and returns the tab.
    pub async fn open(&self, path: &str) -> Result<shepherd_browser::Page> {
        self.open_url(&self.origin.url(path)).await
    }

    /// Like [`open`](Self::open) for a whole URL (another origin of the file server).
    pub async fn open_url(&self, url: &str) -> Result<shepherd_browser::Page> {
        let path = url;
        let page = self.new_tab().await?;
        let nav = page
            .navigate_with(url, patience(Duration::from_secs(8)))
            .await?;
        if !nav.loaded {
            bail!("{path} did not load");
        }
        Ok(page)
    }

    /// A fresh tab: an isolated browser context whose proxy is the current mode's stack.
    async fn new_tab(&self) -> Result<shepherd_browser::Page> {
        Ok(match self.origin.proxy_for_pages().await {
            Some(p) => {
                self.browser
                    .new_isolated_page(Some(&p), Some("<-loopback>"))
                    .await?
            }
            None => self.browser.new_page().await?,
        })
    }

    /// Opens `path` in a fresh tab of the current mode's proxy and returns as soon as the
    /// navigation is under way (the page is still loading: user input can come early).
    pub async fn open_early(&self, path: &str) -> Result<shepherd_browser::Page> {
        let page = self.new_tab().await?;
        page.call("Page.enable", serde_json::json!({})).await?;
        page.call(
            "Page.navigate",
            serde_json::json!({ "url": self.origin.url(path) }),
        )
        .await?;
        Ok(page)
    }

    /// Polls `expr` in `page` until it is `true` (or `limit`, times the patience factor,
    /// passes: an error naming it).
    pub async fn wait_for(
        &self,
        page: &shepherd_browser::Page,
        expr: &str,
        limit: Duration,
    ) -> Result<()> {
        let limit = patience(limit);
        let start = Instant::now();
        loop {
            if let Ok(v) = page.evaluate(expr).await
                && v == serde_json::Value::Bool(true)
            {
                return Ok(());
            }
            if start.elapsed() > limit {
                bail!("`{expr}` did not become true within {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// [`wait_for`](Self::wait_for) with `C` bound to the control surface in `expr`.
    pub async fn wait_for_control(
        &self,
        page: &shepherd_browser::Page,
        expr: &str,
        limit: Duration,
    ) -> Result<()> {
        let bound = format!(
            "(() => {{ const C = __shepherd.control({:?}); return {expr}; }})()",
            self.origin.secret()
        );
        self.wait_for(page, &bound, limit)
            .await
            .with_context(|| format!("waiting for `{expr}` on the control surface"))
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

    /// Waits until what `page` has uploaded of its trace satisfies `pred` (at most `limit`
    /// times the patience factor), then flushes and returns the whole trace. For pages whose
    /// progress shows only in the trace (a timer that changes nothing the test can read): the
    /// runtime uploads at most 300 ms after a record, so the trace is read without a flush,
    /// which would end the open action early.
    pub async fn trace_until(
        &self,
        page: &shepherd_browser::Page,
        limit: Duration,
        mut pred: impl FnMut(&TraceQuery) -> bool,
    ) -> Result<TraceQuery> {
        let doc = page.evaluate("__shepherd.doc").await?;
        let doc = doc
            .as_str()
            .ok_or_else(|| anyhow!("no document id: {doc}"))?
            .to_string();
        let limit = patience(limit);
        let start = Instant::now();
        loop {
            if let Ok(t) = self.origin.trace(&doc)
                && pred(&t)
            {
                return self.flushed_trace(page).await;
            }
            if start.elapsed() > limit {
                let t = self.flushed_trace(page).await?;
                if pred(&t) {
                    return Ok(t);
                }
                bail!(
                    "the trace of {doc} lacked what the test waits for after {limit:?}:\n{}",
                    t.dump()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens `path`, waits until its trace satisfies `pred` ([`trace_until`](Self::trace_until))
    /// and returns it flushed (the tab is closed).
    pub async fn record_trace_until(
        &self,
        path: &str,
        limit: Duration,
        pred: impl FnMut(&TraceQuery) -> bool,
    ) -> Result<TraceQuery> {
        let page = self.open(path).await?;
        let t = self.trace_until(&page, limit, pred).await;
        let _ = page.close().await;
        t
    }

    /// Opens `path`, waits until the page expression `ready` is true (at most `limit` times
    /// the patience factor), then 50 ms more, flushes and returns the trace (the tab is
    /// closed).
    pub async fn record_until(
        &self,
        path: &str,
        ready: &str,
        limit: Duration,
    ) -> Result<TraceQuery> {
        let page = self.open(path).await?;
        let t = self.trace_when(&page, ready, limit).await;
        let _ = page.close().await;
        t
    }

    /// Waits until the page expression `ready` is true (at most `limit` times the patience
    /// factor), then 50 ms more, and returns the flushed trace of `page`.
    pub async fn trace_when(
        &self,
        page: &shepherd_browser::Page,
        ready: &str,
        limit: Duration,
    ) -> Result<TraceQuery> {
        let limit = patience(limit);
        let start = Instant::now();
        while page.evaluate(ready).await? != serde_json::json!(true) {
            if start.elapsed() > limit {
                bail!("`{ready}` never held within {limit:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.flushed_trace(page).await
    }
}

/// Runs `cases` in order with one browser and one origin (a `harness = false` test's main).
/// The command line is read as cargo's harness reads it (libtest-mimic: a filter, `--exact`,
/// `--skip`, `--list`, …); a case that hangs fails after [`CASE_LIMIT`] times the patience
/// factor.
pub fn run_cases(mode: Mode, cases: &[Case]) -> std::process::ExitCode {
    run_cases_within(mode, cases, CASE_LIMIT)
}

/// [`run_cases`] with another watchdog per case: `limit` is what a case may take on an idle
/// machine (explorations run many executions), multiplied by the patience factor. The watchdog
/// is a liveness guard: the case's own waits say what went wrong long before it fires.
pub fn run_cases_within(mode: Mode, cases: &[Case], limit: Duration) -> std::process::ExitCode {
    let limit = patience(limit);
    let mut args = libtest_mimic::Arguments::from_args();
    // The cases share one browser and one origin and were written to run one at a time;
    // `--test-threads` still overrides.
    args.test_threads.get_or_insert(1);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => Arc::new(rt),
        Err(e) => {
            eprintln!("cannot start tokio: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let shared = Arc::new(SharedHarness {
        rt: rt.clone(),
        mode,
        harness: Mutex::new(None),
    });
    let trials = cases
        .iter()
        .map(|&(name, case)| {
            let shared = shared.clone();
            libtest_mimic::Trial::test(name, move || {
                shared.run(case, limit).map_err(libtest_mimic::Failed::from)
            })
        })
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    let harness = shared
        .harness
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    if let Some(Ok(h)) = harness
        && let Ok(Harness { browser, origin }) = Arc::try_unwrap(h)
    {
        rt.block_on(async {
            origin.flush().await;
            drop(origin);
            let _ = browser.close().await;
        });
    }
    conclusion.exit_code()
}

/// The harness of [`run_cases_within`], started by the first case that runs (a `--list` or a
/// filter that selects nothing starts no browser).
struct SharedHarness {
    rt: Arc<tokio::runtime::Runtime>,
    mode: Mode,
    /// `None` until first asked; then the harness, or why it could not start.
    harness: Mutex<Option<std::result::Result<Arc<Harness>, String>>>,
}

impl SharedHarness {
    fn get(&self) -> std::result::Result<Arc<Harness>, String> {
        let mut slot = self.harness.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert_with(|| {
            self.rt
                .block_on(async {
                    let defaults = shepherd_browser::LaunchOptions::default();
                    // Starting Chromium and answering a command are waits for a condition.
                    let browser =
                        shepherd_browser::Browser::launch(shepherd_browser::LaunchOptions {
                            startup_timeout: patience(defaults.startup_timeout),
                            command_timeout: patience(defaults.command_timeout),
                            ..defaults
                        })
                        .await
                        .context("launching Chromium")?;
                    let origin = TestOrigin::start(pages_dir(), self.mode).await?;
                    anyhow::Ok(Arc::new(Harness { browser, origin }))
                })
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
    }

    /// Runs one case within `limit`.
    fn run(
        &self,
        case: fn(Arc<Harness>) -> CaseFuture,
        limit: Duration,
    ) -> std::result::Result<(), String> {
        let harness = self.get()?;
        // The timer is made inside the runtime: `timeout` needs its clock.
        match self
            .rt
            .block_on(async { tokio::time::timeout(limit, case(harness)).await })
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("{e:#}")),
            Err(_) => Err(format!("timed out after {limit:?}")),
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
