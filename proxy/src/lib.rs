//! TLS-intercepting record/replay proxy: CA and leaf certificates, CONNECT, HTTP/1.1 and HTTP/2
//! on both sides, body decoding, the rewrite hook, holds and the reserved `/__shepherd/*` endpoints.
//!
//! Start one with [`Proxy::start`]; the returned [`ProxyHandle`] gives the bound address, the
//! per-run secret, the hold controller and counters, and shuts the proxy down when dropped.

pub mod body;
pub mod ca;
pub mod client_body;
mod forward;
pub mod headers;
pub mod holds;
pub mod limits;
mod record;
mod replay;
mod reserved;
mod rewind;
pub mod rewrite;
mod server;
mod source_map;
pub mod tls;
pub mod upstream;
mod websocket;
mod ws_frames;
mod ws_replay;

pub use ca::CertificateAuthority;
pub use holds::{HeldInfo, Holds};
/// Re-exported so front ends can build URIs and headers without their own dependency.
pub use http;
pub use limits::{Limits, ProxyAuth};
pub use replay::ReplayOptions;
pub use rewrite::{
    HtmlStream, ResponseMeta, RewriteKind, Rewriter, RewrittenScript, RunMode, ScriptJob,
};
pub use tls::UpstreamTrust;

/// A fresh per-run secret: 128 random bits, hex encoded.
pub fn random_secret() -> String {
    let bytes: [u8; 16] = rand::random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Errors starting the proxy.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// Binding or accepting failed.
    #[error("listen on {addr}: {source}")]
    Listen {
        /// Requested address.
        addr: SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// A non-loopback address without `--auth`.
    #[error(
        "refusing to listen on non-loopback address {0} without --auth user:pass (anyone on the network could use the proxy)"
    )]
    NeedsAuth(SocketAddr),
    /// TLS configuration failed.
    #[error("tls: {0}")]
    Tls(#[from] rustls::Error),
    /// The recording could not be opened or written.
    #[error("recording: {0}")]
    Recording(String),
    /// Bad configuration value.
    #[error("{0}")]
    Config(String),
}

/// What the proxy does with traffic.
pub enum Mode {
    /// Forward live traffic (forward proxy, or reverse proxy with [`ProxyConfig::reverse`]).
    Serve,
    /// Forward live traffic and store every exchange in the recording file at this path.
    Record(PathBuf),
    /// Serve the recording at this path; never connect anywhere.
    Replay(PathBuf, ReplayOptions),
}

/// Receives trace batches uploaded to `POST /__shepherd/trace` in modes without a recording
/// being written (serve, replay). In record mode they go to the recording.
pub trait TraceSink: Send + Sync + 'static {
    /// Stores batch `seq` of document `doc`.
    fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String>;
}

/// Everything needed to start a proxy.
pub struct ProxyConfig {
    /// Address to listen on (port 0 picks one).
    pub listen: SocketAddr,
    /// What to do with traffic.
    pub mode: Mode,
    /// Reverse-proxy target (`https://staging.example`): origin-form requests go there.
    pub reverse: Option<http::Uri>,
    /// How origin certificates are verified.
    pub upstream_trust: UpstreamTrust,
    /// Credentials required from clients (mandatory on non-loopback addresses).
    pub auth: Option<ProxyAuth>,
    /// The runtime served at `/__shepherd/runtime.js`.
    pub runtime_js: &'static str,
    /// The rewrite hook; `None` passes every body through untouched.
    pub rewriter: Option<Arc<dyn Rewriter>>,
    /// Where traces go outside record mode.
    pub trace_sink: Option<Arc<dyn TraceSink>>,
    /// Safety limits.
    pub limits: Limits,
    /// The per-run secret; a random one when `None`.
    pub secret: Option<String>,
}

impl ProxyConfig {
    /// A loopback forward proxy in serve mode on an ephemeral port, with default limits.
    pub fn new(mode: Mode) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            mode,
            reverse: None,
            upstream_trust: UpstreamTrust::default(),
            auth: None,
            runtime_js: "",
            rewriter: None,
            trace_sink: None,
            limits: Limits::default(),
            secret: None,
        }
    }
}

/// Counters kept with relaxed atomics (no lock on the request path).
#[derive(Debug, Default)]
pub struct Stats {
    /// Outbound TCP connection attempts (replay must keep this at zero).
    pub upstream_connects: Arc<AtomicU64>,
    /// Requests handled.
    pub requests: AtomicU64,
    /// Replay misses.
    pub replay_misses: AtomicU64,
    /// Malformed or refused requests.
    pub rejected: AtomicU64,
}

/// A running proxy. Dropping it stops accepting connections.
pub struct ProxyHandle {
    addr: SocketAddr,
    shared: Arc<server::Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// Entry point.
pub struct Proxy;

impl Proxy {
    /// Binds, then serves in the background on the current tokio runtime.
    pub async fn start(
        config: ProxyConfig,
        ca: Arc<CertificateAuthority>,
    ) -> Result<ProxyHandle, ProxyError> {
        server::start(config, ca).await
    }
}

impl ProxyHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The per-run secret (query parameter `s` on `/__shepherd/*`).
    pub fn secret(&self) -> &str {
        &self.shared.secret
    }

    /// The hold controller (replay and live modes share it).
    pub fn holds(&self) -> &Arc<Holds> {
        &self.shared.holds
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Outbound connection attempts so far.
    pub fn upstream_connects(&self) -> u64 {
        self.shared.stats.upstream_connects.load(Ordering::Relaxed)
    }

    /// Resets the replay queues (the nth identical request gets the nth response again).
    pub fn reset_replay(&self) {
        self.shared.reset_replay();
    }

    /// Stops accepting and waits for the accept loop to end; pending exchanges of a recording
    /// are flushed by their own tasks.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.shared.close();
    }

    /// Runs until the process is interrupted (Ctrl-C), then shuts down.
    pub async fn run_until_ctrl_c(self) {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("interrupted, shutting down");
        self.shutdown().await;
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
