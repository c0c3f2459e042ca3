//! `shepherd policy check FILE…`, `shepherd policy list`, `shepherd policy covers --policy P
//! TRACE|REC`: the repair policy language on the command line (`docs/policies.md`).

use anyhow::Context;
use clap::Subcommand;
use shepherd_policies::covers::{Augmented, ShippedOrderings};
use shepherd_races::graph::HbGraph;
use shepherd_races::report::RaceReport;
use shepherd_races::report::text::PendingMarks;
use shepherd_races::{Analysis, Options, analyze};
use shepherd_trace::Trace;
use std::path::PathBuf;
use std::process::ExitCode;
use std::thread::ScopedJoinHandle;

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
            let t = super::races::load_trace(&trace)?;
            let an = analyze(&t, &Options::default())
                .with_context(|| format!("cannot analyse {}", trace.display()))?;
            let aug = Augmented::new(&t, &hb_arcs(&an.graph), &set.policies);
            let rep = RaceReport::new(&t, &an, false);
            let (mut ordered, mut total) = (0, 0);
            for r in &rep.races {
                total += 1;
                let (a, b) = (r.first.action, r.second.action);
                let verdict = match aug.orders(a, b) {
                    Some(rules) if !rules.is_empty() => {
                        ordered += 1;
                        format!("ordered by {}", rules.join(", "))
                    }
                    _ => "not ordered".to_string(),
                };
                println!(
                    "race {} {} on {}: #{a} {} -> #{b} {}: {verdict}",
                    r.id, r.kind, r.location, r.first.action_kind, r.second.action_kind
                );
            }
            println!(
                "{ordered} of {total} uncovered races ordered by {}",
                set.names()
            );
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The happens-before arcs (logged and derived) the analysis used.
pub(crate) fn hb_arcs(graph: &HbGraph) -> Vec<(u32, u32)> {
    graph.arcs().iter().map(|a| (a.tail, a.head)).collect()
}

/// For each list of action pairs (a report's races), the shipped policies that order each
/// pair; and the policies given up at the budget. All lists share one simulation per policy:
/// a report and its HTML page ask about the same trace, and on a long session each
/// simulation costs up to its whole budget.
pub(crate) fn shipped_orderings(
    trace: &Trace,
    an: &Analysis,
    lists: &[Vec<(u32, u32)>],
) -> ListMarks {
    let by =
        shepherd_policies::covers::shipped_orderings(trace, &hb_arcs(&an.graph), &lists.concat());
    let lens: Vec<usize> = lists.iter().map(Vec::len).collect();
    split_by_list(by, &lens)
}

/// Splits the answers for lists of `lens` pairs, concatenated, back into one list per list,
/// and the policies given up at the budget.
fn split_by_list(by: ShippedOrderings, lens: &[usize]) -> ListMarks {
    let mut names = by.by_pair.into_iter();
    let split = lens
        .iter()
        .map(|&n| names.by_ref().take(n).collect())
        .collect();
    (split, by.undecided)
}

/// Per list of action pairs, the shipped policies that order each pair; and the policies
/// given up at the budget.
pub(crate) type ListMarks = (Vec<Vec<Vec<String>>>, Vec<String>);

/// The shipped policies' marks of a report's races (and its HTML page's), worked out on a
/// thread of their own.
pub(crate) struct PolicyMarks<'s> {
    thread: Option<ScopedJoinHandle<'s, ShippedOrderings>>,
    /// How many pairs each list has.
    lens: Vec<usize>,
    /// Per list, the policies that order each pair; and the policies not worked out.
    done: Option<ListMarks>,
}

impl<'s> PolicyMarks<'s> {
    /// Marks for `lists` (concatenated) that `thread` is working out.
    pub(crate) fn working(
        thread: ScopedJoinHandle<'s, ShippedOrderings>,
        lists: &[Vec<(u32, u32)>],
    ) -> Self {
        PolicyMarks {
            thread: Some(thread),
            lens: lists.iter().map(Vec::len).collect(),
            done: None,
        }
    }

    /// The marks of list `k` (taken out: asked once per list), waiting for the thread.
    pub(crate) fn of_list(&mut self, k: usize) -> (Vec<Vec<String>>, Vec<String>) {
        if let Some(thread) = self.thread.take() {
            let by = thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            self.done = Some(split_by_list(by, &self.lens));
        }
        match &mut self.done {
            Some((lists, undecided)) => (
                lists.get_mut(k).map(std::mem::take).unwrap_or_default(),
                undecided.clone(),
            ),
            None => Default::default(),
        }
    }
}

impl PendingMarks for PolicyMarks<'_> {
    fn is_ready(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    fn take(&mut self) -> (Vec<Vec<String>>, Vec<String>) {
        self.of_list(0)
    }
}

/// The action pairs of `rep`'s races, in order.
pub(crate) fn race_pairs(rep: &RaceReport) -> Vec<(u32, u32)> {
    rep.races
        .iter()
        .map(|r| (r.first.action, r.second.action))
        .collect()
}

/// Fills each race's `repaired_by` (in the order of [`race_pairs`]) and the policies not
/// worked out.
pub(crate) fn set_repaired_by(rep: &mut RaceReport, by: Vec<Vec<String>>, undecided: Vec<String>) {
    for (r, names) in rep.races.iter_mut().zip(by) {
        r.repaired_by = names;
    }
    rep.summary.policies_undecided = undecided;
}
