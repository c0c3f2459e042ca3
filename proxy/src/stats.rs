//! Counters of a running proxy.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// Counters kept with relaxed atomics (no lock on the request path).
#[derive(Debug, Default)]
pub struct Stats {
    /// Outbound TCP connection attempts (replay must keep this at zero).
    pub upstream_connects: Arc<AtomicU64>,
    /// Requests handled.
    pub requests: AtomicU64,
    /// Client connections accepted.
    pub connections: AtomicU64,
    /// Client connections open now.
    pub open_connections: AtomicU64,
    /// Connections closed at accept: their address is outside the allow list.
    pub refused_network: AtomicU64,
    /// Replay misses.
    pub replay_misses: AtomicU64,
    /// Malformed or refused requests.
    pub rejected: AtomicU64,
    /// Pieces of dynamic code and markup pages sent to `/__shepherd/instrument` (the runtime
    /// caches answers, so this counts what pages could not reuse).
    pub instrument_requests: AtomicU64,
}
