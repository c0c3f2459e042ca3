//! What repair policies cost, per page: pages' controllers report their figures (events
//! postponed and discarded, how long each postponed event waited, liveness incidents) to
//! `POST /__shepherd/repair`; the proxy logs them and keeps the latest report of each
//! document, and the operator reads the per-page summary at `GET /__shepherd/control/repair`
//! (or `ProxyHandle::repair_stats`). A report counts only for a page on the origin it was
//! sent to.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Mutex;

/// Documents remembered (the oldest are forgotten first).
const MAX_DOCS: usize = 4096;

/// A liveness incident: an event held (or input discarded) longer than the policy allows.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Incident {
    /// The policy.
    pub policy: String,
    /// The rule (`policy:line`).
    pub rule: String,
    /// The rule as written.
    pub text: String,
    /// The event (kind or type, target, URL).
    pub event: String,
    /// How long it waited, ms.
    #[serde(rename = "delayMs")]
    pub delay_ms: f64,
    /// What happened.
    pub what: String,
}

/// One document's report.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Report {
    page: String,
    policies: Vec<String>,
    postponed: u64,
    discarded: u64,
    delays: Vec<f64>,
    incidents: Vec<Incident>,
}

/// Per page: counts and delay percentiles over every document of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageSummary {
    /// The page URL (without query and fragment).
    pub page: String,
    /// Policies in force.
    pub policies: Vec<String>,
    /// Documents that reported.
    pub documents: usize,
    /// Events postponed.
    pub postponed: u64,
    /// User events discarded.
    pub discarded: u64,
    /// Median wait of postponed events, ms.
    pub p50_ms: f64,
    /// 90th percentile, ms.
    pub p90_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Longest wait, ms.
    pub max_ms: f64,
    /// Liveness incidents.
    pub incidents: Vec<Incident>,
}

/// What one report adds to its document's previous one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportDelta {
    /// The policies in force in the document.
    pub policies: Vec<String>,
    /// The document's first report.
    pub first: bool,
    /// Events postponed since the previous report.
    pub postponed: u64,
    /// User events discarded since the previous report.
    pub discarded: u64,
    /// Waits of the events postponed since (ms).
    pub delays: Vec<f64>,
    /// Incidents since.
    pub incidents: Vec<Incident>,
}

/// The reports of one proxy.
#[derive(Default)]
pub struct RepairStats {
    inner: Mutex<(HashMap<String, Report>, VecDeque<String>)>,
}

impl std::fmt::Debug for RepairStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RepairStats").finish_non_exhaustive()
    }
}

fn page_key(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    url[..end].to_string()
}

impl RepairStats {
    /// Stores `body` (JSON) as document `doc`'s latest report, when its page is on `origin`
    /// (`same_origin`); logs it and any incident it adds, and returns what it adds to the
    /// document's previous report (reports are cumulative), for the metrics. `Err` explains a
    /// refusal.
    pub(crate) fn accept(
        &self,
        doc: &str,
        body: &[u8],
        same_origin: impl Fn(&str) -> bool,
    ) -> Result<ReportDelta, String> {
        let mut r: Report =
            serde_json::from_slice(body).map_err(|e| format!("not a repair report: {e}"))?;
        if !same_origin(&r.page) {
            return Err("the report's page is not on this origin".into());
        }
        r.delays.truncate(2000);
        r.incidents.truncate(100);
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (docs, order) = &mut *g;
        let seen = docs.get(doc).map_or(0, |old| old.incidents.len());
        let delta = match docs.get(doc) {
            Some(old) => ReportDelta {
                policies: r.policies.clone(),
                first: false,
                postponed: r.postponed.saturating_sub(old.postponed),
                discarded: r.discarded.saturating_sub(old.discarded),
                delays: r.delays.get(old.delays.len()..).unwrap_or(&[]).to_vec(),
                incidents: r.incidents.get(seen..).unwrap_or(&[]).to_vec(),
            },
            None => ReportDelta {
                policies: r.policies.clone(),
                first: true,
                postponed: r.postponed,
                discarded: r.discarded,
                delays: r.delays.clone(),
                incidents: r.incidents.clone(),
            },
        };
        for i in r.incidents.iter().skip(seen) {
            tracing::warn!(
                page = %page_key(&r.page), policy = %i.policy, rule = %i.rule, event = %i.event,
                delay_ms = i.delay_ms, "repair incident: {}", i.what
            );
        }
        let (p50, p90, max) = (
            percentile(&r.delays, 0.5),
            percentile(&r.delays, 0.9),
            percentile(&r.delays, 1.0),
        );
        tracing::info!(
            page = %page_key(&r.page), doc, postponed = r.postponed, discarded = r.discarded,
            "repair: p50 {p50:.0} ms, p90 {p90:.0} ms, max {max:.0} ms"
        );
        if docs.insert(doc.to_string(), r).is_none() {
            order.push_back(doc.to_string());
            while order.len() > MAX_DOCS {
                if let Some(old) = order.pop_front() {
                    docs.remove(&old);
                }
            }
        }
        Ok(delta)
    }

    /// Per-page summaries, by page URL.
    pub fn summary(&self) -> Vec<PageSummary> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut pages: BTreeMap<String, Vec<&Report>> = BTreeMap::new();
        for r in g.0.values() {
            pages.entry(page_key(&r.page)).or_default().push(r);
        }
        pages
            .into_iter()
            .map(|(page, rs)| {
                let mut delays: Vec<f64> =
                    rs.iter().flat_map(|r| r.delays.iter().copied()).collect();
                delays.sort_by(f64::total_cmp);
                let mut policies: Vec<String> =
                    rs.iter().flat_map(|r| r.policies.iter().cloned()).collect();
                policies.sort();
                policies.dedup();
                PageSummary {
                    page,
                    policies,
                    documents: rs.len(),
                    postponed: rs.iter().map(|r| r.postponed).sum(),
                    discarded: rs.iter().map(|r| r.discarded).sum(),
                    p50_ms: percentile(&delays, 0.5),
                    p90_ms: percentile(&delays, 0.9),
                    p99_ms: percentile(&delays, 0.99),
                    max_ms: percentile(&delays, 1.0),
                    incidents: rs
                        .iter()
                        .flat_map(|r| r.incidents.iter().cloned())
                        .collect(),
                }
            })
            .collect()
    }
}

/// Nearest-rank percentile of `v` (sorted or not); 0 when empty.
fn percentile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_latest_report_per_document_and_summarises_per_page() {
        let s = RepairStats::default();
        let ok = |_: &str| true;
        let r1 = br#"{"page":"https://a.test/x?q=1","policies":["init-user"],"postponed":1,"discarded":0,"delays":[10],"incidents":[]}"#;
        let r2 = br#"{"page":"https://a.test/x?q=1","policies":["init-user"],"postponed":3,"discarded":1,"delays":[10,20,400],"incidents":[{"policy":"init-user","rule":"init-user:6","event":"click","delayMs":10000,"what":"held"}]}"#;
        let r3 = br#"{"page":"https://a.test/x","postponed":1,"delays":[30]}"#;
        let d1 = s.accept("d1", r1, ok).unwrap();
        assert!(d1.first);
        let d2 = s.accept("d1", r2, ok).unwrap();
        assert_eq!(
            (
                d2.first,
                d2.postponed,
                d2.discarded,
                d2.delays,
                d2.incidents.len()
            ),
            (false, 2, 1, vec![20.0, 400.0], 1),
            "only what the second report adds"
        );
        s.accept("d2", r3, ok).unwrap();
        let sum = s.summary();
        assert_eq!(sum.len(), 1);
        let p = &sum[0];
        assert_eq!(
            (p.page.as_str(), p.documents, p.postponed, p.discarded),
            ("https://a.test/x", 2, 4, 1)
        );
        assert_eq!((p.p50_ms, p.max_ms), (20.0, 400.0));
        assert_eq!(p.incidents.len(), 1);
        assert!(s.accept("d3", r1, |_| false).is_err());
        assert!(s.accept("d3", b"nope", ok).is_err());
    }
}
