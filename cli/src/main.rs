//! `shepherd`: the command-line front end. Each subcommand lives in its own module under
//! `commands/`; this file only parses arguments, sets up logging and dispatches.

mod commands;
mod demo_site;
mod memory;
mod progress;

use clap::Parser;

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

    /// Log lines on stderr as text, or as one JSON object per line (for log shippers);
    /// `$SHEPHERD_LOG` filters them (default: info).
    #[arg(
        long,
        global = true,
        env = "SHEPHERD_LOG_FORMAT",
        default_value = "text"
    )]
    log_format: LogFormat,

    #[command(subcommand)]
    command: commands::Command,
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum LogFormat {
    /// For people.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields` (with `message`).
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_env("SHEPHERD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only for a terminal: a log file or a journal would keep the escape codes.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    // Before any proxy computes its connection cap from it.
    shepherd_proxy::limits::raise_descriptor_limit();
    match commands::run(cli.command, cli.home) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
