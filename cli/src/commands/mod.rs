//! One module per subcommand. Each exposes an `Args` struct (clap) and a `run` function.

use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn run(command: crate::Command, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match command {}
}
