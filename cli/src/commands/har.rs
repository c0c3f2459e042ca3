//! `shepherd har export|import` (HAR 1.2 to and from recordings) and `shepherd merge` (several
//! recordings' sessions into one file, e.g. so replay can learn request patterns from two
//! browsing sessions).

use crate::progress::Progress;
use anyhow::{Context, bail};
use shepherd_recording::{Recording, SessionId, har, merge_with_progress};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Convert recordings to and from HAR 1.2 (browser devtools, other proxies).
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: HarCommand,
}

#[derive(clap::Subcommand)]
enum HarCommand {
    /// Write a recording as HAR 1.2 (to stdout unless --out is given).
    Export {
        /// The recording (.rec).
        recording: PathBuf,
        /// Export only this session (see the session ids in the recording).
        #[arg(long)]
        session: Option<i64>,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        out: Option<PathBuf>,
    },
    /// Import a HAR file as a new session of a recording (created if missing).
    Import {
        /// The HAR file (`-` for stdin).
        har: PathBuf,
        /// The recording to add the session to.
        #[arg(long, short)]
        out: PathBuf,
        /// Session label (default: "har import <file>").
        #[arg(long)]
        label: Option<String>,
    },
}

/// Merge recordings: every session of every input becomes a session of the output.
#[derive(clap::Args)]
pub(crate) struct MergeArgs {
    /// Input recordings, in order.
    #[arg(required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// Output recording (created if missing; existing sessions are kept).
    #[arg(long, short)]
    out: PathBuf,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match args.command {
        HarCommand::Export {
            recording,
            session,
            out,
        } => {
            let rec = Recording::open_readonly(&recording)
                .with_context(|| format!("opening {}", recording.display()))?;
            if let Some(s) = session
                && !rec.sessions()?.iter().any(|x| x.id.0 == s)
            {
                bail!("{} has no session {s}", recording.display());
            }
            let session = session.map(SessionId);
            let progress = Progress::items(0, "exporting exchanges");
            let mut on = |done, total| progress.update(done, total);
            match out {
                Some(path) => {
                    let file = std::fs::File::create(&path)
                        .with_context(|| format!("creating {}", path.display()))?;
                    let mut w = std::io::BufWriter::new(file);
                    har::export_with_progress(&rec, session, &mut w, &mut on)?;
                    w.flush()?;
                }
                None => {
                    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
                    har::export_with_progress(&rec, session, &mut w, &mut on)?;
                    w.flush()?;
                }
            }
            progress.finish();
            Ok(ExitCode::SUCCESS)
        }
        HarCommand::Import {
            har: input,
            out,
            label,
        } => {
            let label = label.unwrap_or_else(|| format!("har import {}", input.display()));
            // The whole document is parsed first (bytes read), then its entries are stored.
            let reading = Progress::bytes(0, "reading the HAR file");
            let mut reader: Box<dyn std::io::Read> = if input.as_os_str() == "-" {
                Box::new(reading.reader(std::io::stdin().lock()))
            } else {
                let file = std::fs::File::open(&input)
                    .with_context(|| format!("opening {}", input.display()))?;
                reading.set_total(file.metadata().map(|m| m.len()).unwrap_or(0));
                Box::new(reading.reader(std::io::BufReader::new(file)))
            };
            let existed = out.exists();
            let rec =
                Recording::open(&out).with_context(|| format!("opening {}", out.display()))?;
            let mut reading = Some(reading);
            let mut storing: Option<Progress> = None;
            let result =
                har::import_with_progress(&rec, &mut reader, &label, &mut |done, total| {
                    // Called once the document is parsed: the byte count is done.
                    reading.take();
                    storing
                        .get_or_insert_with(|| Progress::items(total, "importing entries"))
                        .update(done, total);
                });
            drop((reading, storing));
            drop(rec);
            let (session, n) = match result {
                Ok(r) => r,
                Err(e) => {
                    if !existed {
                        // Do not leave an empty recording behind for a rejected file.
                        let _ = std::fs::remove_file(&out);
                    }
                    return Err(e).with_context(|| format!("importing {}", input.display()));
                }
            };
            eprintln!(
                "imported {n} entries into {} as session {}",
                out.display(),
                session.0
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

pub(crate) fn run_merge(args: MergeArgs, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if let Some(clash) = args.inputs.iter().find(|i| same_file(i, &args.out)) {
        bail!(
            "--out {} is also an input ({}); merge into a new file",
            args.out.display(),
            clash.display()
        );
    }
    let inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    let progress = Progress::items(0, "merging exchanges");
    let report = merge_with_progress(&inputs, &args.out, &mut |done, total| {
        progress.update(done, total)
    })?;
    progress.finish();
    eprintln!(
        "merged {} sessions, {} exchanges, {} traces into {}",
        report.sessions,
        report.exchanges,
        report.traces,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
