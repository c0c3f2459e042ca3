//! One module per subcommand. Each exposes an `Args` struct (clap) and a `run` function.

pub(crate) mod har;
pub(crate) mod instrument;

use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn run(command: crate::Command, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match command {
        crate::Command::Har(args) => har::run(args, _home),
        crate::Command::Merge(args) => har::run_merge(args, _home),
        crate::Command::Instrument(args) => instrument::run(args, _home),
    }
}
