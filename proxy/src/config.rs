//! What a proxy is started with: the response source (chosen once, at start), the rewrite
//! hook, where traces go, limits and credentials.

use crate::allow::AllowList;
use crate::limits::{Limits, ProxyAuth};
use crate::rewrite::Rewriter;
use crate::site_certs::SiteCertificates;
use crate::source::ResponseSource;
use crate::trace_sink::TraceSink;
use std::net::SocketAddr;
use std::sync::Arc;

/// Everything needed to start a proxy.
pub struct ProxyConfig {
    /// Address to listen on (port 0 picks one).
    pub listen: SocketAddr,
    /// Where responses come from.
    pub source: ResponseSource,
    /// Reverse-proxy target (`https://staging.example`): origin-form requests go there.
    pub reverse: Option<http::Uri>,
    /// Credentials required from clients (on non-loopback addresses, these or an
    /// [`allow`](Self::allow) list are mandatory).
    pub auth: Option<ProxyAuth>,
    /// Networks clients may connect from (`None`: any); others are closed at accept.
    pub allow: Option<AllowList>,
    /// The site's own certificates, shown to browsers that start TLS on the listener itself
    /// (reverse mode) instead of a leaf of the CA.
    pub site_certs: Arc<SiteCertificates>,
    /// The runtime served at `/__shepherd/runtime.js`.
    pub runtime_js: bytes::Bytes,
    /// The rewrite hook; `None` passes every body through untouched.
    pub rewriter: Option<Arc<dyn Rewriter>>,
    /// Where traces go instead of the source's default (see [`TraceSink`]).
    pub trace_sink: Option<Arc<dyn TraceSink>>,
    /// Safety limits.
    pub limits: Limits,
    /// The operator secret (control listener, `__shepherd.control`); random when `None`.
    /// Pages never see it.
    pub operator_secret: Option<String>,
    /// Where the control listener (holds, releases, replay reset, stats; `Authorization:
    /// Bearer <operator secret>`) listens; `None`: control only in process.
    pub control_listen: Option<SocketAddr>,
    /// Longest a page may hold one of its own responses (`page_holds`): the liveness limit
    /// of its repair policy, plus slack; the proxy's own bound when a page never releases.
    pub page_hold_limit: std::time::Duration,
}

impl ProxyConfig {
    /// A loopback proxy for `source` on an ephemeral port, with default limits.
    pub fn new(source: ResponseSource) -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            source,
            reverse: None,
            auth: None,
            allow: None,
            site_certs: Arc::new(SiteCertificates::default()),
            runtime_js: bytes::Bytes::new(),
            rewriter: None,
            trace_sink: None,
            limits: Limits::default(),
            operator_secret: None,
            control_listen: None,
            page_hold_limit: std::time::Duration::from_secs(15),
        }
    }
}
