//! One module per subcommand. Each exposes an `Args` struct (clap) and a `run` function.

pub(crate) mod ca;
pub(crate) mod check;
pub(crate) mod demo;
pub(crate) mod demo_repair;
pub(crate) mod explore;
pub(crate) mod har;
pub(crate) mod instrument;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod races;
pub(crate) mod trace;

use std::path::PathBuf;
use std::process::ExitCode;

pub(crate) fn run(command: crate::Command, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match command {
        crate::Command::Demo(args) => demo::run(args, _home),
        crate::Command::Har(args) => har::run(args, _home),
        crate::Command::Merge(args) => har::run_merge(args, _home),
        crate::Command::Instrument(args) => instrument::run(args, _home),
        crate::Command::Ca(args) => ca::run(args, _home),
        crate::Command::Check(args) => check::run(args, _home),
        crate::Command::Record(args) => proxy::run_record(args, _home),
        crate::Command::Replay(args) => proxy::run_replay(args, _home),
        crate::Command::Serve(args) => proxy::run_serve(args, _home),
        crate::Command::Trace(args) => trace::run(args, _home),
        crate::Command::Races(args) => races::run(args, _home),
        crate::Command::Explore(args) => explore::run(args, _home),
        crate::Command::Policy(args) => policy::run(args, _home),
    }
}
