//! Starting a proxy and the handle of a running one.

use crate::ca::CertificateAuthority;
use crate::config::ProxyConfig;
use crate::error::ProxyError;
use crate::holds::Holds;
use crate::stats::Stats;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A running proxy. Dropping it stops accepting connections.
pub struct ProxyHandle {
    addr: SocketAddr,
    control_addr: Option<SocketAddr>,
    shared: Arc<crate::state::Shared>,
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
        let running = crate::server::start(config, ca).await?;
        Ok(ProxyHandle {
            addr: running.addr,
            control_addr: running.control_addr,
            shared: running.shared,
            shutdown: Some(running.shutdown),
            task: Some(running.task),
        })
    }
}

impl ProxyHandle {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The operator secret: the control listener's bearer token and what
    /// `__shepherd.control(secret)` answers to. Never written into a page.
    pub fn operator_secret(&self) -> &str {
        self.shared.secrets.operator()
    }

    /// The page credential pages of `origin` present (`https://host[:port]`), as the HTML
    /// rewriter writes it into the runtime's URL; for tools and tests that act as a page.
    pub fn page_token(&self, origin: &str) -> Option<String> {
        let uri: http::Uri = origin.parse().ok()?;
        let key = crate::state::origin_of(uri.scheme_str()?, uri.host()?, uri.port_u16());
        Some(self.shared.secrets.page_token(&key))
    }

    /// Where the control listener listens, when one was configured.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control_addr
    }

    /// The hold controller (replay and live modes share it).
    pub fn holds(&self) -> &Arc<Holds> {
        &self.shared.holds
    }

    /// What repair policies cost, per page (from the pages' reports).
    pub fn repair_stats(&self) -> Vec<crate::repair_stats::PageSummary> {
        self.shared.repair.summary()
    }

    /// Responses pages hold for themselves right now (repair policies postponing scripts).
    pub fn page_holds_waiting(&self) -> usize {
        self.shared.page_holds.waiting()
    }

    /// Replaces the runtime served at `/__shepherd/runtime.js` (repair policies reloaded):
    /// documents loaded from now on get it; pages already open keep theirs.
    pub fn set_runtime_js(&self, js: bytes::Bytes) {
        *self
            .shared
            .runtime_js
            .write()
            .unwrap_or_else(|p| p.into_inner()) = crate::state::RuntimeScript::new(js);
    }

    /// The Prometheus metrics (also served at `GET /metrics` on the control listener).
    pub fn metrics(&self) -> &crate::metrics::Metrics {
        &self.shared.metrics
    }

    /// The metrics as the control listener's `GET /metrics` answers them.
    pub fn metrics_text(&self) -> String {
        crate::control::metrics_text(&self.shared)
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Outbound connection attempts so far.
    pub fn upstream_connects(&self) -> u64 {
        self.shared.stats.upstream_connects.load(Ordering::Relaxed)
    }

    /// Starts a new run of a replay: the nth identical request gets the nth response again.
    /// `false` when the proxy is not replaying.
    pub fn reset_replay(&self) -> bool {
        self.shared.source.reset()
    }

    /// The requests the replay answered since its last reset, as the page sent them (empty
    /// for live sources).
    pub fn replayed_requests(&self) -> Vec<crate::source::SeenRequest> {
        self.shared.source.replayed_requests()
    }

    /// Commits everything queued for the recording and the trace store, so another reader
    /// (a replay of the same file) sees it; the proxy keeps running.
    pub fn flush(&self) {
        self.shared.source.flush();
        if let Some(t) = &self.shared.traces {
            t.flush();
        }
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
        self.flush();
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
