//! A whole exploration: the initial execution in the recorded order, then the reorder phase's
//! jobs spread over the workers, every result folded into the explorer and judged against its
//! parent as it arrives, until nothing is left within the bound or the budget runs out.
//!
//! State lives beside the recording (`site.rec.explore/`): `state.json` (the explorer, the
//! event table, jobs that were running) and one record per execution in `runs/` (with its
//! screenshot), so an interrupted exploration resumes where it stopped.

use crate::runner::{Plan, Worker, WorkerConfig};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use shepherd_explore_model::dpor::{Explorer, Job, OriginKind};
use shepherd_explore_model::event::{Ev, EventTable};
use shepherd_explore_model::execution::Relations;
use shepherd_explore_model::observation::RunOutput;
use shepherd_explore_model::outcome::{Cause, OriginNote, Outcome, PairRaces, RunRecord, StepRace};
use shepherd_explore_model::site::Site;
use shepherd_explore_model::steps;
use shepherd_explore_model::verdict;
use shepherd_policies::PolicySet;
use shepherd_proxy::CertificateAuthority;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Version of the state directory's format.
const STATE_VERSION: u32 = 1;

/// How to explore.
#[derive(Clone)]
pub struct ExploreOptions {
    /// Conflict-reversal bound.
    pub bound: u32,
    /// Stop starting executions after this long (this session).
    pub budget: Option<Duration>,
    /// Stop starting executions after this many have finished in this session.
    pub max_sequences: Option<u64>,
    /// One entry per worker.
    pub workers: Vec<WorkerConfig>,
    /// Where state is kept (default: beside the recording).
    pub state_dir: Option<PathBuf>,
    /// Start over even when state exists.
    pub fresh: bool,
    /// Repair policies enforced in every execution: only the orders they allow are explored
    /// (what stays harmful under a policy is what it does not repair).
    pub policy: Option<PolicySet>,
}

/// Where an exploration stands (for progress display).
#[derive(Clone, Debug, Default)]
pub struct Progress {
    /// Executions finished.
    pub explored: u64,
    /// Sequences waiting within the bound.
    pub pending: usize,
    /// Depth of the last finished execution.
    pub depth: u32,
    /// Harmful reversals found so far.
    pub harmful: u64,
    /// Executions that failed.
    pub failures: u64,
}

#[derive(Serialize, Deserialize)]
struct State {
    version: u32,
    fingerprint: String,
    table: EventTable,
    explorer: Explorer,
    /// Jobs handed out and not finished when the state was saved.
    requeue: Vec<Job>,
    runs: u32,
    failures: u64,
    elapsed_ms: u64,
}

/// The default state directory of a recording: `site.rec.explore` beside it.
pub fn default_state_dir(recording: &Path) -> PathBuf {
    let mut name = recording.file_name().unwrap_or_default().to_os_string();
    name.push(".explore");
    recording.with_file_name(name)
}

/// Explores `site`. `progress` is called after every finished execution.
pub async fn explore(
    site: Site,
    opts: &ExploreOptions,
    mut progress: impl FnMut(&Progress),
) -> anyhow::Result<Outcome> {
    if opts.workers.is_empty() {
        bail!("no worker");
    }
    let session_start = Instant::now();
    let dir = opts
        .state_dir
        .clone()
        .unwrap_or_else(|| default_state_dir(&site.recording));
    let runs_dir = dir.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("creating {}", runs_dir.display()))?;
    let fingerprint = fingerprint(&site, opts.policy.as_ref());
    let mut state = match (opts.fresh, load_state(&dir)) {
        (false, Some(s)) if s.fingerprint == fingerprint && s.version == STATE_VERSION => s,
        _ => State {
            version: STATE_VERSION,
            fingerprint,
            table: EventTable::default(),
            explorer: Explorer::new(opts.bound),
            requeue: Vec::new(),
            runs: 0,
            failures: 0,
            elapsed_ms: 0,
        },
    };
    state.explorer.set_bound(opts.bound);
    let mut runs: Vec<RunRecord> = Vec::new();
    for id in 0..state.runs {
        let path = runs_dir.join(format!("{id}.json"));
        let text = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        runs.push(
            serde_json::from_slice(&text).with_context(|| format!("reading {}", path.display()))?,
        );
    }
    let ca = Arc::new(CertificateAuthority::ephemeral()?);
    let site = Arc::new(site);
    let mut idle: Vec<(usize, Worker)> = Vec::new();
    for (k, cfg) in opts.workers.iter().enumerate() {
        idle.push((
            k,
            Worker::start(cfg, opts.policy.as_ref(), ca.clone()).await?,
        ));
    }
    let mut prog = Progress {
        explored: runs.len() as u64,
        failures: state.failures,
        harmful: runs
            .iter()
            .filter(|r| {
                r.verdict
                    .as_ref()
                    .is_some_and(|v| v.verdict == verdict::Judgement::Harmful)
            })
            .count() as u64,
        ..Progress::default()
    };
    let mut requeue = std::mem::take(&mut state.requeue);
    let mut running: tokio::task::JoinSet<(usize, Worker, Option<Job>, anyhow::Result<RunOutput>)> =
        tokio::task::JoinSet::new();
    let mut in_flight: HashMap<usize, Option<Job>> = HashMap::new();
    let mut last_save = Instant::now();
    let resumed_at = runs.len() as u64;
    let over_budget = |t: &Instant, done: usize| {
        opts.budget.is_some_and(|b| t.elapsed() >= b)
            || opts
                .max_sequences
                .is_some_and(|m| done as u64 >= resumed_at + m)
    };
    loop {
        // Hand out work: the initial execution first, then jobs depth first.
        while !idle.is_empty() && !over_budget(&session_start, runs.len() + in_flight.len()) {
            let job = if runs.is_empty() {
                if in_flight.values().any(Option::is_none) {
                    break;
                }
                None
            } else if let Some(j) = requeue.pop() {
                Some(j)
            } else if let Some(j) = state.explorer.next_job() {
                Some(j)
            } else {
                break;
            };
            let Some((k, worker)) = idle.pop() else { break };
            let plan = match &job {
                None => Plan::Recorded,
                Some(j) => {
                    // What enabled each event in the execution the job came from.
                    let parent = j
                        .origin
                        .and_then(|o| state.explorer.origin(o))
                        .and_then(|o| runs.get(o.parent as usize));
                    let name = |e: &Ev| state.table.name(*e).to_string();
                    Plan::Job {
                        prefix: j.prefix.iter().map(name).collect(),
                        seq: j.seq.iter().map(name).collect(),
                        enablers: parent
                            .map(|p| p.enablers.iter().cloned().collect())
                            .unwrap_or_default(),
                    }
                }
            };
            in_flight.insert(k, job.clone());
            let site = site.clone();
            running.spawn(async move {
                let r = worker.run(&site, &plan).await;
                (k, worker, job, r)
            });
        }
        let Some(done) = running.join_next().await else {
            break;
        };
        let (k, worker, job, result) = done.context("an execution task panicked")?;
        in_flight.remove(&k);
        match result {
            Ok(out) => {
                let rec = fold(&mut state, &runs, job.as_ref(), out, &runs_dir)?;
                prog.explored += 1;
                prog.depth = rec.depth;
                if rec
                    .verdict
                    .as_ref()
                    .is_some_and(|v| v.verdict == verdict::Judgement::Harmful)
                {
                    prog.harmful += 1;
                }
                runs.push(rec);
                state.runs = runs.len() as u32;
                idle.push((k, worker));
            }
            Err(e) => {
                tracing::warn!("execution failed on worker {k}: {e:#}");
                state.failures += 1;
                prog.failures = state.failures;
                if runs.is_empty() && state.failures >= 3 {
                    bail!("the initial execution failed three times: {e:#}");
                }
                // A failed job is not tried again (the initial execution is, above).
                worker.stop().await;
                match Worker::start(&opts.workers[k], opts.policy.as_ref(), ca.clone()).await {
                    Ok(w) => idle.push((k, w)),
                    Err(e) => tracing::warn!("worker {k} could not restart: {e:#}"),
                }
                if idle.is_empty() && running.is_empty() {
                    bail!("every worker failed");
                }
            }
        }
        prog.pending = state.explorer.pending() + requeue.len();
        progress(&prog);
        if last_save.elapsed() >= Duration::from_secs(2) {
            save_state(&dir, &state, &requeue, &in_flight, session_start)?;
            last_save = Instant::now();
        }
    }
    for (_, w) in idle {
        w.stop().await;
    }
    let complete = requeue.is_empty() && state.explorer.pending() == 0 && !runs.is_empty();
    save_state(&dir, &state, &requeue, &HashMap::new(), session_start)?;
    let elapsed = Duration::from_millis(state.elapsed_ms) + session_start.elapsed();
    let site = Arc::try_unwrap(site).unwrap_or_else(|s| (*s).clone());
    Ok(Outcome {
        site,
        runs,
        explorer: state.explorer,
        table: state.table,
        complete,
        failures: state.failures,
        elapsed,
        state_dir: dir,
        policy: opts.policy.as_ref().map(PolicySet::names),
    })
}

/// Folds a finished execution in: the explorer, the verdict against its parent, the record.
fn fold(
    state: &mut State,
    runs: &[RunRecord],
    job: Option<&Job>,
    out: RunOutput,
    runs_dir: &Path,
) -> anyhow::Result<RunRecord> {
    let built = steps::build(&mut state.table, &out);
    let id = state.explorer.record(&built.exec, job);
    let info = state.explorer.runs()[id as usize].clone();
    let origin = info
        .origin
        .and_then(|o| state.explorer.origin(o).cloned())
        .map(|o| {
            let parent = runs.get(o.parent as usize);
            match o.kind {
                OriginKind::Reversal {
                    first,
                    second,
                    first_event,
                    second_event,
                    posts,
                } => OriginNote {
                    parent: o.parent,
                    kind: Cause::Reversal,
                    steps: (first, second),
                    events: (
                        state.table.name(first_event).to_string(),
                        state.table.name(second_event).to_string(),
                    ),
                    posts,
                    races: parent
                        .map(|p| p.races_between(first, second).to_vec())
                        .unwrap_or_default(),
                },
                OriginKind::Disabled { step, by, event } => OriginNote {
                    parent: o.parent,
                    kind: Cause::Disabled,
                    steps: (step, step),
                    events: (
                        state.table.name(by).to_string(),
                        state.table.name(event).to_string(),
                    ),
                    posts: None,
                    races: Vec::new(),
                },
            }
        });
    let rel = Relations::new(&built.exec);
    let pairs = rel
        .races()
        .into_iter()
        .map(|r| PairRaces {
            first: r.first,
            second: r.second,
            races: built
                .races
                .get(&(r.first, r.second))
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    let racing_pairs = rel.racing_pairs();
    let screenshot = match &out.snapshot.screenshot {
        Some(png) => {
            let name = format!("{id}.png");
            std::fs::write(runs_dir.join(&name), png).with_context(|| format!("writing {name}"))?;
            Some(name)
        }
        None => None,
    };
    let mut snapshot = out.snapshot;
    let verdict = origin.as_ref().and_then(|o| {
        let parent = runs.get(o.parent as usize)?;
        let mut ps = parent.snapshot.clone();
        ps.screenshot = parent
            .screenshot
            .as_ref()
            .and_then(|f| std::fs::read(runs_dir.join(f)).ok());
        Some(verdict::judge(&ps, &snapshot, &o.races))
    });
    snapshot.screenshot = None;
    let rec = RunRecord {
        id,
        depth: info.depth,
        origin,
        steps: out.steps.iter().map(|s| s.name.clone()).collect(),
        skipped: out.skipped,
        diverged: out.diverged,
        stopped: out.stopped,
        elapsed_ms: out.elapsed.as_millis() as u64,
        snapshot,
        screenshot,
        pairs,
        uncovered: if id == 0 {
            built
                .uncovered
                .into_iter()
                .map(|(first, second, race)| StepRace {
                    first,
                    second,
                    race,
                })
                .collect()
        } else {
            Vec::new()
        },
        racing_pairs,
        enablers: built.enablers,
        verdict,
    };
    let path = runs_dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_vec(&rec)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(rec)
}

/// Identifies what was explored: the page, the recorded order and the policies in force (a
/// resumed run under other policies would mix two explorations).
fn fingerprint(site: &Site, policy: Option<&PolicySet>) -> String {
    let policy = policy
        .map(|p| p.compile().json.to_string())
        .unwrap_or_default();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in site
        .page
        .bytes()
        .chain(
            site.recorded_order
                .iter()
                .flat_map(|s| s.bytes().chain([0])),
        )
        .chain((site.trace.actions.len() as u64).to_le_bytes())
        .chain(policy.bytes())
    {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn load_state(dir: &Path) -> Option<State> {
    let text = std::fs::read(dir.join("state.json")).ok()?;
    serde_json::from_slice(&text).ok()
}

fn save_state(
    dir: &Path,
    state: &State,
    requeue: &[Job],
    in_flight: &HashMap<usize, Option<Job>>,
    session_start: Instant,
) -> anyhow::Result<()> {
    #[derive(Serialize)]
    struct Saved<'a> {
        version: u32,
        fingerprint: &'a str,
        table: &'a EventTable,
        explorer: &'a Explorer,
        requeue: Vec<&'a Job>,
        runs: u32,
        failures: u64,
        elapsed_ms: u64,
    }
    let saved = Saved {
        version: state.version,
        fingerprint: &state.fingerprint,
        table: &state.table,
        explorer: &state.explorer,
        requeue: requeue.iter().chain(in_flight.values().flatten()).collect(),
        runs: state.runs,
        failures: state.failures,
        elapsed_ms: state.elapsed_ms + session_start.elapsed().as_millis() as u64,
    };
    let tmp = dir.join("state.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&saved)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("state.json")).context("saving the exploration state")?;
    Ok(())
}
