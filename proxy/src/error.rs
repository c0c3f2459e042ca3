//! Why a proxy could not start.

use std::net::SocketAddr;

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
    /// A non-loopback address without `--auth` or `--allow`.
    #[error(
        "refusing to listen on non-loopback address {0} without --auth user:pass or --allow CIDR (anyone on the network could use the proxy)"
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
