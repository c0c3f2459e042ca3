//! Replay request matching: pure logic, no I/O.
//!
//! A live request is looked up in tiers, first hit wins, and the tier is returned so the proxy
//! can log it:
//! 1. [`Tier::Exact`]: method, absolute URL (query in order), SHA-256 of the request body, plus
//!    the values of [`MatchConfig::use_headers`].
//! 2. [`Tier::Ignore`]: the same after dropping the configured query parameters, body parameters
//!    (form or top-level JSON keys) and headers; query and form pairs compared order-insensitively.
//! 3. [`Tier::Learned`]: request patterns learned from the recording (server-interface learning:
//!    key features constant, volatile features wildcards; see `learn.rs`).
//! 4. [`Tier::Fuzzy`]: the closest recorded request of the same method and host by path and
//!    query overlap.
//!
//! Within the key a tier chose, recorded requests form an ordered queue: the nth live request
//! with that key gets the nth recording, and after the last one the last repeats. [`Matcher::reset`]
//! rewinds every queue for a new replay run.

mod features;
mod fuzzy;
mod learn;
mod load;
mod lookup;

use crate::model::SessionId;
use std::collections::HashMap;

pub use features::RequestFeatures;
pub use learn::{EXHAUSTIVE_MAX, Pattern, choose_wildcards, partition_cost};
pub use load::json_shape;
pub use lookup::{LiveRequest, Match, MatchConfig, Miss, RecordedRequest, Tier};

/// The replay index: recorded requests grouped by tier keys, plus per-key queue positions.
pub struct Matcher {
    config: MatchConfig,
    recorded: Vec<RecordedRequest>,
    features: Vec<RequestFeatures>,
    exact: HashMap<String, Vec<usize>>,
    ignore: HashMap<String, Vec<usize>>,
    learned: learn::Learned,
    /// Consumed count per (tier, key).
    served: HashMap<(Tier, String), usize>,
}

impl Matcher {
    /// Builds the index (and learns patterns) from recorded requests.
    pub fn new(mut recorded: Vec<RecordedRequest>, config: MatchConfig) -> Matcher {
        recorded.sort_by_key(|r| r.id);
        let features: Vec<RequestFeatures> = recorded
            .iter()
            .map(|r| RequestFeatures::parse(&r.method, &r.url, &r.headers, &r.body))
            .collect();
        let mut exact: HashMap<String, Vec<usize>> = HashMap::new();
        let mut ignore: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (r, f)) in recorded.iter().zip(&features).enumerate() {
            exact
                .entry(f.exact_key(&r.body_sha256, &config))
                .or_default()
                .push(i);
            ignore
                .entry(f.ignore_key(&r.body_sha256, &config))
                .or_default()
                .push(i);
        }
        let learned = if config.learned {
            learn::Learned::learn(&recorded, &features)
        } else {
            learn::Learned::default()
        };
        Matcher {
            config,
            recorded,
            features,
            exact,
            ignore,
            learned,
            served: HashMap::new(),
        }
    }

    /// Rewinds every queue (a new replay run starts).
    pub fn reset(&mut self) {
        self.served.clear();
    }

    /// The learned request patterns, printable (for `--explain` output and tests).
    pub fn patterns(&self) -> Vec<Pattern> {
        self.learned.patterns()
    }

    /// Number of recorded requests in the index.
    pub fn len(&self) -> usize {
        self.recorded.len()
    }

    /// Whether the index is empty.
    pub fn is_empty(&self) -> bool {
        self.recorded.is_empty()
    }

    /// Finds the recording to serve for `req`, advancing that key's queue.
    pub fn find(&mut self, req: &LiveRequest<'_>) -> Result<Match, Miss> {
        let f = RequestFeatures::parse(req.method, req.url, req.headers, req.body);
        let sha = sha256(req.body);
        let mut queue = Queue {
            served: &mut self.served,
            recorded: &self.recorded,
            primary: self.config.primary_session,
        };
        let key = f.exact_key(&sha, &self.config);
        if let Some(list) = self.exact.get(&key)
            && let Some(m) = queue.take(Tier::Exact, key, list)
        {
            return Ok(m);
        }
        let key = f.ignore_key(&sha, &self.config);
        if let Some(list) = self.ignore.get(&key)
            && let Some(m) = queue.take(Tier::Ignore, key, list)
        {
            return Ok(m);
        }
        if self.config.learned
            && let Some(pattern) = self.learned.lookup(&f)
            && let Some(m) = queue.take(Tier::Learned, pattern.to_string(), &pattern.samples)
        {
            return Ok(m);
        }
        if self.config.fuzzy {
            let best = fuzzy::closest(&f, &self.features).map_err(|reason| Miss { reason })?;
            let key = format!("fuzzy {}", self.recorded[best].url);
            // Queue over every recording of the chosen request (its exact key).
            let exact =
                self.features[best].exact_key(&self.recorded[best].body_sha256, &self.config);
            let single = [best];
            let list = self.exact.get(&exact).map_or(&single[..], Vec::as_slice);
            if let Some(m) = queue.take(Tier::Fuzzy, key, list) {
                return Ok(m);
            }
        }
        Err(Miss {
            reason: format!(
                "no recorded request matches {} {} (tiers tried: exact, ignore{}{})",
                req.method,
                req.url,
                if self.config.learned { ", learned" } else { "" },
                if self.config.fuzzy { ", fuzzy" } else { "" }
            ),
        })
    }
}

/// Per-key positions, borrowed apart from the indexes so lookups need not copy key lists.
struct Queue<'a> {
    served: &'a mut HashMap<(Tier, String), usize>,
    recorded: &'a [RecordedRequest],
    primary: Option<SessionId>,
}

impl Queue<'_> {
    /// Serves the next recording from `list` (indices into `recorded`, in recording order):
    /// the nth call for a key gets the nth entry, then the last repeats. With a primary session
    /// that has entries in `list`, only those count. `None` only for an empty list.
    fn take(&mut self, tier: Tier, key: String, list: &[usize]) -> Option<Match> {
        let recorded = self.recorded;
        let in_primary = |i: &&usize| self.primary.is_none_or(|s| recorded[**i].session == s);
        let restrict = self.primary.is_some() && list.iter().any(|i| in_primary(&i));
        let eligible = || list.iter().filter(move |i| !restrict || in_primary(i));
        let count = eligible().count();
        let last = count.checked_sub(1)?;
        let n = self.served.entry((tier, key.clone())).or_insert(0);
        let occurrence = *n;
        *n += 1;
        let idx = *eligible().nth(occurrence.min(last))?;
        Some(Match {
            exchange: recorded[idx].id,
            tier,
            key,
            occurrence,
        })
    }
}

pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}
