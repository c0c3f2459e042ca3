//! The scenarios' test origin: HTTPS with a CA of its own on 127.0.0.1, serving
//! `tests/scenarios/` (a directory is its `index.html`), with the delays and holds the current
//! scenario's manifest asks for, and a log of every request it answered. It does not know
//! about Shepherd: the proxy (record, serve or replay) sits in front of it, as in front of any
//! site.

use super::manifest::Resource;
use crate::{content_type, read_page, respond};
use anyhow::Result;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Limited, StreamBody};
use hyper::body::Frame;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::collections::HashSet;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Largest request body read (then dropped): scenarios post small forms.
const MAX_BODY: usize = 64 * 1024;

/// One request the origin answered.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Method (`GET`, `POST`).
    pub method: String,
    /// Path relative to the current scenario (`slow.js`), or the full path for other paths.
    pub path: String,
    /// Query string (without `?`), empty when none.
    pub query: String,
    /// When it arrived.
    pub at: Instant,
}

#[derive(Default)]
struct Current {
    /// Scenario directory name: requests under `/<name>/` get its rules.
    name: String,
    resources: Vec<Resource>,
    released: HashSet<String>,
    log: Vec<Seen>,
}

struct Shared {
    root: PathBuf,
    current: Mutex<Current>,
    /// Woken on every release and every request (steps wait for requests).
    changed: Notify,
}

/// A running scenario origin; stops when dropped.
pub struct ScenarioOrigin {
    addr: SocketAddr,
    ca_der: CertificateDer<'static>,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for ScenarioOrigin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScenarioOrigin {
    /// Starts serving `root` over HTTPS on a free port of 127.0.0.1, with a fresh CA.
    pub async fn start(root: PathBuf) -> Result<ScenarioOrigin> {
        let ca_key = KeyPair::generate()?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "Shepherd scenario origin CA");
        let ca_cert = ca_params.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate()?;
        let mut leaf_params = CertificateParams::new(vec!["localhost".to_string()])?;
        leaf_params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse()?));
        let leaf = leaf_params.signed_by(&leaf_key, &issuer)?;
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), ca_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )?;
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            root,
            current: Mutex::new(Current::default()),
            changed: Notify::new(),
        });
        let s2 = shared.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                let s3 = s2.clone();
                tokio::spawn(async move {
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let svc = hyper::service::service_fn(move |req| {
                        let s4 = s3.clone();
                        async move { Ok::<_, Infallible>(handle(s4, req).await) }
                    });
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        Ok(ScenarioOrigin {
            addr,
            ca_der: ca_cert.der().clone(),
            shared,
            task,
        })
    }

    /// `https://127.0.0.1:PORT/<name>/<rel>`.
    pub fn url(&self, name: &str, rel: &str) -> String {
        format!("https://{}/{name}/{rel}", self.addr)
    }

    /// The origin's CA certificate (DER), for the proxy's upstream trust.
    pub fn ca_der(&self) -> &CertificateDer<'static> {
        &self.ca_der
    }

    /// Serves scenario `name` with `resources` from now on: holds are armed again and the
    /// request log is cleared.
    pub fn configure(&self, name: &str, resources: &[Resource]) {
        if let Ok(mut c) = self.shared.current.lock() {
            *c = Current {
                name: name.to_string(),
                resources: resources.to_vec(),
                ..Current::default()
            };
        }
        self.shared.changed.notify_waiters();
    }

    /// Lets every held answer of `path` (scenario-relative) go, now and later.
    pub fn release(&self, path: &str) {
        if let Ok(mut c) = self.shared.current.lock() {
            c.released.insert(path.to_string());
        }
        self.shared.changed.notify_waiters();
    }

    /// Lets every held answer go (the end of a run).
    pub fn release_all(&self) {
        if let Ok(mut c) = self.shared.current.lock() {
            let paths: Vec<String> = c.resources.iter().map(|r| r.path.clone()).collect();
            c.released.extend(paths);
        }
        self.shared.changed.notify_waiters();
    }

    /// Requests answered (or being answered) since [`configure`](Self::configure).
    pub fn requests(&self) -> Vec<Seen> {
        self.shared
            .current
            .lock()
            .map(|c| c.log.clone())
            .unwrap_or_default()
    }

    /// Waits until a request for `path` (scenario-relative) has arrived, at most `limit`.
    pub async fn wait_request(&self, path: &str, limit: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let changed = self.shared.changed.notified();
            if self.requests().iter().any(|s| s.path == path) {
                return true;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return false;
            }
        }
    }
}

/// A body the origin answers with.
type Body = BoxBody<Bytes, Infallible>;

/// Waits until `path` is released in the current scenario, or `limit` has passed.
async fn released(shared: &Shared, path: &str, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let changed = shared.changed.notified();
        let done = shared
            .current
            .lock()
            .map(|c| c.released.contains(path))
            .unwrap_or(true);
        if done || tokio::time::timeout_at(deadline, changed).await.is_err() {
            return;
        }
    }
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let method = req.method().to_string();
    // What the rules of the current scenario say about this request.
    let rule = {
        let Ok(mut c) = shared.current.lock() else {
            return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "poisoned")
                .map(|b| b.boxed());
        };
        let prefix = format!("/{}/", c.name);
        let mut rel = path
            .strip_prefix(&prefix)
            .map_or_else(|| path.clone(), str::to_string);
        // A directory is its index.html.
        if rel.is_empty() || rel.ends_with('/') {
            rel.push_str("index.html");
        }
        c.log.push(Seen {
            method,
            path: rel.clone(),
            query: query.clone(),
            at: Instant::now(),
        });
        c.resources
            .iter()
            .find(|r| r.path == rel && r.query.as_deref().is_none_or(|q| query.contains(q)))
            .cloned()
    };
    shared.changed.notify_waiters();
    // Bodies are read (so clients finish sending) and dropped.
    let _ = Limited::new(req.into_body(), MAX_BODY).collect().await;
    let mut split = None;
    if let Some(r) = rule {
        if let Some(marker) = &r.hold_after {
            split = Some((marker.clone(), r.path.clone(), r.hold_limit_ms));
        } else if r.hold {
            released(&shared, &r.path, Duration::from_millis(r.hold_limit_ms)).await;
        } else if r.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(r.delay_ms)).await;
        }
    }
    let Some((file, bytes)) = read_page(&shared.root, &path).await else {
        return respond(StatusCode::NOT_FOUND, "text/plain", "not found").map(|b| b.boxed());
    };
    let Some((marker, held, limit)) = split else {
        return respond(StatusCode::OK, content_type(&file), bytes).map(|b| b.boxed());
    };
    // The top of the page at once, the rest once released.
    let bytes = Bytes::from(bytes);
    let cut = bytes
        .windows(marker.len().max(1))
        .position(|w| w == marker.as_bytes())
        .map_or(bytes.len(), |i| i + marker.len());
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(2);
    let (head, rest) = (bytes.slice(..cut), bytes.slice(cut..));
    tokio::spawn(async move {
        if tx.send(head).await.is_err() {
            return;
        }
        released(&shared, &held, Duration::from_millis(limit)).await;
        let _ = tx.send(rest).await;
    });
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    let template = respond(StatusCode::OK, content_type(&file), Bytes::new());
    let (parts, _) = template.into_parts();
    Response::from_parts(parts, StreamBody::new(frames).boxed())
}
