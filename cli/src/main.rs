//! `shepherd`: the command-line front end. Each subcommand lives in its own module under
//! `commands/`; this file only parses arguments, sets up logging and dispatches.

mod commands;
mod demo_site;
mod memory;
mod progress;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc malloc: the JS pass allocates and frees whole syntax trees per
/// script and the proxy many small buffers (the JS pass benchmark runs with it too).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::path::PathBuf;
use std::process::ExitCode;

/// Record, find, repair and explore event races in web pages.
#[derive(Parser)]
#[command(name = "shepherd", version, about)]
struct Cli {
    /// Directory holding the CA (default: $SHEPHERD_HOME, else ./certs in a checkout, else the
    /// user data directory).
    #[arg(long, global = true, env = "SHEPHERD_HOME")]
    home: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Record, analyse and report the bundled demo site (start here).
    Demo(commands::demo::Args),
    /// Find event races in a trace (JSONL or ER_actionlog): uncovered races, filters, reports.
    Races(commands::races::Args),
    /// Convert recordings to and from HAR 1.2 (devtools, other proxies).
    Har(commands::har::Args),
    /// Check a recording's integrity (SQLite and every body's digest), e.g. after a crash.
    Check(commands::check::Args),
    /// Merge the sessions of several recordings into one recording.
    Merge(commands::har::MergeArgs),
    /// Print the instrumented form of an HTML or JavaScript file.
    Instrument(commands::instrument::Args),
    /// Print or export the interception CA (`ca export`, `ca spki`).
    Ca(commands::ca::Args),
    /// Proxy live traffic and record every exchange (`--listen`, `--out`).
    Record(commands::proxy::RecordArgs),
    /// Serve a recording with no network access.
    Replay(commands::proxy::ReplayArgs),
    /// Proxy live traffic (forward, or reverse with --reverse).
    Serve(commands::proxy::ServeArgs),
    /// Print trace statistics (JSONL or ER_actionlog) or look at actions (`--action N`).
    Trace(commands::trace::Args),
    /// Explore a recording under other event orders (R4) and report the harmful races.
    Explore(commands::explore::Args),
    /// Check and list repair policies; which races a policy orders (`covers`).
    Policy(commands::policy::Args),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SHEPHERD_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    // Before any proxy computes its connection cap from it.
    shepherd_proxy::limits::raise_descriptor_limit();
    match run(cli.command, cli.home) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Runs the subcommand (one module of `commands/` each).
fn run(command: Command, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match command {
        Command::Demo(args) => commands::demo::run(args, _home),
        Command::Har(args) => commands::har::run(args, _home),
        Command::Merge(args) => commands::har::run_merge(args, _home),
        Command::Instrument(args) => commands::instrument::run(args, _home),
        Command::Ca(args) => commands::ca::run(args, _home),
        Command::Check(args) => commands::check::run(args, _home),
        Command::Record(args) => commands::proxy::run_record(args, _home),
        Command::Replay(args) => commands::proxy::run_replay(args, _home),
        Command::Serve(args) => commands::proxy::run_serve(args, _home),
        Command::Trace(args) => commands::trace::run(args, _home),
        Command::Races(args) => commands::races::run(args, _home),
        Command::Explore(args) => commands::explore::run(args, _home),
        Command::Policy(args) => commands::policy::run(args, _home),
    }
}
