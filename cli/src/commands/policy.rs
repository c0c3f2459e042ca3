//! `shepherd policy check FILE…`, `shepherd policy list`, `shepherd policy covers --policy P
//! TRACE|REC`: the repair policy language on the command line (`docs/policies.md`).

use crate::progress::PipelineProgress;
use clap::Subcommand;
use shepherd_analysis::memory;
use shepherd_analysis::pipeline::Input;
use std::path::PathBuf;
use std::process::ExitCode;

/// Check, list and evaluate repair policies.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Check policy files (or shipped names): errors with line and column, else each policy
    /// explained in words.
    Check {
        /// Policy files or shipped names.
        #[arg(required = true)]
        files: Vec<String>,
        /// Print the compiled JSON the runtime loads instead of the explanation.
        #[arg(long)]
        json: bool,
    },
    /// List the shipped policies and what each repairs.
    List,
    /// For each uncovered race of a trace, whether the policy orders its two actions.
    Covers {
        /// Policies: shipped names or files, comma-separated.
        #[arg(long, value_name = "P")]
        policy: String,
        /// A recording (`.rec`), a JSONL trace or an `ER_actionlog`.
        trace: PathBuf,
    },
}

/// Loads `--policy`; on errors prints them (line and column) and fails.
pub(crate) fn load_or_report(spec: &str) -> anyhow::Result<shepherd_policies::PolicySet> {
    match shepherd_policies::load(spec) {
        Ok(set) => {
            if !set.warnings.is_empty() {
                eprint!("{}", set.warnings);
            }
            Ok(set)
        }
        Err(e) => {
            eprint!("{}", e.rendered);
            anyhow::bail!("the policy does not load; nothing was started")
        }
    }
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match args.command {
        Cmd::Check { files, json } => {
            let mut failed = false;
            for f in &files {
                match shepherd_policies::load(f) {
                    Ok(set) => {
                        eprint!("{}", set.warnings);
                        if json {
                            let c = set.compile();
                            println!("{}", serde_json::json!({"compiled": c.json, "js": c.js}));
                        } else {
                            for p in &set.policies {
                                print!("{}", shepherd_policies::explain::explain(p));
                            }
                        }
                    }
                    Err(e) => {
                        eprint!("{}", e.rendered);
                        failed = true;
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::List => {
            for (name, text) in shepherd_policies::SHIPPED {
                println!("{name:16} {}", shepherd_policies::summary(text));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Covers { policy, trace } => {
            let set = load_or_report(&policy)?;
            // A one-shot analysis: freed memory goes back to the OS as the phases end.
            memory::for_batch_analysis();
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            shepherd_analysis::covers::write(
                &mut out,
                Input::File(&trace),
                &set,
                &mut PipelineProgress::default(),
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
