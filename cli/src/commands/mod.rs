//! One module per subcommand. Each exposes an `Args` struct (clap) and a `run` function.

pub(crate) mod ca;
pub(crate) mod check;
pub(crate) mod ci_outputs;
pub(crate) mod demo;
pub(crate) mod demo_repair;
pub(crate) mod explore;
pub(crate) mod har;
pub(crate) mod instrument;
pub(crate) mod policy;
pub(crate) mod proxy;
pub(crate) mod races;
pub(crate) mod trace;

use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;

/// The subcommands.
#[derive(Subcommand)]
pub(crate) enum Command {
    /// Record, analyse and report the bundled demo site (start here).
    Demo(demo::Args),
    /// Find event races in a trace (JSONL or ER_actionlog): uncovered races, filters, reports.
    Races(races::Args),
    /// Convert recordings to and from HAR 1.2 (devtools, other proxies).
    Har(har::Args),
    /// Check a recording's integrity (SQLite and every body's digest), e.g. after a crash.
    Check(check::Args),
    /// Merge the sessions of several recordings into one recording.
    Merge(har::MergeArgs),
    /// Print the instrumented form of an HTML or JavaScript file.
    Instrument(instrument::Args),
    /// Print or export the interception CA (`ca export`, `ca spki`).
    Ca(ca::Args),
    /// Proxy live traffic and record every exchange (`--listen`, `--out`).
    Record(proxy::RecordArgs),
    /// Serve a recording with no network access.
    Replay(proxy::ReplayArgs),
    /// Proxy live traffic (forward, or reverse with --reverse).
    Serve(proxy::ServeArgs),
    /// Print trace statistics (JSONL or ER_actionlog) or look at actions (`--action N`).
    Trace(trace::Args),
    /// Explore a recording under other event orders (R4) and report the harmful races.
    Explore(explore::Args),
    /// Check and list repair policies; which races a policy orders (`covers`).
    Policy(policy::Args),
}

/// Runs `command`.
pub(crate) fn run(command: Command, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match command {
        Command::Demo(args) => demo::run(args, _home),
        Command::Har(args) => har::run(args, _home),
        Command::Merge(args) => har::run_merge(args, _home),
        Command::Instrument(args) => instrument::run(args, _home),
        Command::Ca(args) => ca::run(args, _home),
        Command::Check(args) => check::run(args, _home),
        Command::Record(args) => proxy::run_record(args, _home),
        Command::Replay(args) => proxy::run_replay(args, _home),
        Command::Serve(args) => proxy::run_serve(args, _home),
        Command::Trace(args) => trace::run(args, _home),
        Command::Races(args) => races::run(args, _home),
        Command::Explore(args) => explore::run(args, _home),
        Command::Policy(args) => policy::run(args, _home),
    }
}
