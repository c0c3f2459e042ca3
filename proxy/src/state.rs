//! What every connection of one proxy shares: the response source chosen at start, the rewrite
//! hook, holds, limits and counters; and the origin a connection's requests go to.

use crate::allow::AllowList;
use crate::ca::CertificateAuthority;
use crate::holds::Holds;
use crate::limits::{Limits, ProxyAuth};
use crate::metrics::Metrics;
use crate::page_holds::PageHolds;
use crate::repair_stats::RepairStats;
use crate::rewrite::Rewriter;
use crate::secret::Secrets;
use crate::site_certs::SiteCertificates;
use crate::source::Source;
use crate::stats::Stats;
use crate::trace_sink::TraceSink;
use http::uri::{Authority, Scheme};
use hyper_util::rt::TokioExecutor;
use hyper_util::server::conn::auto;
use std::sync::Arc;

/// State shared by every connection of one proxy.
pub(crate) struct Shared {
    pub secrets: Secrets,
    pub ca: Arc<CertificateAuthority>,
    /// Where responses come from (live origins, optionally recorded, or a recording).
    pub source: Source,
    pub reverse: Option<Target>,
    pub auth: Option<ProxyAuth>,
    /// Networks clients may connect from (`None`: any).
    pub allow: Option<AllowList>,
    /// The site's own certificates (reverse mode).
    pub site_certs: Arc<SiteCertificates>,
    /// The runtime served at `/__shepherd/runtime.js`; replaced when policies are reloaded.
    pub runtime_js: std::sync::RwLock<RuntimeScript>,
    /// Prometheus metrics beside the counters of `stats`.
    pub metrics: Metrics,
    pub rewriter: Option<Arc<dyn Rewriter>>,
    /// Where pages' trace uploads go; `None`: this proxy keeps no traces.
    pub traces: Option<Arc<dyn TraceSink>>,
    pub limits: Limits,
    pub holds: Arc<Holds>,
    /// Holds pages asked for themselves (repair policies postponing the scripts they insert
    /// and the parser's resources).
    pub page_holds: Arc<PageHolds>,
    /// Repair policies' figures reported by pages.
    pub repair: RepairStats,
    pub stats: Stats,
    pub http: auto::Builder<TokioExecutor>,
}

/// Where requests of one connection go: scheme and authority of the origin.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub scheme: Scheme,
    pub authority: Authority,
}

impl Target {
    /// The absolute URI of `uri` (origin-form or absolute) on this target.
    pub fn url(&self, uri: &http::Uri) -> Result<http::Uri, http::Error> {
        let pq = uri
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| http::uri::PathAndQuery::from_static("/"));
        http::Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
    }

    pub fn host(&self) -> &str {
        self.authority.host()
    }

    /// The origin as page credentials are derived from it: `scheme://host:port`, lower-case,
    /// port explicit.
    pub fn origin(&self) -> String {
        origin_of(
            self.scheme.as_str(),
            self.authority.host(),
            self.authority.port_u16(),
        )
    }

    /// Whether `url` is on this target's scheme and authority (default ports made explicit).
    pub fn same_origin(&self, url: &str) -> bool {
        let Ok(u) = url.parse::<http::Uri>() else {
            return false;
        };
        let default = |scheme: &str| if scheme == "http" { 80 } else { 443 };
        let (Some(scheme), Some(auth)) = (u.scheme_str(), u.authority()) else {
            return false;
        };
        scheme == self.scheme.as_str()
            && auth.host().eq_ignore_ascii_case(self.authority.host())
            && auth.port_u16().unwrap_or(default(scheme))
                == self
                    .authority
                    .port_u16()
                    .unwrap_or(default(self.scheme.as_str()))
    }
}

/// `scheme://host:port` with the scheme's default port made explicit, lower-case.
pub(crate) fn origin_of(scheme: &str, host: &str, port: Option<u16>) -> String {
    let scheme = scheme.to_ascii_lowercase();
    let port = port.unwrap_or(if scheme == "http" { 80 } else { 443 });
    format!("{scheme}://{}:{port}", host.to_ascii_lowercase())
}

/// The runtime script and its version: documents name the version in the runtime's URL
/// (`v=`), so the browser may keep the script (and V8 its compiled code) for as long as the
/// proxy serves that text. A reload of the policies makes a new version, hence a new URL.
pub struct RuntimeScript {
    /// The script.
    pub body: bytes::Bytes,
    /// The first 16 hex digits of the body's SHA-256.
    pub version: String,
}

impl RuntimeScript {
    /// `body` with its version.
    pub fn new(body: bytes::Bytes) -> RuntimeScript {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(&body);
        let version = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        RuntimeScript { body, version }
    }
}
