//! Listener and connections: the outer HTTP server that browsers talk to as a proxy, CONNECT
//! tunnels with a protocol sniff (TLS is intercepted, plain HTTP served, anything else piped),
//! and the inner HTTP/1.1 + HTTP/2 server run on each intercepted stream.

use crate::body::ProxyBody;
use crate::ca::CertificateAuthority;
use crate::config::ProxyConfig;
use crate::error::ProxyError;
use crate::holds::Holds;
use crate::page_holds::PageHolds;
use crate::repair_stats::RepairStats;
use crate::respond;
use crate::rewind::Rewind;
use crate::route::CA_HOST;
use crate::secret::Secrets;
use crate::source::Source;
use crate::state::{Shared, Target};
use crate::stats::Stats;
use bytes::BytesMut;
use http::uri::{Authority, Scheme};
use http::{Method, Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A proxy that is accepting connections.
pub(crate) struct Running {
    pub addr: SocketAddr,
    pub control_addr: Option<SocketAddr>,
    pub shared: Arc<Shared>,
    pub shutdown: tokio::sync::oneshot::Sender<()>,
    pub task: tokio::task::JoinHandle<()>,
}

/// Binds and starts accepting connections on the current tokio runtime.
pub(crate) async fn start(
    config: ProxyConfig,
    ca: Arc<CertificateAuthority>,
) -> Result<Running, ProxyError> {
    if !config.listen.ip().is_loopback() && config.auth.is_none() && config.allow.is_none() {
        return Err(ProxyError::NeedsAuth(config.listen));
    }
    let stats = Stats::default();
    let (source, source_traces) = Source::open(config.source, &stats)?;
    let traces = config.trace_sink.or(source_traces);
    let reverse = match &config.reverse {
        None => None,
        Some(uri) => {
            let scheme = uri.scheme().cloned().unwrap_or(Scheme::HTTPS);
            let authority = uri
                .authority()
                .cloned()
                .ok_or_else(|| ProxyError::Config(format!("--reverse {uri}: no host")))?;
            Some(Target { scheme, authority })
        }
    };
    let secrets = Secrets::new(config.operator_secret);
    let limits = config.limits;
    let mut http = auto::Builder::new(TokioExecutor::new());
    http.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .keep_alive(true);
    http.http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.max_h2_streams)
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
        .adaptive_window(true);
    let listener =
        bind(config.listen, limits.listen_backlog).map_err(|source| ProxyError::Listen {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ProxyError::Listen {
        addr: config.listen,
        source,
    })?;
    let described = source.describe();
    let shared = Arc::new(Shared {
        secrets,
        ca,
        source,
        reverse,
        auth: config.auth,
        allow: config.allow,
        site_certs: config.site_certs,
        runtime_js: std::sync::RwLock::new(crate::state::RuntimeScript::new(config.runtime_js)),
        metrics: crate::metrics::Metrics::default(),
        rewriter: config.rewriter,
        traces,
        holds: Arc::new(Holds::default()),
        page_holds: Arc::new(PageHolds::new(config.page_hold_limit)),
        repair: RepairStats::default(),
        stats,
        limits,
        http,
    });
    let control_addr = match config.control_listen {
        None => None,
        Some(at) => Some(
            crate::control::listen(at, shared.clone())
                .await
                .map_err(|source| ProxyError::Listen { addr: at, source })?,
        ),
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, shared.clone(), rx));
    tracing::info!(%addr, source = described, "proxy listening");
    Ok(Running {
        addr,
        control_addr,
        shared,
        shutdown: tx,
        task,
    })
}

/// A listening socket with `backlog` (tokio's `bind` listens with 1024, which a burst of
/// thousands of connections overflows: the lost SYNs come back only after a second).
fn bind(addr: SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
}

/// A client connection's place under [`Limits::max_connections`](crate::limits::Limits), shared
/// by the connection and the tunnels it opens.
type Slot = Arc<OwnedSemaphorePermit>;

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let slots = Arc::new(Semaphore::new(shared.limits.max_connections));
    let waiting = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let accepted = tokio::select! {
            _ = &mut stop => break,
            a = listener.accept() => a,
        };
        let (tcp, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // Out of file descriptors and similar: back off instead of spinning.
                tracing::warn!("accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Some(allow) = &shared.allow
            && !allow.allows(peer.ip())
        {
            // Closed before a byte is read: nothing outside the allowed networks reaches the
            // site or the proxy. Logged at debug: a scan would flood the log.
            shared.stats.refused_network.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%peer, "connection from outside --allow, closed");
            drop(tcp);
            continue;
        }
        shared.stats.connections.fetch_add(1, Ordering::Relaxed);
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            // Over the cap: wait for a slot, a bounded number of connections for a bounded
            // time; beyond that, close at once so the client learns it now.
            Err(_) if waiting.fetch_add(1, Ordering::Relaxed) < shared.limits.max_waiting => None,
            Err(_) => {
                waiting.fetch_sub(1, Ordering::Relaxed);
                tracing::warn!(%peer, "connection limit and wait queue full, closing");
                shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                continue;
            }
        };
        let shared = shared.clone();
        let slots = slots.clone();
        let waiting = waiting.clone();
        tokio::spawn(async move {
            let permit = match permit {
                Some(p) => p,
                None => {
                    let got =
                        tokio::time::timeout(shared.limits.wait_timeout, slots.acquire_owned())
                            .await;
                    waiting.fetch_sub(1, Ordering::Relaxed);
                    match got {
                        Ok(Ok(p)) => p,
                        _ => {
                            tracing::warn!(%peer, "no connection slot within the wait, closing");
                            shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
                            return;
                        }
                    }
                }
            };
            let _ = tcp.set_nodelay(true);
            let _open = OpenConnection::new(&shared.stats);
            serve_client(shared.clone(), tcp, peer, Arc::new(permit)).await;
        });
    }
}

/// Counts a client connection as open for as long as it lives.
struct OpenConnection<'a>(&'a Stats);

impl<'a> OpenConnection<'a> {
    fn new(stats: &'a Stats) -> Self {
        stats.open_connections.fetch_add(1, Ordering::Relaxed);
        OpenConnection(stats)
    }
}

impl Drop for OpenConnection<'_> {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A client connection: TLS straight away (reverse / DNS-mapped use) or proxy HTTP. `slot` is
/// the connection's place under the cap: CONNECT tunnels outlive the outer connection (hyper
/// finishes it at the upgrade), so each tunnel keeps a clone until it closes.
async fn serve_client(shared: Arc<Shared>, tcp: TcpStream, peer: SocketAddr, slot: Slot) {
    let mut first = [0u8; 1];
    let peeked = tokio::time::timeout(shared.limits.header_timeout, tcp.peek(&mut first)).await;
    match peeked {
        Ok(Ok(1)) if first[0] == 0x16 => {
            let fallback = shared.reverse.clone();
            intercept_tls(shared, tcp, peer, fallback, None).await;
        }
        Ok(Ok(_)) => {
            let svc_shared = shared.clone();
            let service = service_fn(move |req| outer(svc_shared.clone(), peer, slot.clone(), req));
            let conn = shared
                .http
                .serve_connection_with_upgrades(TokioIo::new(tcp), service);
            if let Err(e) = conn.await {
                tracing::debug!(%peer, "client connection: {e}");
            }
        }
        _ => {}
    }
}

/// Requests on the outer listener: CONNECT, absolute-form (plain HTTP proxying), origin-form
/// (reverse mode, the CA page, the reserved namespace).
async fn outer(
    shared: Arc<Shared>,
    peer: SocketAddr,
    slot: Slot,
    req: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    shared.stats.requests.fetch_add(1, Ordering::Relaxed);
    if req.method() == Method::CONNECT {
        if let Some(resp) = check_proxy_auth(&shared, &req) {
            return Ok(resp);
        }
        return Ok(connect(shared, peer, slot, req));
    }
    if let (Some(scheme), Some(authority)) = (req.uri().scheme(), req.uri().authority()) {
        let target = Target {
            scheme: scheme.clone(),
            authority: authority.clone(),
        };
        // The CA page must be reachable before a browser is configured with credentials.
        if target.host() != CA_HOST
            && let Some(resp) = check_proxy_auth(&shared, &req)
        {
            return Ok(resp);
        }
        return Ok(crate::route::handle(shared, target, req).await);
    }
    if let Some(target) = shared.reverse.clone() {
        if let Some(resp) = check_visitor_auth(&shared, &req) {
            return Ok(resp);
        }
        return Ok(crate::route::handle(shared, target, req).await);
    }
    // Not a proxy request. The reserved namespace and the CA page still answer, on the
    // authority the client named.
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<Authority>().ok());
    let path = req.uri().path();
    if let Some(authority) = host
        && (authority.host() == CA_HOST || path.starts_with("/__shepherd/"))
    {
        let target = Target {
            scheme: Scheme::HTTP,
            authority,
        };
        return Ok(crate::route::handle(shared, target, req).await);
    }
    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
    Ok(respond::simple(
        StatusCode::BAD_REQUEST,
        "Shepherd is a proxy: configure it as the browser's HTTP proxy (see http://shepherd.ca/)\n",
    ))
}

/// In reverse mode every visitor sends the credentials (`Authorization: Basic`), on plain
/// HTTP and on TLS alike; pages' own calls to the reserved namespace carry their page
/// credential instead.
fn check_visitor_auth(shared: &Shared, req: &Request<Incoming>) -> Option<Response<ProxyBody>> {
    let auth = shared.auth.as_ref()?;
    if auth.check(req.headers().get(header::AUTHORIZATION))
        || req.uri().path().starts_with("/__shepherd/")
    {
        return None;
    }
    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
    Some(respond::simple_with(
        StatusCode::UNAUTHORIZED,
        "authentication required\n",
        Some((header::WWW_AUTHENTICATE, "Basic realm=\"shepherd\"")),
    ))
}

fn check_proxy_auth(shared: &Shared, req: &Request<Incoming>) -> Option<Response<ProxyBody>> {
    let auth = shared.auth.as_ref()?;
    if auth.check(req.headers().get(header::PROXY_AUTHORIZATION)) {
        return None;
    }
    shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
    Some(respond::simple_with(
        StatusCode::PROXY_AUTHENTICATION_REQUIRED,
        "proxy authentication required\n",
        Some((header::PROXY_AUTHENTICATE, "Basic realm=\"shepherd\"")),
    ))
}

fn connect(
    shared: Arc<Shared>,
    peer: SocketAddr,
    slot: Slot,
    req: Request<Incoming>,
) -> Response<ProxyBody> {
    // A copy: the parsed authority shares the outer connection's whole read buffer (16 KB),
    // which the tunnel would otherwise keep alive for as long as it lives.
    let authority = req
        .uri()
        .authority()
        .map(|a| a.as_str().parse::<Authority>());
    let Some(Ok(authority)) = authority else {
        shared.stats.rejected.fetch_add(1, Ordering::Relaxed);
        return respond::simple(StatusCode::BAD_REQUEST, "CONNECT needs host:port\n");
    };
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        let _slot = slot;
        match upgrade.await {
            Ok(upgraded) => tunnel(shared, TokioIo::new(upgraded), peer, authority).await,
            Err(e) => tracing::debug!(%peer, "CONNECT upgrade failed: {e}"),
        }
    });
    Response::new(ProxyBody::Empty)
}

/// Inside a CONNECT tunnel: sniff the first bytes and intercept TLS or serve plain HTTP.
async fn tunnel<S>(shared: Arc<Shared>, mut io: S, peer: SocketAddr, authority: Authority)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut buf = BytesMut::with_capacity(1024);
    let read = tokio::time::timeout(shared.limits.handshake_timeout, io.read_buf(&mut buf)).await;
    match read {
        Ok(Ok(n)) if n > 0 => {}
        _ => return,
    }
    let prefix = buf.freeze();
    // Decided before the prefix moves into the stream: nothing else keeps it for the tunnel's life.
    let tls = prefix[0] == 0x16;
    let io = Rewind::new(prefix, io);
    let target = Target {
        scheme: Scheme::HTTPS,
        authority: authority.clone(),
    };
    if tls {
        intercept_tls(shared, io, peer, Some(target), Some(authority)).await;
    } else {
        let target = Target {
            scheme: Scheme::HTTP,
            authority,
        };
        serve_intercepted(shared, io, peer, target, false).await;
    }
}

/// TLS towards the browser with a leaf for the SNI name (or the CONNECT host), then the inner
/// HTTP server on the decrypted stream.
async fn intercept_tls<S>(
    shared: Arc<Shared>,
    io: S,
    peer: SocketAddr,
    target: Option<Target>,
    connect_authority: Option<Authority>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // TLS started on the listener itself (not inside a CONNECT tunnel): a visitor of the
    // reverse proxy, who gets the site's own certificate when one is configured.
    let direct = connect_authority.is_none();
    let acceptor = tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), io);
    let handshake = async {
        let start = acceptor.await.map_err(|e| format!("client hello: {e}"))?;
        let sni = start.client_hello().server_name().map(str::to_owned);
        let config = match shared.site_certs.for_name(sni.as_deref(), direct) {
            Some(site) => site,
            None => {
                let cert_host = match (&sni, &connect_authority) {
                    (Some(s), _) => s.clone(),
                    (None, Some(a)) => a.host().to_string(),
                    (None, None) => match &target {
                        Some(t) => t.host().to_string(),
                        None => return Err("TLS without SNI on the listener".to_string()),
                    },
                };
                let mut config = shared
                    .ca
                    .server_config(&cert_host)
                    .await
                    .map_err(|e| format!("certificate for {cert_host}: {e}"))?;
                // A replay offers the protocol the origin spoke when it was recorded.
                let origin = connect_authority
                    .as_ref()
                    .map(Authority::as_str)
                    .or(sni.as_deref())
                    .or(target.as_ref().map(|t| t.authority.as_str()));
                if let Some(origin) = origin {
                    config = shared.source.tls_config(origin, &cert_host, config);
                }
                config
            }
        };
        let tls = start
            .into_stream(config)
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        Ok::<_, String>((tls, sni))
    };
    let (tls, sni) = match tokio::time::timeout(shared.limits.handshake_timeout, handshake).await {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            tracing::debug!(%peer, "TLS interception failed: {e}");
            return;
        }
        Err(_) => return,
    };
    let target = match target {
        Some(t) => t,
        None => {
            let Some(authority) = sni.and_then(|s| s.parse::<Authority>().ok()) else {
                return;
            };
            Target {
                scheme: Scheme::HTTPS,
                authority,
            }
        }
    };
    let visitors = direct && shared.reverse.is_some();
    serve_intercepted(shared, tls, peer, target, visitors).await;
}

/// The inner HTTP server on an intercepted stream; `visitors`: the stream is a reverse
/// proxy's visitor's (credentials checked per request, as on plain HTTP).
async fn serve_intercepted<S>(
    shared: Arc<Shared>,
    io: S,
    peer: SocketAddr,
    target: Target,
    visitors: bool,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let target = Arc::new(target);
    let svc_shared = shared.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        let shared = svc_shared.clone();
        let target = target.clone();
        async move {
            shared.stats.requests.fetch_add(1, Ordering::Relaxed);
            if visitors && let Some(resp) = check_visitor_auth(&shared, &req) {
                return Ok::<_, Infallible>(resp);
            }
            Ok::<_, Infallible>(crate::route::handle(shared, (*target).clone(), req).await)
        }
    });
    let conn = shared
        .http
        .serve_connection_with_upgrades(TokioIo::new(io), service);
    if let Err(e) = conn.await {
        tracing::debug!(%peer, "intercepted connection: {e}");
    }
}
