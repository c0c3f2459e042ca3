//! What a lookup takes and gives: recorded and live requests, the matcher's options, and the
//! result (the tier that matched, or why nothing did). Shared by the tiers and the loader, so
//! they never reach into the index itself.

use crate::model::{ExchangeId, Header, SessionId};

/// One recorded request as the matcher sees it (built by [`crate::Recording::replay_requests`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// Exchange that holds the response to serve.
    pub id: ExchangeId,
    /// Session it was recorded in (patterns need values from several sessions).
    pub session: SessionId,
    /// Method.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Request headers.
    pub headers: Vec<Header>,
    /// Request body (empty when larger than the loader's limit; `body_sha256` still exact).
    pub body: Vec<u8>,
    /// SHA-256 of the full request body.
    pub body_sha256: [u8; 32],
    /// Abstraction of the recorded response (status, media type, JSON shape), used to cluster
    /// samples when learning patterns: requests whose responses look alike probably hit one
    /// endpoint.
    pub response_class: String,
}

/// A live request to match.
#[derive(Debug, Clone, Copy)]
pub struct LiveRequest<'a> {
    /// Method.
    pub method: &'a str,
    /// Absolute URL.
    pub url: &'a str,
    /// Headers.
    pub headers: &'a [Header],
    /// Complete request body.
    pub body: &'a [u8],
}

/// Which tier produced a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// Method, URL and body identical.
    Exact,
    /// Identical after the configured ignore lists.
    Ignore,
    /// Matched a learned request pattern.
    Learned,
    /// Closest recorded request by path and query overlap.
    Fuzzy,
}

impl Tier {
    /// Lower-case name for logs and headers.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Ignore => "ignore",
            Tier::Learned => "learned",
            Tier::Fuzzy => "fuzzy",
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A successful lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    /// Exchange whose response to serve.
    pub exchange: ExchangeId,
    /// Tier that matched.
    pub tier: Tier,
    /// Printable key of the queue the request was taken from (for logs).
    pub key: String,
    /// 0-based occurrence of this key in the current run.
    pub occurrence: usize,
}

/// A failed lookup, with a human-readable reason for the log and the response header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    /// Why nothing matched.
    pub reason: String,
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Matcher options (mitmproxy's server-replay options, plus the learned and fuzzy tiers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchConfig {
    /// Query parameter names dropped in the ignore tier (cache busters such as `_`).
    pub ignore_query_params: Vec<String>,
    /// Form / top-level JSON body keys dropped in the ignore tier.
    pub ignore_body_params: Vec<String>,
    /// Headers that must match in the exact and ignore tiers (none by default).
    pub use_headers: Vec<String>,
    /// Of `use_headers`, the ones dropped again in the ignore tier.
    pub ignore_headers: Vec<String>,
    /// Enable the learned-pattern tier.
    pub learned: bool,
    /// Enable the fuzzy tier.
    pub fuzzy: bool,
    /// When set, a key's queue holds only this session's recordings if it has any (replaying
    /// one session out of a merged file); otherwise every session's, in recording order.
    pub primary_session: Option<SessionId>,
}

impl Default for MatchConfig {
    fn default() -> Self {
        MatchConfig {
            ignore_query_params: Vec::new(),
            ignore_body_params: Vec::new(),
            use_headers: Vec::new(),
            ignore_headers: Vec::new(),
            learned: true,
            fuzzy: true,
            primary_session: None,
        }
    }
}
