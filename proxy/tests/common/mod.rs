//! Test fixtures: a real HTTPS origin (hyper, h1 + h2, its own test CA), a browser-like client
//! that goes through the proxy with CONNECT + TLS trusting the Shepherd CA, and helpers.
#![allow(dead_code)]
// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use shepherd_proxy::{
    CertificateAuthority, Proxy, ProxyConfig, ProxyHandle, ResponseSource, UpstreamTrust,
};
use shepherd_recording::codec::{Coding, encode_all};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub type BoxBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

pub const PAGE: &str = "<!doctype html><html><head><title>t</title></head><body><p>one</p><script>a()</script><p>two</p><script src=\"/b.js\"></script><p>three</p></body></html>";

/// A test origin over TLS (or plain HTTP).
pub struct Origin {
    pub addr: SocketAddr,
    pub ca_der: CertificateDer<'static>,
    pub connections: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Origin {
    /// Starts an origin; `tls` picks HTTPS, `h2` whether h2 is offered in ALPN.
    pub async fn start(tls: bool, h2: bool) -> Origin {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "test origin CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().unwrap();
        let mut leaf_params =
            CertificateParams::new(vec!["localhost".to_string(), "origin.test".to_string()])
                .unwrap();
        leaf_params
            .subject_alt_names
            .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
        let mut server_config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), ca_cert.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .unwrap();
        server_config.alpn_protocols = if h2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let connections = Arc::new(AtomicUsize::new(0));
        let conns = connections.clone();
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut conn_tasks = Vec::new();
            loop {
                let (tcp, _) = tokio::select! {
                    _ = &mut rx => break,
                    a = listener.accept() => match a { Ok(x) => x, Err(_) => continue },
                };
                conns.fetch_add(1, Ordering::SeqCst);
                let acceptor = acceptor.clone();
                conn_tasks.push(tokio::spawn(async move {
                    let svc = hyper::service::service_fn(origin_handler);
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    if tls {
                        let Ok(stream) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let _ = builder
                            .serve_connection_with_upgrades(TokioIo::new(stream), svc)
                            .await;
                    } else {
                        let _ = builder
                            .serve_connection_with_upgrades(TokioIo::new(tcp), svc)
                            .await;
                    }
                }));
            }
            for t in conn_tasks {
                t.abort();
            }
        });
        Origin {
            addr,
            ca_der: ca_cert.der().clone(),
            connections,
            stop: Some(tx),
            task: Some(task),
        }
    }

    /// Stops the origin: the port refuses connections afterwards.
    pub async fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}

fn full(b: impl Into<Bytes>) -> BoxBody {
    Full::new(b.into()).boxed()
}

fn query(req: &Request<Incoming>, name: &str) -> Option<String> {
    req.uri().query()?.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k == name).then(|| v.to_string())
    })
}

async fn origin_handler(req: Request<Incoming>) -> Result<Response<BoxBody>, Infallible> {
    let path = req.uri().path().to_string();
    let mut resp = Response::new(full(Bytes::new()));
    let version = format!("{:?}", req.version());
    resp.headers_mut()
        .insert("x-origin-version", version.parse().unwrap());
    match path.as_str() {
        "/hello" => {
            *resp.body_mut() = full("hello from origin");
            resp.headers_mut()
                .insert("content-type", "text/plain".parse().unwrap());
        }
        "/page.html" => {
            *resp.body_mut() = full(PAGE);
            resp.headers_mut()
                .insert("content-type", "text/html; charset=utf-8".parse().unwrap());
        }
        "/app.js" => {
            *resp.body_mut() =
                full("function app() { return window.x; }\n//# sourceMappingURL=app.js.map\n");
            let h = resp.headers_mut();
            h.insert("content-type", "application/javascript".parse().unwrap());
            h.insert("sourcemap", "app.js.map".parse().unwrap());
            h.insert("x-sourcemap", "app.js.map".parse().unwrap());
        }
        "/app.js.map" => {
            // The page's own map: app.js line 0 col 0 comes from src/app.ts line 5 col 2.
            *resp.body_mut() = full(
                r#"{"version":3,"sources":["src/app.ts"],"names":[],"mappings":"AAKE","sourcesContent":["// app"]}"#,
            );
            resp.headers_mut()
                .insert("content-type", "application/json".parse().unwrap());
        }
        "/nomap.js" => {
            *resp.body_mut() = full("function nomap() {}\n");
            resp.headers_mut()
                .insert("content-type", "application/javascript".parse().unwrap());
        }
        "/time" => {
            // Differs on every call: replay must serve the recorded value.
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            *resp.body_mut() = full(format!("t={t}"));
        }
        "/gzip" | "/br" | "/zstd" | "/deflate" => {
            let coding = match path.as_str() {
                "/gzip" => Coding::Gzip,
                "/br" => Coding::Brotli,
                "/zstd" => Coding::Zstd,
                _ => Coding::Deflate,
            };
            let text = compressible_text();
            *resp.body_mut() = full(encode_all(coding, text.as_bytes()).unwrap());
            resp.headers_mut().insert(
                "content-encoding",
                path.trim_start_matches('/').parse().unwrap(),
            );
            resp.headers_mut()
                .insert("content-type", "text/html".parse().unwrap());
        }
        "/chunked" => {
            let chunks: Vec<Result<Frame<Bytes>, Infallible>> = (0..10)
                .map(|i| Ok(Frame::data(Bytes::from(format!("chunk{i};")))))
                .collect();
            let stream = futures_util::stream::iter(chunks);
            *resp.body_mut() = StreamBody::new(stream).boxed();
        }
        "/big" => {
            let mb: u64 = query(&req, "mb").and_then(|s| s.parse().ok()).unwrap_or(1);
            let chunk = Bytes::from(vec![b'x'; 1024 * 1024]);
            let stream = futures_util::stream::iter(
                (0..mb).map(move |_| Ok::<_, Infallible>(Frame::data(chunk.clone()))),
            );
            resp.headers_mut().insert(
                "content-length",
                (mb * 1024 * 1024).to_string().parse().unwrap(),
            );
            *resp.body_mut() = StreamBody::new(stream).boxed();
        }
        "/redirect" => {
            let host = req
                .headers()
                .get("host")
                .and_then(|h| h.to_str().ok())
                .unwrap_or("unknown")
                .to_string();
            *resp.status_mut() = StatusCode::FOUND;
            resp.headers_mut()
                .insert("location", format!("http://{host}/hello").parse().unwrap());
        }
        "/echo" => {
            let body = req.into_body().collect().await.unwrap().to_bytes();
            *resp.body_mut() = full(body);
        }
        "/cookie" => {
            resp.headers_mut().insert(
                "set-cookie",
                "sid=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT; Path=/"
                    .parse()
                    .unwrap(),
            );
            resp.headers_mut()
                .insert("date", "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap());
            *resp.body_mut() = full("cookie");
        }
        "/ws" => {
            let key = req
                .headers()
                .get("sec-websocket-key")
                .cloned()
                .unwrap_or_else(|| "x".parse().unwrap());
            let accept =
                tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
            // `?greet=1`: the origin speaks first.
            let greet = query(&req, "greet").is_some();
            let saw_extensions = req.headers().get("sec-websocket-extensions").cloned();
            let upgrade = hyper::upgrade::on(req);
            tokio::spawn(async move {
                let Ok(up) = upgrade.await else { return };
                let mut ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
                    TokioIo::new(up),
                    tokio_tungstenite::tungstenite::protocol::Role::Server,
                    None,
                )
                .await;
                use futures_util::{SinkExt, StreamExt};
                if greet
                    && ws
                        .send(tokio_tungstenite::tungstenite::Message::text("welcome"))
                        .await
                        .is_err()
                {
                    return;
                }
                while let Some(Ok(msg)) = ws.next().await {
                    if (msg.is_text() || msg.is_binary()) && ws.send(msg).await.is_err() {
                        break;
                    }
                }
            });
            *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
            let h = resp.headers_mut();
            h.insert("connection", "upgrade".parse().unwrap());
            h.insert("upgrade", "websocket".parse().unwrap());
            h.insert("sec-websocket-accept", accept.parse().unwrap());
            if let Some(ext) = saw_extensions {
                h.insert("x-origin-saw-extensions", ext);
            }
        }
        _ => {
            *resp.status_mut() = StatusCode::NOT_FOUND;
        }
    }
    Ok(resp)
}

pub fn compressible_text() -> String {
    (0..5000)
        .map(|i| format!("<p>paragraph {i}</p>\n"))
        .collect()
}

/// Which response source a test proxy has.
pub enum Source {
    /// Live origins.
    Serve,
    /// Live origins, recorded into this file.
    Record(std::path::PathBuf),
    /// This recording.
    Replay(std::path::PathBuf, shepherd_proxy::ReplayOptions),
}

/// Starts a proxy trusting only the origin's CA upstream.
pub async fn start_proxy(
    source: Source,
    origin_ca: Option<&CertificateDer<'static>>,
    tweak: impl FnOnce(&mut ProxyConfig),
) -> (ProxyHandle, Arc<CertificateAuthority>) {
    let ca = Arc::new(CertificateAuthority::ephemeral().unwrap());
    let trust = match origin_ca {
        Some(c) => UpstreamTrust::OnlyRoots(vec![c.clone()]),
        None => UpstreamTrust::OnlyRoots(vec![]),
    };
    let source = match source {
        Source::Serve => ResponseSource::Live {
            trust,
            record: None,
        },
        Source::Record(path) => ResponseSource::Live {
            trust,
            record: Some(path),
        },
        Source::Replay(path, options) => ResponseSource::Recording {
            path,
            options,
            trace_out: None,
        },
    };
    let mut config = ProxyConfig::new(source);
    config.runtime_js = bytes::Bytes::from_static(b"/* runtime */");
    tweak(&mut config);
    let handle = Proxy::start(config, ca.clone()).await.unwrap();
    (handle, ca)
}

/// Anything that names the root a test client trusts.
pub trait TrustRoot {
    fn root(&self) -> CertificateDer<'static>;
}

impl TrustRoot for CertificateAuthority {
    fn root(&self) -> CertificateDer<'static> {
        self.cert_der().clone()
    }
}

impl TrustRoot for Arc<CertificateAuthority> {
    fn root(&self) -> CertificateDer<'static> {
        self.cert_der().clone()
    }
}

impl TrustRoot for CertificateDer<'static> {
    fn root(&self) -> CertificateDer<'static> {
        self.clone()
    }
}

/// A TLS stream to `authority` through the proxy's CONNECT, trusting the Shepherd CA.
pub async fn connect_tls(
    proxy: SocketAddr,
    authority: &str,
    server_name: &str,
    ca: &(impl TrustRoot + ?Sized),
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut tcp = TcpStream::connect(proxy).await.unwrap();
    tcp.write_all(format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        let n = tcp.read(&mut byte).await.unwrap();
        assert_eq!(n, 1, "proxy closed during CONNECT");
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf);
    assert!(head.starts_with("HTTP/1.1 200"), "CONNECT answer: {head}");
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.root()).unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = ServerName::try_from(server_name.to_string()).unwrap();
    connector.connect(name, tcp).await.unwrap()
}

/// One HTTP connection through the proxy (h1 or h2 after ALPN).
pub enum Client {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

impl Client {
    pub async fn https(
        proxy: SocketAddr,
        authority: &str,
        ca: &(impl TrustRoot + ?Sized),
        alpn: &[&[u8]],
    ) -> Client {
        let host = authority.rsplit_once(':').unwrap().0;
        let tls = connect_tls(proxy, authority, host, ca, alpn).await;
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let io = TokioIo::new(tls);
        if h2 {
            let (send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .unwrap();
            tokio::spawn(conn);
            Client::H2(send)
        } else {
            let (send, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(conn);
            Client::H1(send)
        }
    }

    /// Sends a request; `uri` is absolute for h2 and origin-form plus Host for h1.
    pub async fn send(&mut self, req: Request<Full<Bytes>>) -> Response<Incoming> {
        match self {
            Client::H1(s) => {
                let (mut parts, body) = req.into_parts();
                if let Some(a) = parts.uri.authority() {
                    parts.headers.insert("host", a.as_str().parse().unwrap());
                }
                parts.uri = parts
                    .uri
                    .path_and_query()
                    .unwrap()
                    .as_str()
                    .parse()
                    .unwrap();
                s.ready().await.unwrap();
                s.send_request(Request::from_parts(parts, body))
                    .await
                    .unwrap()
            }
            Client::H2(s) => {
                let (mut parts, body) = req.into_parts();
                parts.version = http::Version::HTTP_2;
                s.ready().await.unwrap();
                s.send_request(Request::from_parts(parts, body))
                    .await
                    .unwrap()
            }
        }
    }

    pub async fn get(&mut self, url: &str) -> (Response<()>, Bytes) {
        let req = Request::get(url).body(Full::new(Bytes::new())).unwrap();
        let resp = self.send(req).await;
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        (Response::from_parts(parts, ()), bytes)
    }
}

/// A raw HTTP/1.1 exchange with the proxy (plain proxying, malformed input).
pub async fn raw_http(proxy: SocketAddr, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(proxy).await.unwrap();
    tcp.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let _ = tokio::time::timeout(
        shepherd_testkit::patience(std::time::Duration::from_secs(5)),
        tcp.read_to_end(&mut out),
    )
    .await;
    String::from_utf8_lossy(&out).into_owned()
}

/// One request on the proxy's control listener with `bearer` as the operator secret (`None`:
/// no Authorization header): (status, body).
pub async fn control_request(
    proxy: &ProxyHandle,
    method: &str,
    path_and_query: &str,
    bearer: Option<&str>,
) -> (u16, String) {
    let addr = proxy
        .control_addr()
        .expect("the proxy has a control listener");
    let auth = bearer.map_or(String::new(), |b| format!("Authorization: Bearer {b}\r\n"));
    let raw = raw_http(
        addr,
        format!(
            "{method} {path_and_query} HTTP/1.1\r\nHost: control\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = raw
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The same on the control listener with the operator secret.
pub async fn operator(proxy: &ProxyHandle, method: &str, path_and_query: &str) -> (u16, String) {
    control_request(proxy, method, path_and_query, Some(proxy.operator_secret())).await
}

/// Resident memory of this process in bytes (Linux).
pub fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
