//! The CI outputs `shepherd races` and `shepherd explore` share (`--sarif`, `--junit`,
//! `--fail-on`, `--map-url`): the findings of a report (`shepherd-ci`) written where asked,
//! and the exit status a pipeline gates on.

use anyhow::Context;
use shepherd_ci::finding::Finding;
use shepherd_ci::gate::{EXIT_TRIPPED, FailOn};
use shepherd_ci::junit::{self, Suite};
use shepherd_ci::position::UrlMap;
use shepherd_ci::sarif::{self, RunInfo};
use std::path::PathBuf;
use std::process::ExitCode;

/// The flags.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct CiArgs {
    /// Write a SARIF 2.1.0 log here (code scanning): one result per race group, both accesses'
    /// positions as its locations, a rule per race class.
    #[arg(long, value_name = "OUT.sarif")]
    sarif: Option<PathBuf>,
    /// Write a JUnit XML report here: one test case per race group; harmful ones fail with
    /// their witness, undecided ones are skipped.
    #[arg(long, value_name = "OUT.xml")]
    junit: Option<PathBuf>,
    /// Exit with status 3 when something harmful was found (`harmful`), or when any race is
    /// not shown harmless (`uncovered`); errors keep status 1.
    #[arg(long, value_name = "harmful|uncovered", value_parser = parse_fail_on)]
    fail_on: Option<FailOn>,
    /// Where page URLs live in the repository, for SARIF locations code scanning can show on
    /// a file: `URL_PREFIX=PATH` (e.g. `https://staging.example/static/=web/static/`);
    /// repeatable, the longest prefix wins.
    #[arg(long, value_name = "URL_PREFIX=PATH")]
    map_url: Vec<String>,
}

fn parse_fail_on(s: &str) -> Result<FailOn, String> {
    s.parse()
}

impl CiArgs {
    /// Whether any CI output or the gate was asked for (the report's findings are then made).
    pub(crate) fn wanted(&self) -> bool {
        self.sarif.is_some() || self.junit.is_some() || self.fail_on.is_some()
    }

    /// Checks what can be checked before the (possibly long) run: the URL map.
    pub(crate) fn url_map(&self) -> anyhow::Result<UrlMap> {
        UrlMap::parse(&self.map_url).map_err(|e| anyhow::anyhow!("--map-url {e}"))
    }

    /// Writes the asked outputs of `findings` and returns the exit status: success, or
    /// [`EXIT_TRIPPED`] when `--fail-on` trips (said on stderr, with what tripped it).
    pub(crate) fn finish(
        &self,
        findings: &[Finding],
        mut info: RunInfo,
        suite: Suite,
    ) -> anyhow::Result<ExitCode> {
        if let Some(path) = &self.sarif {
            info.urls = self.url_map()?;
            std::fs::write(path, sarif::to_string(findings, &info))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(path) = &self.junit {
            std::fs::write(path, junit::render(findings, &suite))
                .with_context(|| format!("writing {}", path.display()))?;
        }
        let Some(gate) = self.fail_on else {
            return Ok(ExitCode::SUCCESS);
        };
        let tripped = gate.tripped(findings);
        if tripped.is_empty() {
            eprintln!("shepherd: --fail-on {}: nothing trips it", gate.as_str());
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "shepherd: --fail-on {}: {} finding(s) trip it (exit status {EXIT_TRIPPED}):",
            gate.as_str(),
            tripped.len()
        );
        for f in tripped.iter().take(20) {
            eprintln!("  {}", f.headline());
        }
        if tripped.len() > 20 {
            eprintln!("  … and {} more", tripped.len() - 20);
        }
        Ok(ExitCode::from(EXIT_TRIPPED))
    }
}
