//! Prometheus metrics (`GET /metrics` on the control listener, text exposition format 0.0.4):
//! the proxy's counters, connections, and what repair policies do, by policy: documents
//! served under a policy, events postponed and discarded, how long postponed events waited (a
//! histogram), liveness incidents, policy reloads.
//!
//! A page's repair figures arrive in its reports (`repair_stats`); the metrics add what each
//! report adds to its document's previous one, so every counter only grows.

use crate::repair_stats::ReportDelta;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Upper bounds of the delay histogram's buckets, seconds.
const DELAY_BUCKETS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// A fixed-bucket histogram.
#[derive(Clone, Debug, Default)]
struct Histogram {
    /// Per bucket of [`DELAY_BUCKETS`] (not cumulative).
    buckets: [u64; DELAY_BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, v: f64) {
        if !v.is_finite() || v < 0.0 {
            return;
        }
        if let Some(i) = DELAY_BUCKETS.iter().position(|&b| v <= b) {
            self.buckets[i] += 1;
        }
        self.count += 1;
        self.sum += v;
    }
}

/// What repair policies did, by the set of policies in force (`init-user,async-fifo`).
#[derive(Default)]
struct Repair {
    documents: BTreeMap<String, u64>,
    reporting: BTreeMap<String, u64>,
    postponed: BTreeMap<String, u64>,
    discarded: BTreeMap<String, u64>,
    delays: BTreeMap<String, Histogram>,
    /// By (policy, rule).
    incidents: BTreeMap<(String, String), u64>,
}

/// The metrics a proxy keeps besides its plain counters ([`crate::Stats`]).
#[derive(Default)]
pub struct Metrics {
    /// The policies in force, as a label (`None`: no policy).
    policy: Mutex<Option<String>>,
    repair: Mutex<Repair>,
    /// Policy reloads: (succeeded, failed).
    reloads: Mutex<(u64, u64)>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// Says which policies are in force from now on (comma-separated names; `None`: none).
    pub fn set_policy(&self, names: Option<String>) {
        *lock(&self.policy) = names;
    }

    /// The policies in force.
    pub fn policy(&self) -> Option<String> {
        lock(&self.policy).clone()
    }

    /// Counts a policy reload that succeeded (`ok`) or kept the running policy.
    pub fn reloaded(&self, ok: bool) {
        let mut r = lock(&self.reloads);
        if ok {
            r.0 += 1;
        } else {
            r.1 += 1;
        }
    }

    /// Counts one HTML document served with the runtime (under the policies in force).
    pub(crate) fn document_served(&self) {
        if let Some(p) = self.policy() {
            *lock(&self.repair).documents.entry(p).or_default() += 1;
        }
    }

    /// Adds what a page's repair report adds.
    pub(crate) fn report(&self, d: &ReportDelta) {
        let label = d.policies.join(",");
        let mut r = lock(&self.repair);
        if d.first {
            *r.reporting.entry(label.clone()).or_default() += 1;
        }
        *r.postponed.entry(label.clone()).or_default() += d.postponed;
        *r.discarded.entry(label.clone()).or_default() += d.discarded;
        let h = r.delays.entry(label).or_default();
        for ms in &d.delays {
            h.observe(ms / 1000.0);
        }
        for i in &d.incidents {
            *r.incidents
                .entry((i.policy.clone(), i.rule.clone()))
                .or_default() += 1;
        }
    }

    /// The exposition of these metrics and of `plain` (name, help, value) counters and
    /// gauges, in the text format Prometheus scrapes.
    pub(crate) fn render(&self, plain: &[(&str, &str, &str, u64)]) -> String {
        let mut out = String::new();
        for (name, kind, help, value) in plain {
            head(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        let policy = self.policy();
        head(
            &mut out,
            "shepherd_policy_info",
            "gauge",
            "The repair policies in force (1 for the current set).",
        );
        if let Some(p) = &policy {
            let _ = writeln!(out, "shepherd_policy_info{{policies=\"{}\"}} 1", esc(p));
        }
        let (ok, failed) = *lock(&self.reloads);
        head(
            &mut out,
            "shepherd_policy_reloads_total",
            "counter",
            "Policy reloads (SIGHUP): applied, or failed and the running policy kept.",
        );
        let _ = writeln!(out, "shepherd_policy_reloads_total{{result=\"ok\"}} {ok}");
        let _ = writeln!(
            out,
            "shepherd_policy_reloads_total{{result=\"error\"}} {failed}"
        );
        let r = lock(&self.repair);
        let by_policy = |out: &mut String, name: &str, help: &str, map: &BTreeMap<String, u64>| {
            head(out, name, "counter", help);
            for (p, v) in map {
                let _ = writeln!(out, "{name}{{policies=\"{}\"}} {v}", esc(p));
            }
        };
        by_policy(
            &mut out,
            "shepherd_repair_documents_total",
            "HTML documents served with the controller while repair policies were in force.",
            &r.documents,
        );
        by_policy(
            &mut out,
            "shepherd_repair_reporting_documents_total",
            "Documents whose controller reported repair figures (it reports once it acted).",
            &r.reporting,
        );
        by_policy(
            &mut out,
            "shepherd_repair_postponed_events_total",
            "Events the controller postponed so a policy's bad order could not happen.",
            &r.postponed,
        );
        by_policy(
            &mut out,
            "shepherd_repair_discarded_events_total",
            "User events the controller discarded.",
            &r.discarded,
        );
        let name = "shepherd_repair_delay_seconds";
        head(
            &mut out,
            name,
            "histogram",
            "How long postponed events waited before they ran.",
        );
        for (p, h) in &r.delays {
            let p = esc(p);
            let mut cumulative = 0;
            for (b, n) in DELAY_BUCKETS.iter().zip(h.buckets) {
                cumulative += n;
                let _ = writeln!(
                    out,
                    "{name}_bucket{{policies=\"{p}\",le=\"{b}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "{name}_bucket{{policies=\"{p}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "{name}_sum{{policies=\"{p}\"}} {}", h.sum);
            let _ = writeln!(out, "{name}_count{{policies=\"{p}\"}} {}", h.count);
        }
        let name = "shepherd_repair_incidents_total";
        head(
            &mut out,
            name,
            "counter",
            "Liveness incidents: an event held, or input discarded, longer than its policy allows.",
        );
        for ((policy, rule), v) in &r.incidents {
            let _ = writeln!(
                out,
                "{name}{{policy=\"{}\",rule=\"{}\"}} {v}",
                esc(policy),
                esc(rule)
            );
        }
        out
    }
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// A label value as the format wants it: backslash, quote and newline escaped.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repair_stats::Incident;

    #[test]
    fn reports_add_up_by_policy_and_render_as_prometheus_text() {
        let m = Metrics::default();
        m.set_policy(Some("init-user".into()));
        m.document_served();
        m.document_served();
        let delta = |first, postponed, delays: &[f64], incidents: usize| ReportDelta {
            policies: vec!["init-user".into()],
            first,
            postponed,
            discarded: 1,
            delays: delays.to_vec(),
            incidents: (0..incidents)
                .map(|_| Incident {
                    policy: "init-user".into(),
                    rule: "init-user:6".into(),
                    ..Incident::default()
                })
                .collect(),
        };
        m.report(&delta(true, 2, &[3.0, 40.0], 0));
        m.report(&delta(false, 1, &[20_000.0], 1));
        m.reloaded(true);
        m.reloaded(false);
        let text = m.render(&[("shepherd_requests_total", "counter", "Requests.", 7)]);
        for line in [
            "shepherd_requests_total 7",
            "shepherd_policy_info{policies=\"init-user\"} 1",
            "shepherd_policy_reloads_total{result=\"ok\"} 1",
            "shepherd_policy_reloads_total{result=\"error\"} 1",
            "shepherd_repair_documents_total{policies=\"init-user\"} 2",
            "shepherd_repair_reporting_documents_total{policies=\"init-user\"} 1",
            "shepherd_repair_postponed_events_total{policies=\"init-user\"} 3",
            "shepherd_repair_discarded_events_total{policies=\"init-user\"} 2",
            "shepherd_repair_delay_seconds_bucket{policies=\"init-user\",le=\"0.005\"} 1",
            "shepherd_repair_delay_seconds_bucket{policies=\"init-user\",le=\"0.05\"} 2",
            "shepherd_repair_delay_seconds_bucket{policies=\"init-user\",le=\"10\"} 2",
            "shepherd_repair_delay_seconds_bucket{policies=\"init-user\",le=\"30\"} 3",
            "shepherd_repair_delay_seconds_bucket{policies=\"init-user\",le=\"+Inf\"} 3",
            "shepherd_repair_delay_seconds_count{policies=\"init-user\"} 3",
            "shepherd_repair_incidents_total{policy=\"init-user\",rule=\"init-user:6\"} 1",
            "# TYPE shepherd_repair_delay_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        assert_eq!(esc("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
