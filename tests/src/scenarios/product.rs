//! Shepherd as a user runs it: a recording stack per scenario, assembled by `shepherd-session`
//! (the crate `shepherd record` is built on) — the real proxy, instrumenter and runtime —
//! trusting only the scenario origin's CA upstream, and the race report of the recording as
//! `shepherd races FILE --json --all` prints it (read by `shepherd-analysis`); and a repair
//! stack per scenario as `shepherd serve --policy` starts it. The lanes drive the browser
//! themselves, so the bad schedule's input can be sent while the page loads.

use anyhow::{Context, Result};
use rustls_pki_types::CertificateDer;
use shepherd_policies::PolicySet;
use shepherd_proxy::{CertificateAuthority, UpstreamTrust};
use shepherd_races::report::{self, RaceReport};
use shepherd_session::{Run, Stack, StackOptions};
use std::path::Path;
use std::sync::Arc;

/// A race and whether a policy orders it (`Shepherd::covers`).
#[derive(Debug, Clone)]
pub struct CoveredRace {
    /// Location name.
    pub location: String,
    /// `WRITE-READ`, …
    pub kind: String,
    /// Source positions of its sides (when known).
    pub sources: Vec<String>,
    /// The policy rules that order it (empty: happens-before does), or `None`.
    pub ordered_by: Option<Vec<String>>,
}

/// The interception CA shared by every stack of a lane.
pub struct Shepherd {
    ca: Arc<CertificateAuthority>,
    /// SPKI hash of the CA (for Chromium's allow list).
    pub spki: String,
}

impl Shepherd {
    /// A fresh interception CA (in memory).
    pub fn new() -> Result<Shepherd> {
        let ca = Arc::new(CertificateAuthority::ephemeral().context("creating a CA")?);
        let spki = ca.spki_sha256_base64();
        Ok(Shepherd { ca, spki })
    }

    /// Starts a recording stack writing `out`, trusting only `origin_ca` upstream, with the
    /// control secret `secret`. Its address is `stack.proxy().addr()`.
    pub async fn record(
        &self,
        out: &Path,
        origin_ca: &CertificateDer<'static>,
        secret: &str,
    ) -> Result<Stack> {
        let run = Run::Record {
            out: out.to_path_buf(),
            trust: UpstreamTrust::OnlyRoots(vec![origin_ca.clone()]),
        };
        self.start(run, secret, None).await
    }

    /// Starts a recording stack that also enforces `policy` (the repaired execution, traced).
    pub async fn record_with_policy(
        &self,
        out: &Path,
        origin_ca: &CertificateDer<'static>,
        secret: &str,
        policy: PolicySet,
    ) -> Result<Stack> {
        let run = Run::Record {
            out: out.to_path_buf(),
            trust: UpstreamTrust::OnlyRoots(vec![origin_ca.clone()]),
        };
        self.start(run, secret, Some(policy)).await
    }

    /// Starts a repair stack as `shepherd serve --policy` runs it (nothing rewritten or
    /// recorded, the runtime enforcing `policy`), trusting only `origin_ca` upstream.
    pub async fn serve(
        &self,
        origin_ca: &CertificateDer<'static>,
        secret: &str,
        policy: PolicySet,
    ) -> Result<Stack> {
        let run = Run::Serve {
            trust: UpstreamTrust::OnlyRoots(vec![origin_ca.clone()]),
        };
        self.start(run, secret, Some(policy)).await
    }

    async fn start(&self, run: Run, secret: &str, policy: Option<PolicySet>) -> Result<Stack> {
        Stack::start(
            run,
            StackOptions {
                operator_secret: Some(secret.to_string()),
                policy,
                ..StackOptions::default()
            },
            self.ca.clone(),
        )
        .await
    }

    /// Every race of the recording's page (covered ones too) with what `shepherd policy
    /// covers` says of it under `set`: the rules of the augmented happens-before ≤_P that
    /// order its two actions (empty when happens-before alone orders them), or `None`.
    pub fn covers(&self, rec: &Path, set: &PolicySet) -> Result<Vec<CoveredRace>> {
        let trace = shepherd_analysis::pipeline::load(rec, &mut ())?;
        let analysis = shepherd_races::analyze(
            &trace,
            &shepherd_races::Options {
                single_coverage: true,
                ..shepherd_races::Options::default()
            },
        )
        .with_context(|| format!("analysing {}", rec.display()))?;
        let hb: Vec<(u32, u32)> = analysis
            .graph
            .arcs()
            .iter()
            .map(|a| (a.tail, a.head))
            .collect();
        let aug = shepherd_policies::covers::Augmented::new(&trace, &hb, &set.policies);
        let rep = RaceReport::new(&trace, &analysis, true);
        Ok(rep
            .races
            .iter()
            .map(|r| CoveredRace {
                location: r.location.clone(),
                kind: r.kind.clone(),
                sources: [&r.first, &r.second]
                    .iter()
                    .filter_map(|s| s.source.clone())
                    .collect(),
                ordered_by: aug.orders(r.first.action, r.second.action),
            })
            .collect())
    }

    /// The races of the recording's top-level page with covered ones, in the versioned JSON
    /// of `docs/races-json.md`.
    pub fn races(&self, rec: &Path) -> Result<serde_json::Value> {
        let trace = shepherd_analysis::pipeline::load(rec, &mut ())?;
        let analysis = shepherd_races::analyze(
            &trace,
            &shepherd_races::Options {
                single_coverage: true,
                ..shepherd_races::Options::default()
            },
        )
        .with_context(|| format!("analysing {}", rec.display()))?;
        let json = report::json::render(&RaceReport::new(&trace, &analysis, true));
        serde_json::from_str(&json).context("reading the race report back")
    }
}
