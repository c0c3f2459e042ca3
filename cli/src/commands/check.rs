//! `shepherd check FILE.rec`: is a recording sound after a crash, a copy or a full disk?
//! SQLite's integrity check plus every body against its recorded length and SHA-256.

use anyhow::Context;
use shepherd_recording::Recording;
use std::path::PathBuf;
use std::process::ExitCode;

/// Check a recording's integrity; exits 1 when it is damaged.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The recording (.rec).
    recording: PathBuf,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let path = &args.recording;
    let report = Recording::open_readonly(path)
        .and_then(|rec| rec.check())
        .with_context(|| format!("checking {}", path.display()))?;
    println!(
        "{}: {} ({} sessions, {} exchanges of which {} record a failure, {} orphan chunks)",
        path.display(),
        if report.is_sound() {
            "sound"
        } else {
            "DAMAGED"
        },
        report.sessions,
        report.exchanges,
        report.failed_exchanges,
        report.orphan_chunks,
    );
    if report.sqlite != ["ok"] {
        for line in &report.sqlite {
            println!("sqlite: {line}");
        }
    }
    for (id, part) in &report.bad_bodies {
        println!("exchange {}: {part:?} body does not match its digest", id.0);
    }
    Ok(if report.is_sound() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
