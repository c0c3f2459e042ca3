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
