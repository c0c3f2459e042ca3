//! Plugs the instrumenter (`shepherd-instrument`) into the proxy's rewrite hook. The proxy
//! decides when bodies pass through a hook and streams them; this adapter asks the
//! instrumenter what a response is to the browser ([`shepherd_instrument::classify`]: document,
//! classic script, module, worker, or code the browser refuses) and gives it the
//! instrumentation of the run's mode. Every script the browser runs is instrumented, or a log
//! line says why not.

use bytes::Bytes;
use http::HeaderMap;
use http::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use shepherd_instrument::{
    CspHeader, FetchContext, HtmlConfig, HtmlGates, HtmlInstrumenter, Mode, ResponseKind,
    ScriptCache, ScriptKind,
};
use shepherd_policies::compile::DocumentGates;
use shepherd_proxy::{HtmlStream, ResponseMeta, RewriteKind, Rewriter, RewrittenScript, ScriptJob};
use std::path::PathBuf;
use std::sync::Arc;

/// In-memory budget of the JavaScript cache (instrumented libraries are re-served constantly).
const CACHE_MEMORY: usize = 256 * 1024 * 1024;

/// The instrumenting rewrite hook.
pub struct InstrumentRewriter {
    mode: Mode,
    cache: Arc<ScriptCache>,
    /// The runtime configuration worker scripts are rendered with (the page credential is
    /// filled in per origin): a worker has no HTML to inject the runtime's `<script>` into.
    /// Replaced when repair policies are reloaded ([`InstrumentRewriter::set_worker_runtime`]).
    worker_runtime: std::sync::RwLock<shepherd_runtime::Config>,
    /// The parser's resources the run's repair policies may postpone: made holdable in the
    /// documents in those policies' scope. Replaced when policies are reloaded
    /// ([`InstrumentRewriter::set_gates`]).
    gates: std::sync::RwLock<DocumentGates>,
}

impl InstrumentRewriter {
    /// A rewriter for `mode` (record and replay rewrite JavaScript, repair only injects the
    /// runtime), caching instrumented scripts in memory and under `cache_dir`.
    pub fn new(mode: Mode, cache_dir: Option<PathBuf>) -> anyhow::Result<Self> {
        let cache = Arc::new(ScriptCache::new(mode, CACHE_MEMORY, cache_dir)?);
        // Workers get no operator secret: nothing controls them from DevTools.
        let worker_runtime = shepherd_runtime::Config::new(mode, "");
        Ok(InstrumentRewriter {
            mode,
            cache,
            worker_runtime: std::sync::RwLock::new(worker_runtime),
            gates: std::sync::RwLock::new(DocumentGates::default()),
        })
    }

    /// Makes the parser's resources in `gates` holdable in the documents it names (the run's
    /// policies may postpone them there; `docs/proxy.md`, "Parser gates").
    pub fn with_gates(self, gates: DocumentGates) -> Self {
        self.set_gates(gates);
        self
    }

    /// Makes the parser's resources in `gates` holdable in documents served from now on.
    pub fn set_gates(&self, gates: DocumentGates) {
        *self.gates.write().unwrap_or_else(|p| p.into_inner()) = gates;
    }

    /// Renders worker scripts' runtime from `config` (the run's seed, clock, determinism; its
    /// secret is dropped) instead of the defaults.
    pub fn with_worker_runtime(self, config: &shepherd_runtime::Config) -> Self {
        self.set_worker_runtime(config);
        self
    }

    /// Renders worker scripts served from now on from `config` (its secret dropped).
    pub fn set_worker_runtime(&self, config: &shepherd_runtime::Config) {
        let mut config = config.clone();
        config.secret = String::new();
        *self
            .worker_runtime
            .write()
            .unwrap_or_else(|p| p.into_inner()) = config;
    }

    /// A worker's script as workers need it: a dedicated worker's code instrumented like any
    /// script, a shared or service worker's left as it is, and in front of either the runtime
    /// with the origin's page credential, so the worker's own code and what it loads with
    /// `importScripts` find `__shepherd` (docs/runtime-api.md, "Runtime: workers"). The source
    /// map is dropped: the runtime in front shifts every line.
    fn worker_script(&self, job: ScriptJob) -> RewrittenScript {
        let dedicated = job.fetch_dest == "worker";
        let mut runtime = self
            .worker_runtime
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        runtime.token = Some(job.page_token.clone());
        let prefix = shepherd_runtime::render_prefix(&runtime);
        let url = job.url.clone();
        let code = if dedicated {
            self.script_only(job).body
        } else {
            job.source
        };
        let mut body = Vec::with_capacity(prefix.len() + 1 + code.len());
        body.extend_from_slice(prefix.as_bytes());
        body.push(b'\n');
        body.extend_from_slice(&code);
        tracing::debug!(
            url,
            dedicated,
            "worker script served with the runtime in front"
        );
        RewrittenScript {
            body: Bytes::from(body),
            source_map_id: None,
        }
    }

    /// A classic script or module through the JS pass (classic first when it may be either).
    fn script_only(&self, job: ScriptJob) -> RewrittenScript {
        let charset = job
            .content_type
            .as_deref()
            .and_then(shepherd_instrument::charset_label);
        let charset = charset.as_deref();
        let mut out = self
            .cache
            .instrument_script(&job.source, ScriptKind::Script, charset);
        if job.module && out.code.is_none() {
            // A CORS-mode script is a module or a classic script with `crossorigin`. Parsing
            // a classic script as a module would change its meaning (top-level `var`s stop
            // being globals), so it is tried as classic first; module syntax (import/export,
            // top-level await) fails that parse and lands here.
            out = self
                .cache
                .instrument_script(&job.source, ScriptKind::Module, charset);
        }
        match out.body_bytes() {
            Some(bytes) => RewrittenScript {
                body: Bytes::from(bytes),
                source_map_id: out.map_id.as_deref().map(str::to_owned),
            },
            None => {
                if let Some(reason) = &out.kept_reason {
                    tracing::info!(url = %job.url, %reason, "script served uninstrumented");
                }
                RewrittenScript {
                    body: job.source,
                    source_map_id: None,
                }
            }
        }
    }
}

impl InstrumentRewriter {
    /// An HTML fragment (`document.write`, `innerHTML`, …): its inline scripts, `on*`
    /// attributes and `javascript:` URLs instrumented, nothing injected; `None` when nothing
    /// changed.
    fn instrument_fragment(&self, source: &str) -> Option<String> {
        if !self.mode.rewrites_js() {
            return None;
        }
        let mut cfg = HtmlConfig::new(self.mode, "");
        cfg.fragment = true;
        cfg.cache = Some(self.cache.clone());
        let (out, _, _) = shepherd_instrument::instrument_html(source.as_bytes(), cfg, &[]).ok()?;
        let out = String::from_utf8(out).ok()?;
        (out != source).then_some(out)
    }
}

fn header_str<'a>(headers: &'a HeaderMap, name: &HeaderName) -> &'a str {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

/// `scheme://host[:port]` of `url` (the default port left out, as browsers serialize it).
fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

impl Rewriter for InstrumentRewriter {
    fn plan(&self, meta: &ResponseMeta<'_>, headers: &mut HeaderMap) -> RewriteKind {
        if meta.method == http::Method::HEAD || !meta.status.is_success() {
            return RewriteKind::None;
        }
        let fetch = FetchContext {
            dest: header_str(
                meta.request_headers,
                &HeaderName::from_static("sec-fetch-dest"),
            ),
            mode: header_str(
                meta.request_headers,
                &HeaderName::from_static("sec-fetch-mode"),
            ),
        };
        let nosniff = header_str(headers, &HeaderName::from_static("x-content-type-options"))
            .trim()
            .eq_ignore_ascii_case("nosniff");
        let content_type = header_str(headers, &CONTENT_TYPE);
        match shepherd_instrument::classify(content_type, nosniff, fetch) {
            ResponseKind::Document => RewriteKind::Html,
            ResponseKind::Script { maybe_module } if self.mode.rewrites_js() => {
                if !shepherd_instrument::is_javascript_mime(content_type) {
                    tracing::info!(
                        url = meta.url,
                        content_type,
                        "script served with a non-JavaScript type: the browser runs it, so it is instrumented"
                    );
                }
                // Chromium fetches module scripts in CORS mode and classic scripts in no-cors
                // mode, except classic scripts with `crossorigin`; `rewrite_script` sorts
                // those out.
                RewriteKind::Script {
                    module: maybe_module,
                }
            }
            // The runtime goes in front of it, and a dedicated worker's code through the pass
            // (classic first: a module worker's top-level script is fetched like a classic
            // one's).
            ResponseKind::WorkerScript if self.mode.rewrites_js() => {
                RewriteKind::Script { module: true }
            }
            ResponseKind::Refused(why) => {
                tracing::debug!(
                    url = meta.url,
                    content_type,
                    why,
                    "script the browser will not run"
                );
                RewriteKind::None
            }
            _ => RewriteKind::None,
        }
    }

    fn html(&self, meta: &ResponseMeta<'_>, headers: &mut HeaderMap) -> Box<dyn HtmlStream> {
        let mut cfg = HtmlConfig::new(self.mode, meta.page_token);
        cfg.runtime_version = meta.runtime_version.to_string();
        cfg.origin = origin_of(meta.url);
        cfg.content_type = headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        cfg.cache = Some(self.cache.clone());
        let gates = self
            .gates
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .for_page(meta.url);
        let gated = gates.any() && !meta.hold_token.is_empty();
        if gated {
            let token = meta.hold_token.to_string();
            cfg.gates = Some(HtmlGates {
                token: token.clone(),
                scripts: gates.scripts,
                inline_scripts: gates.inline_scripts,
                images: gates.images,
                hold_point: std::sync::Arc::new(move |n| {
                    shepherd_proxy::page_holds::hold_point(&token, n)
                }),
            });
        }
        let mut doc = HtmlInstrumenter::new(cfg);
        for (name, kind) in [
            ("content-security-policy", CspHeader::Enforce),
            ("content-security-policy-report-only", CspHeader::ReportOnly),
        ] {
            let values: Vec<String> = headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_owned))
                .collect();
            if values.is_empty() {
                continue;
            }
            headers.remove(name);
            for v in values {
                let adjusted = doc.adjust_csp_header(&v, kind);
                if let Ok(hv) = HeaderValue::from_str(&adjusted) {
                    headers.append(HeaderName::from_static(name), hv);
                }
            }
        }
        Box::new(DocumentStream {
            doc: Some(doc),
            url: meta.url.to_string(),
            gated,
        })
    }

    fn script(&self, job: ScriptJob) -> Bytes {
        self.rewrite_script(job).body
    }

    fn rewrite_script(&self, job: ScriptJob) -> RewrittenScript {
        if matches!(
            job.fetch_dest.as_str(),
            "worker" | "sharedworker" | "serviceworker"
        ) {
            return self.worker_script(job);
        }
        self.script_only(job)
    }

    fn source_map(&self, map_id: &str, script_url: &str) -> Option<String> {
        let map = self.cache.source_map(map_id)?;
        Some(name_sources(&map, script_url))
    }

    fn instrument(&self, kind: &str, source: &str) -> Option<String> {
        if kind == "html" {
            return self.instrument_fragment(source);
        }
        let kind: ScriptKind = kind.parse().ok()?;
        let out = self.cache.instrument_snippet(source, kind);
        out.code.map(|c| c.to_string())
    }
}

/// The cached map names its source after the content hash (one cache entry serves every URL
/// with the same bytes); devtools should show the script's URL instead.
fn name_sources(map: &str, script_url: &str) -> String {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(map) else {
        return map.to_string();
    };
    if script_url.is_empty() {
        return map.to_string();
    }
    if let Some(sources) = v.get_mut("sources").and_then(|s| s.as_array_mut()) {
        for s in sources.iter_mut() {
            if s.as_str().is_some_and(|n| n.starts_with("shepherd:")) {
                *s = serde_json::Value::String(script_url.to_string());
            }
        }
    }
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "file".into(),
            serde_json::Value::String(script_url.to_string()),
        );
    }
    v.to_string()
}

/// One document's HTML stream. If the instrumenter fails mid-document the rest passes through
/// untouched: a page must never break because of the proxy.
struct DocumentStream {
    doc: Option<HtmlInstrumenter>,
    url: String,
    /// The document's inline scripts are gated: its output has hold points.
    gated: bool,
}

impl HtmlStream for DocumentStream {
    fn hold_points(&self) -> bool {
        self.gated
    }

    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        let Some(doc) = self.doc.as_mut() else {
            return chunk.to_vec();
        };
        match doc.write(chunk) {
            Ok(out) => out,
            Err(e) => {
                tracing::warn!(url = %self.url, "HTML instrumentation stopped: {e}");
                self.doc = None;
                chunk.to_vec()
            }
        }
    }

    fn finish(&mut self) -> Vec<u8> {
        let Some(doc) = self.doc.take() else {
            return Vec::new();
        };
        match doc.finish() {
            Ok((out, report)) => {
                tracing::debug!(url = %self.url, ?report.counters, "document instrumented");
                out
            }
            Err(e) => {
                tracing::warn!(url = %self.url, "HTML instrumentation failed at the end: {e}");
                Vec::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const APP_JS: &str = "var count = 0;\nfunction tick() { count = count + 1; return count; }\n";

    /// The page's own map of `APP_JS` (line by line from `src/app.ts`).
    const APP_MAP: &str =
        r#"{"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAAA;AACA"}"#;

    /// A plain-HTTP origin: `/app.js` (`APP_JS` with its own `SourceMap` header), `/app.js.map`
    /// (`APP_MAP`), anything else `APP_JS` without a map.
    async fn js_origin() -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match tcp.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let path = String::from_utf8_lossy(&head)
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or("")
                        .to_string();
                    let (ctype, extra, body) = if path.ends_with("/app.js.map") {
                        ("application/json", "", APP_MAP)
                    } else if path.ends_with("/app.js") {
                        ("text/javascript", "SourceMap: app.js.map\r\n", APP_JS)
                    } else {
                        ("text/javascript", "", APP_JS)
                    };
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = tcp.write_all(resp.as_bytes()).await;
                });
            }
        });
        addr
    }

    /// A live proxy recording into `dir` whose responses go through `rewriter`.
    async fn recording_proxy(
        dir: &std::path::Path,
        rewriter: InstrumentRewriter,
    ) -> shepherd_proxy::ProxyHandle {
        let ca = Arc::new(shepherd_proxy::CertificateAuthority::ephemeral().unwrap());
        let mut config = shepherd_proxy::ProxyConfig::new(shepherd_proxy::ResponseSource::Live {
            trust: shepherd_proxy::UpstreamTrust::OnlyRoots(vec![]),
            record: Some(dir.join("r.rec")),
        });
        config.rewriter = Some(Arc::new(rewriter));
        shepherd_proxy::Proxy::start(config, ca).await.unwrap()
    }

    /// One absolute-form GET through the proxy: (head, body).
    async fn get(proxy: std::net::SocketAddr, url: &str) -> (String, Vec<u8>) {
        let host = url.split('/').nth(2).unwrap();
        exchange(
            proxy,
            format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
        .await
    }

    /// Sends `request` to the proxy and splits the answer: (lower-cased head, body).
    async fn exchange(proxy: std::net::SocketAddr, request: String) -> (String, Vec<u8>) {
        let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        tcp.read_to_end(&mut out).await.unwrap();
        let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
        (head, out[split + 4..].to_vec())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn instrumented_script_links_a_source_map_naming_its_url() {
        let origin = js_origin().await;
        let dir = tempfile::tempdir().unwrap();
        let proxy = recording_proxy(
            dir.path(),
            InstrumentRewriter::new(Mode::Record, None).unwrap(),
        )
        .await;
        let script_url = format!("http://{origin}/app.js");
        let (head, body) = get(proxy.addr(), &script_url).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_ne!(body, APP_JS.as_bytes(), "the script is instrumented");
        let map_path = head
            .lines()
            .find_map(|l| l.strip_prefix("sourcemap: "))
            .expect("a SourceMap header")
            .to_string();
        assert!(map_path.starts_with("/__shepherd/map/"), "{map_path}");
        assert_eq!(
            head.matches("sourcemap:").count(),
            1,
            "the page's own map header is replaced: {head}"
        );
        // The header is resolved against the script's URL; no secret needed. The page had a
        // map of its own, so ours is chained onto it and names the page's original source.
        let (head, map) = get(proxy.addr(), &format!("http://{origin}{map_path}")).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let map: serde_json::Value = serde_json::from_slice(&map).unwrap();
        assert_eq!(map["version"], 3);
        assert_eq!(
            map["sources"],
            serde_json::json!([format!("http://{origin}/src/app.ts")])
        );
        assert!(
            map["mappings"].as_str().is_some_and(|m| m.contains(';')),
            "{map}"
        );

        // Without a map of its own, the script's map names the script URL.
        let plain_url = format!("http://{origin}/plain.js");
        let (head, _) = get(proxy.addr(), &plain_url).await;
        let map_path = head
            .lines()
            .find_map(|l| l.strip_prefix("sourcemap: "))
            .expect("a SourceMap header")
            .to_string();
        let (_, map) = get(proxy.addr(), &format!("http://{origin}{map_path}")).await;
        let map: serde_json::Value = serde_json::from_slice(&map).unwrap();
        assert_eq!(map["sources"], serde_json::json!([plain_url]));
        assert!(
            map["mappings"].as_str().is_some_and(|m| !m.is_empty()),
            "{map}"
        );
        proxy.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_script_has_the_runtime_in_front_without_the_compile_hint() {
        let origin = js_origin().await;
        let dir = tempfile::tempdir().unwrap();
        let runtime = shepherd_runtime::Config::new(Mode::Record, "s");
        let rewriter = InstrumentRewriter::new(Mode::Record, None)
            .unwrap()
            .with_worker_runtime(&runtime);
        let proxy = recording_proxy(dir.path(), rewriter).await;
        let (head, body) = exchange(
            proxy.addr(),
            format!(
                "GET http://{origin}/worker.js HTTP/1.1\r\nHost: {origin}\r\nSec-Fetch-Dest: worker\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        let body = String::from_utf8(body).unwrap();
        // The hint is file-wide: in front of a worker's code it would compile all of it too.
        assert!(
            body.starts_with("(function () {"),
            "the runtime comes first: {}",
            &body[..body.len().min(80)]
        );
        assert!(!body.contains(shepherd_runtime::COMPILE_HINT.trim_end()));
        assert!(body.contains("count"), "the worker's own code follows");
        proxy.shutdown().await;
    }

    /// One POST through the proxy: (head, body).
    async fn post(proxy: std::net::SocketAddr, url: &str, body: &str) -> (String, Vec<u8>) {
        let host = url.split('/').nth(2).unwrap();
        exchange(
            proxy,
            format!(
                "POST {url} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        )
        .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn instrument_endpoint_html_kind_instruments_fragments() {
        let dir = tempfile::tempdir().unwrap();
        let proxy = recording_proxy(
            dir.path(),
            InstrumentRewriter::new(Mode::Record, None).unwrap(),
        )
        .await;
        // The endpoint answers on any origin, to that origin's page credential; nothing
        // listens on this one.
        let url = format!(
            "http://127.0.0.1:9/__shepherd/instrument?t={}&kind=html",
            proxy.page_token("http://127.0.0.1:9").unwrap()
        );
        let fragment = "<p>hi</p><script>seen = 1;</script><b onclick=\"go(&quot;a&quot;)\">b</b>";
        let (head, body) = post(proxy.addr(), &url, fragment).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert!(head.contains("content-type: text/html"), "{head}");
        let out = String::from_utf8(body).unwrap();
        let marker = shepherd_instrument::MARKER;
        assert!(out.starts_with("<p>hi</p><script>"), "{out}");
        assert_eq!(out.matches(marker).count(), 2, "script and handler: {out}");
        assert!(out.contains("<b onclick=\""), "{out}");
        assert!(out.contains("go(&quot;a&quot;)"), "{out}");
        assert!(!out.contains("runtime.js"), "no runtime injected: {out}");
        // Already instrumented markup comes back as it is; so does markup without code.
        let (_, again) = post(proxy.addr(), &url, &out).await;
        assert_eq!(String::from_utf8(again).unwrap(), out);
        let plain = "<ul><li class=x>1</li></ul>";
        let (head, same) = post(proxy.addr(), &url, plain).await;
        assert!(head.starts_with("http/1.1 200"), "{head}");
        assert_eq!(same, plain.as_bytes());
        // An unknown kind is refused.
        let bad = url.replace("kind=html", "kind=css");
        let (head, _) = post(proxy.addr(), &bad, plain).await;
        assert!(head.starts_with("http/1.1 400"), "{head}");
        proxy.shutdown().await;
    }

    #[test]
    fn origins() {
        assert_eq!(
            origin_of("https://a.test:8443/x/y?z"),
            Some("https://a.test:8443".into())
        );
        assert_eq!(origin_of("http://a.test"), Some("http://a.test".into()));
    }
}
