//! TLS-intercepting record/replay proxy: CA and leaf certificates, CONNECT, HTTP/1.1 and HTTP/2
//! on both sides, body decoding, the rewrite hook, holds and the reserved `/__shepherd/*` endpoints.
//!
//! Start one with [`Proxy::start`]; the returned [`ProxyHandle`] gives the bound address, the
//! per-run secret, the hold controller and counters, and shuts the proxy down when dropped.

pub mod allow;
pub mod body;
pub mod ca;
mod ca_page;
pub mod client_body;
mod config;
mod control;
mod error;
mod handle;
pub mod headers;
pub mod holds;
pub mod limits;
pub mod metrics;
pub mod page_holds;
mod pipeline;
mod query;
pub mod repair_stats;
mod reserved;
mod respond;
mod rewind;
pub mod rewrite;
mod route;
mod secret;
mod server;
pub mod site_certs;
mod source;
mod source_map;
mod state;
mod stats;
pub mod tls;
mod trace_sink;
pub mod upstream;
mod ws_frames;

pub use allow::AllowList;
pub use ca::CertificateAuthority;
pub use config::ProxyConfig;
pub use error::ProxyError;
pub use handle::{Proxy, ProxyHandle};
pub use holds::{DocumentSplit, HeldInfo, Holds, SetAside};
/// Re-exported so front ends can build URIs and headers without their own dependency.
pub use http;
pub use limits::{Limits, ProxyAuth};
pub use pipeline::split_before_scripts;
pub use repair_stats::{Incident, PageSummary};
pub use rewrite::{HtmlStream, ResponseMeta, RewriteKind, Rewriter, RewrittenScript, ScriptJob};
pub use secret::random_secret;
pub use site_certs::SiteCertificates;
pub use source::SeenRequest;
pub use source::{ReplayOptions, ResponseSource};
pub use stats::Stats;
pub use tls::UpstreamTrust;
pub use trace_sink::TraceSink;
