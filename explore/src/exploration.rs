//! A whole exploration: the initial execution in the recorded order, then the reorder phase's
//! jobs spread over the workers, every result folded into the explorer and judged against its
//! parent as it arrives, until nothing is left within the bound or the budget runs out.
//!
//! State lives beside the recording (`site.rec.explore/`): `state.json` (the explorer, the
//! event table, jobs that were running) and one record per execution in `runs/` (with its
//! screenshot), so an interrupted exploration resumes where it stopped.
//!
//! The queue of jobs (the explorer's pending sequences and the jobs to hand out again) lives
//! here, in this one task, and is the only state the workers share: a worker takes a job when
//! it is idle and hands back a result, which is folded in here. Workers start (and restart)
//! concurrently with the executions, so a browser that takes long to come (a Grid session
//! queued until a node has a free slot) holds up nobody. A sequence whose browser went away
//! (crashed, or its Grid node died) is handed to the next idle worker once more; a sequence
//! that fails in a live browser is counted, not retried. Whatever way the exploration ends
//! (finished, failed, stopped by [`Stop`]), every worker is stopped and every Grid session
//! deleted before [`explore`] returns.

use crate::grid::Grid;
use crate::runner::{BrowserSpec, Plan, Worker, WorkerConfig};
use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use shepherd_explore_model::dpor::{Explorer, Job, OriginKind};
use shepherd_explore_model::event::{Ev, EventTable};
use shepherd_explore_model::execution::Relations;
use shepherd_explore_model::gesture;
use shepherd_explore_model::naming::EventName;
use shepherd_explore_model::observation::RunOutput;
use shepherd_explore_model::outcome::{
    Cause, OriginNote, Outcome, PairRaces, ProbeOutcome, ProbeResult, ProbeRole, RaceOrders,
    RunRecord, StepRace,
};
use shepherd_explore_model::site::Site;
use shepherd_explore_model::steps;
use shepherd_explore_model::triage::{self, ProbeKind, Triage, Unexplored, Window};
use shepherd_explore_model::verdict;
use shepherd_policies::PolicySet;
use shepherd_proxy::CertificateAuthority;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Version of the state directory's format.
/// 3: the reorder phase's explored events and sequences carry their least depth.
const STATE_VERSION: u32 = 3;

/// How often the Grids' queues are asked about this exploration's session requests while a
/// worker waits for its browser.
const QUEUE_POLL: Duration = Duration::from_secs(1);

/// Ends an exploration early from outside (Ctrl-C, SIGTERM): no sequence starts after it,
/// sequences running are abandoned (saved as pending, so a resumed run executes them), every
/// worker is stopped and every Grid session deleted, and [`explore`] returns what was explored
/// (not complete). Clones share one signal.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    inner: Arc<StopInner>,
}

#[derive(Debug, Default)]
struct StopInner {
    stopped: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Stop {
    /// Signals the exploration to stop.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether [`Stop::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Resolves once [`Stop::stop`] is called.
    pub async fn stopped(&self) {
        loop {
            // Made before the check: a stop between the check and the wait still wakes it.
            let notified = self.inner.notify.notified();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

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
    /// Triage's limits (probes per location).
    pub triage: triage::Limits,
    /// Stops the exploration early when signalled (never, if nobody signals it).
    pub stop: Stop,
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
    /// Executions that failed (in a live browser, or a second time after their browser went
    /// away).
    pub failures: u64,
    /// Sequences handed to another worker because their browser went away.
    pub retried: u64,
    /// Workers with a browser (idle or executing).
    pub workers: usize,
    /// Workers waiting for their browser (starting, or a Grid session being created).
    pub starting: usize,
    /// Of those, session requests the Grid has queued (no node has a free slot).
    pub queued: usize,
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
    /// Every uncovered race of the recording and the probes planned for them (after the
    /// initial execution).
    triage: Option<Triage>,
    /// The runs of each probe so far.
    probes: BTreeMap<u32, ProbeResult>,
}

/// One unit of work for a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Work {
    /// The recorded order.
    Initial,
    /// A probe or its reference.
    Probe(ProbeRole),
    /// A sequence of the reorder phase.
    Job(Job),
}

/// The default state directory of a recording: `site.rec.explore` beside it.
pub fn default_state_dir(recording: &Path) -> PathBuf {
    let mut name = recording.file_name().unwrap_or_default().to_os_string();
    name.push(".explore");
    recording.with_file_name(name)
}

/// Explores `site`. `progress` is called after every finished execution and whenever a
/// worker's browser comes, goes or waits at a Grid.
pub async fn explore(
    site: Site,
    opts: &ExploreOptions,
    progress: impl FnMut(&Progress),
) -> anyhow::Result<Outcome> {
    let mut grids: Vec<Grid> = Vec::new();
    for w in &opts.workers {
        if let BrowserSpec::Grid(g) = &w.browser
            && !grids.iter().any(|x| x.same(g))
        {
            grids.push(g.clone());
        }
    }
    let result = run(site, opts, &grids, progress).await;
    // Whatever happened above: no session is left on a Grid.
    for g in &grids {
        g.release_all().await;
    }
    result
}

/// What a task of the exploration hands back: an execution's result (with its worker), or a
/// worker that started (or could not).
enum Done {
    Ran(Box<Ran>),
    Started(usize, anyhow::Result<Box<Worker>>),
}

/// An execution's result: the worker (with its slot) and the work it ran.
type Ran = (usize, Box<Worker>, Work, anyhow::Result<RunOutput>);

/// Where the replay cuts the page's document (the page's URL and the split), set on every
/// worker as it starts.
type Cuts = Option<(String, shepherd_proxy::DocumentSplit)>;

/// Starts worker `k`, after stopping the one it replaces.
async fn start_worker(
    k: usize,
    cfg: WorkerConfig,
    policy: Option<PolicySet>,
    ca: Arc<CertificateAuthority>,
    cuts: Cuts,
    replaces: Option<Box<Worker>>,
) -> Done {
    if let Some(old) = replaces {
        old.stop().await;
    }
    let started = Worker::start(&cfg, policy.as_ref(), ca).await.map(|w| {
        if let Some((page, split)) = cuts {
            w.set_document_split(&page, split);
        }
        Box::new(w)
    });
    Done::Started(k, started)
}

async fn run(
    site: Site,
    opts: &ExploreOptions,
    grids: &[Grid],
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
            triage: None,
            probes: BTreeMap::new(),
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
    // Where the replay cuts the page's document: before every script and after every element
    // a gesture targets; and its encoding, declared so the browser parses the first part alone.
    let cuts: Cuts = site.document_structure().map(|d| {
        (
            site.page.clone(),
            shepherd_proxy::DocumentSplit {
                cuts: d.cuts(),
                charset: document_charset(&site),
            },
        )
    });
    let site = Arc::new(site);
    let mut tasks: tokio::task::JoinSet<Done> = tokio::task::JoinSet::new();
    let mut idle: Vec<(usize, Box<Worker>)> = Vec::new();
    let mut starting: HashSet<usize> = HashSet::new();
    for (k, cfg) in opts.workers.iter().enumerate() {
        starting.insert(k);
        tasks.spawn(start_worker(
            k,
            cfg.clone(),
            opts.policy.clone(),
            ca.clone(),
            cuts.clone(),
            None,
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
        starting: starting.len(),
        ..Progress::default()
    };
    progress(&prog);
    let mut requeue = std::mem::take(&mut state.requeue);
    // Work already handed out again after its browser went away (it gets one retry).
    let mut retried: Vec<Work> = Vec::new();
    let mut in_flight: HashMap<usize, Work> = HashMap::new();
    let mut last_save = Instant::now();
    let resumed_at = runs.len() as u64;
    let over_budget = |t: &Instant, done: usize| {
        opts.budget.is_some_and(|b| t.elapsed() >= b)
            || opts
                .max_sequences
                .is_some_and(|m| done as u64 >= resumed_at + m)
    };
    let mut queue_poll = tokio::time::interval(QUEUE_POLL);
    queue_poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut interrupted = false;
    loop {
        // Hand out work: the initial execution first, then the probes, then the reorder
        // phase's jobs depth first.
        let mut no_job = false;
        while !idle.is_empty() && !over_budget(&session_start, runs.len() + in_flight.len()) {
            let work = if runs.is_empty() {
                if in_flight.values().any(|w| *w == Work::Initial) {
                    break;
                }
                Work::Initial
            } else if let Some(role) = next_probe_work(&state, &in_flight) {
                Work::Probe(role)
            } else if let Some(j) = requeue.pop() {
                Work::Job(j)
            } else if in_flight.values().any(|w| matches!(w, Work::Probe(_))) {
                // The reorder phase waits for triage: at bound 1 it only takes what the
                // probes could not answer.
                break;
            } else if let Some(j) = next_reorder_job(&mut state) {
                Work::Job(j)
            } else {
                no_job = true;
                break;
            };
            let Some((k, worker)) = idle.pop() else { break };
            let plan = match &work {
                Work::Initial => Plan::Recorded,
                Work::Probe(role) => {
                    let Some(p) = state
                        .triage
                        .as_ref()
                        .and_then(|t| t.probes.get(role.probe as usize))
                    else {
                        idle.push((k, worker));
                        break;
                    };
                    Plan::Probe {
                        prefix: p.prefix.clone(),
                        moved: if role.reference {
                            p.reference_order()
                        } else {
                            p.probe_order()
                        },
                    }
                }
                Work::Job(j) => {
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
            in_flight.insert(k, work.clone());
            let site = site.clone();
            tasks.spawn(async move {
                let r = worker.run(&site, &plan).await;
                Done::Ran(Box::new((k, worker, work, r)))
            });
        }
        let work_left = !over_budget(&session_start, runs.len() + in_flight.len())
            && (runs.is_empty()
                || !requeue.is_empty()
                || probes_left(&state) > 0
                || (!no_job && state.explorer.pending() > 0));
        if in_flight.is_empty() && !work_left {
            // Browsers still starting are not waited for.
            break;
        }
        if tasks.is_empty() {
            bail!("every worker failed");
        }
        let next = tokio::select! {
            biased;
            () = opts.stop.stopped() => {
                interrupted = true;
                break;
            }
            _ = queue_poll.tick(), if !starting.is_empty() && !grids.is_empty() => {
                let mut queued = 0;
                for g in grids {
                    match g.queued().await {
                        Ok(n) => queued += n,
                        Err(e) => tracing::debug!("the Grid at {}: {e:#}", g.url()),
                    }
                }
                if queued != prog.queued {
                    prog.queued = queued;
                    progress(&prog);
                }
                continue;
            }
            next = tasks.join_next() => next,
        };
        let Some(done) = next else { continue };
        let ran = match done.context("an exploration task panicked")? {
            Done::Ran(ran) => Some(*ran),
            Done::Started(k, Ok(worker)) => {
                starting.remove(&k);
                idle.push((k, worker));
                None
            }
            Done::Started(k, Err(e)) => {
                starting.remove(&k);
                if idle.is_empty() && in_flight.is_empty() && starting.is_empty() {
                    return Err(e.context(format!("worker {k} could not start")));
                }
                tracing::warn!("worker {k} could not start: {e:#}");
                None
            }
        };
        match ran {
            None => {}
            Some((k, worker, work, Ok(out))) => {
                in_flight.remove(&k);
                let rec = match &work {
                    Work::Initial => {
                        let rec = fold(&mut state, &runs, None, &out, &runs_dir)?;
                        state.triage = Some(plan_triage(&site, &state, &out, opts.triage));
                        rec
                    }
                    Work::Job(j) => fold(&mut state, &runs, Some(j), &out, &runs_dir)?,
                    Work::Probe(role) => fold_probe(&mut state, *role, &out, &runs_dir)?,
                };
                prog.explored += 1;
                prog.depth = rec.depth;
                if rec
                    .verdict
                    .as_ref()
                    .is_some_and(|v| v.verdict == verdict::Judgement::Harmful)
                {
                    prog.harmful += 1;
                }
                let role = rec.probe;
                runs.push(rec);
                state.runs = runs.len() as u32;
                if let Some(role) = role
                    && judge_probe(&mut state, &site, &runs, role.probe, &runs_dir)
                {
                    prog.harmful += 1;
                }
                idle.push((k, worker));
            }
            Some((k, worker, work, Err(e))) => {
                in_flight.remove(&k);
                let lost = worker.browser_lost().await;
                match lost {
                    // The browser went away under the execution (a crash, a Grid node that
                    // died): the work itself may be fine, so another worker runs it (the
                    // initial execution and probes are handed out again as not done).
                    Some(why) if !retried.contains(&work) => {
                        tracing::warn!(
                            "worker {k} lost its browser ({why}): its execution goes to another \
                             worker ({e:#})"
                        );
                        retried.push(work.clone());
                        if let Work::Job(j) = work {
                            requeue.push(j);
                        }
                        prog.retried += 1;
                    }
                    lost => {
                        tracing::warn!(
                            "execution failed on worker {k}{}: {e:#}",
                            lost.map(|w| format!(" (its browser is gone: {w})"))
                                .unwrap_or_default()
                        );
                        state.failures += 1;
                        prog.failures = state.failures;
                        if runs.is_empty() && state.failures >= 3 {
                            bail!("the initial execution failed three times: {e:#}");
                        }
                        // A failed probe is answered as such; a failed job is not tried
                        // again (the initial execution is, above).
                        if let Work::Probe(role) = &work {
                            let r = state.probes.entry(role.probe).or_insert(ProbeResult {
                                probe: role.probe,
                                reference: None,
                                run: None,
                                outcome: ProbeOutcome::Pending,
                                orders: Vec::new(),
                            });
                            r.outcome = ProbeOutcome::Unexplored(Unexplored::Failed);
                        }
                    }
                }
                // A fresh browser (a new Grid session) for this worker, without holding up
                // the others.
                starting.insert(k);
                tasks.spawn(start_worker(
                    k,
                    opts.workers[k].clone(),
                    opts.policy.clone(),
                    ca.clone(),
                    cuts.clone(),
                    Some(worker),
                ));
            }
        }
        prog.pending = state.explorer.pending() + requeue.len() + probes_left(&state);
        prog.workers = idle.len() + in_flight.len();
        prog.starting = starting.len();
        if starting.is_empty() {
            prog.queued = 0;
        }
        progress(&prog);
        if last_save.elapsed() >= Duration::from_secs(2) {
            save_state(&dir, &state, &requeue, &in_flight, session_start)?;
            last_save = Instant::now();
        }
    }
    // Executions abandoned by a stop, and browsers still starting: their workers are dropped
    // (a Grid session's deletion is then under way, and `explore` waits for it).
    tasks.shutdown().await;
    for (_, w) in idle {
        w.stop().await;
    }
    let complete = !interrupted
        && requeue.is_empty()
        && state.explorer.pending() == 0
        && probes_left(&state) == 0
        && !runs.is_empty();
    let running = if interrupted {
        in_flight
    } else {
        HashMap::new()
    };
    save_state(&dir, &state, &requeue, &running, session_start)?;
    let elapsed = Duration::from_millis(state.elapsed_ms) + session_start.elapsed();
    let site = Arc::try_unwrap(site).unwrap_or_else(|s| (*s).clone());
    let triage = state.triage.unwrap_or_default();
    let probes = (0..triage.probes.len() as u32)
        .map(|id| {
            state.probes.get(&id).cloned().unwrap_or(ProbeResult {
                probe: id,
                reference: None,
                run: None,
                outcome: ProbeOutcome::Pending,
                orders: Vec::new(),
            })
        })
        .collect();
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
        triage,
        probes,
    })
}

/// The charset a browser would decode the recorded document with, when its `Content-Type`
/// names none: its BOM or `<meta charset>`, else UTF-8 for a document that is valid UTF-8
/// (plain ASCII included); `None` when the browser would have to guess.
fn document_charset(site: &Site) -> Option<String> {
    let doc = site.document.as_deref()?;
    let ct = site.document_type.as_deref();
    if ct.is_some_and(|c| shepherd_instrument::charset_label(c).is_some()) {
        return None;
    }
    let det = shepherd_instrument::detect_encoding(doc, ct);
    if det.is_certain() {
        return Some(det.encoding.name().to_ascii_lowercase());
    }
    std::str::from_utf8(doc)
        .is_ok()
        .then(|| "utf-8".to_string())
}

/// The next probe run to hand out: the reference, then the probe, of the first probe not done
/// and not running.
fn next_probe_work(state: &State, in_flight: &HashMap<usize, Work>) -> Option<ProbeRole> {
    let t = state.triage.as_ref()?;
    for p in &t.probes {
        let done = state.probes.get(&p.id);
        if done.is_some_and(|r| r.outcome != ProbeOutcome::Pending) {
            continue;
        }
        for reference in [true, false] {
            let role = ProbeRole {
                probe: p.id,
                reference,
            };
            let ran = done.is_some_and(|r| {
                if reference {
                    r.reference.is_some()
                } else {
                    r.run.is_some()
                }
            });
            if !ran && !in_flight.values().any(|w| *w == Work::Probe(role)) {
                return Some(role);
            }
        }
    }
    None
}

/// The reorder phase's next job. Within bound 1 it reverses only the step pairs no probe
/// answered: races triage could not run (a FIFO message behind another, an event never
/// enabled early) and races only the replay showed. Beyond bound 1 it explores as R4 does.
fn next_reorder_job(state: &mut State) -> Option<Job> {
    if state.explorer.bound() > 1 {
        return state.explorer.next_job();
    }
    let answered: Vec<(u32, u32)> = match &state.triage {
        Some(t) => t
            .targets
            .iter()
            .filter(|x| match &x.answer {
                triage::Answer::Probe { id } => state
                    .probes
                    .get(id)
                    .is_some_and(|r| matches!(r.outcome, ProbeOutcome::Judged(_))),
                triage::Answer::RepeatOf { .. } => true,
                triage::Answer::Unexplored(u) => {
                    matches!(u, Unexplored::OneStep | Unexplored::TwoUserEvents)
                }
            })
            .filter_map(|x| x.steps)
            .collect(),
        None => Vec::new(),
    };
    while let Some(j) = state.explorer.next_job() {
        let origin = j.origin.and_then(|o| state.explorer.origin(o));
        if let Some(o) = origin
            && o.parent == 0
            && let OriginKind::Reversal { first, second, .. } = o.kind
            && !answered.contains(&(first, second))
        {
            return Some(j);
        }
    }
    None
}

/// Probe runs not done yet.
fn probes_left(state: &State) -> usize {
    let Some(t) = &state.triage else { return 0 };
    t.probes
        .iter()
        .map(|p| match state.probes.get(&p.id) {
            Some(r) if r.outcome != ProbeOutcome::Pending => 0,
            Some(r) => usize::from(r.reference.is_none()) + usize::from(r.run.is_none()),
            None => 2,
        })
        .sum()
}

/// Plans triage once the initial execution has run: every uncovered race of the recording,
/// mapped onto the initial execution's steps.
fn plan_triage(site: &Site, state: &State, out: &RunOutput, limits: triage::Limits) -> Triage {
    let mut targets = triage::targets(&site.trace);
    let Some(trace) = &out.trace else {
        // Nothing to plan on: the uncovered races stay unanswered, the covered ones unlisted.
        targets.retain(|t| !t.covered);
        return Triage {
            targets,
            ..Triage::default()
        };
    };
    // The initial execution's relations, named as the reorder phase named them.
    let mut table = state.table.clone();
    let built = steps::build(&mut table, out);
    let document = site.document_structure();
    triage::plan(
        targets,
        &triage::Initial {
            steps: &out.steps,
            trace,
            exec: &built.exec,
            enablers: &built.enablers,
        },
        &site.gestures,
        document.as_ref(),
        &site.trace,
        limits,
    )
}

/// Folds in a probe's run (or its reference's): its record, no reorder-phase work.
fn fold_probe(
    state: &mut State,
    role: ProbeRole,
    out: &RunOutput,
    runs_dir: &Path,
) -> anyhow::Result<RunRecord> {
    let built = steps::build(&mut state.table, out);
    let id = state
        .explorer
        .record_external(&built.exec, u32::from(!role.reference));
    // An older-target probe answers no race of the recording: its own run names the races it
    // reversed, those between its moved and its delayed steps.
    let pairs = match state
        .triage
        .as_ref()
        .and_then(|t| t.probes.get(role.probe as usize))
    {
        Some(p) if !role.reference && p.kind == ProbeKind::OlderTarget => {
            let at = |names: &[String]| -> Vec<u32> {
                (0..out.steps.len() as u32)
                    .filter(|&i| names.contains(&out.steps[i as usize].name))
                    .collect()
            };
            let (moved, delayed) = (at(&p.moved), at(&p.delayed));
            built
                .races
                .iter()
                .filter(|((a, b), _)| {
                    (moved.contains(a) && delayed.contains(b))
                        || (delayed.contains(a) && moved.contains(b))
                })
                .map(|(&(first, second), races)| PairRaces {
                    first,
                    second,
                    races: races.clone(),
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let orders = race_orders(state.triage.as_ref(), role.probe, out, &built);
    let screenshot = write_screenshot(out, id, runs_dir)?;
    let mut snapshot = out.snapshot.clone();
    snapshot.screenshot = None;
    let rec = RunRecord {
        id,
        depth: u32::from(!role.reference),
        origin: None,
        steps: out.steps.iter().map(|s| s.name.clone()).collect(),
        skipped: out.skipped.clone(),
        diverged: out.diverged,
        stopped: out.stopped.clone(),
        elapsed_ms: out.elapsed.as_millis() as u64,
        snapshot,
        screenshot,
        pairs,
        uncovered: Vec::new(),
        racing_pairs: 0,
        enablers: built.enablers,
        verdict: None,
        probe: Some(role),
        checkpoint: out.checkpoint.clone(),
        inert: out.inert.clone(),
    };
    let r = state.probes.entry(role.probe).or_insert(ProbeResult {
        probe: role.probe,
        reference: None,
        run: None,
        outcome: ProbeOutcome::Pending,
        orders: Vec::new(),
    });
    if r.orders.len() != orders.len() {
        r.orders = orders
            .iter()
            .map(|(location, _)| RaceOrders {
                location: location.clone(),
                reference: None,
                run: None,
            })
            .collect();
    }
    for (o, (_, order)) in r.orders.iter_mut().zip(orders) {
        match role.reference {
            true => o.reference = order,
            false => o.run = order,
        }
    }
    if role.reference {
        r.reference = Some(id);
    } else {
        r.run = Some(id);
    }
    keep_trace(out, rec.id, runs_dir);
    write_record(&rec, runs_dir)?;
    Ok(rec)
}

/// The races race probe `probe` answers, each with the order run `out` made its accesses in
/// ([`triage::recorded_order_kept`]); the same races in the same order for both of its runs.
/// The run's own races tell, not its steps' order: an access can run later than its step.
fn race_orders(
    triage: Option<&triage::Triage>,
    probe: u32,
    out: &RunOutput,
    built: &steps::Built,
) -> Vec<(String, Option<bool>)> {
    let Some(t) = triage else {
        return Vec::new();
    };
    if t.probes
        .get(probe as usize)
        .is_none_or(|p| p.kind != ProbeKind::Race)
    {
        return Vec::new();
    }
    t.targets
        .iter()
        .chain(&t.covered)
        .filter(|target| target.answer == (triage::Answer::Probe { id: probe }))
        .map(|target| {
            let order = match (&out.trace, &built.analysis) {
                (Some(trace), Some(an)) => triage::recorded_order_kept(trace, an, target),
                _ => None,
            };
            (target.location.clone(), order)
        })
        .collect()
}

/// Judges probe `id` once both its runs are in; true when it is harmful.
fn judge_probe(
    state: &mut State,
    site: &Site,
    runs: &[RunRecord],
    id: u32,
    runs_dir: &Path,
) -> bool {
    let Some(p) = state
        .triage
        .as_ref()
        .and_then(|t| t.probes.get(id as usize))
        .cloned()
    else {
        return false;
    };
    let Some(result) = state.probes.get_mut(&id) else {
        return false;
    };
    let (Some(r), Some(q)) = (result.reference, result.run) else {
        return false;
    };
    let (Some(reference), Some(probe)) = (runs.get(r as usize), runs.get(q as usize)) else {
        return false;
    };
    // The moved side must have run before the delayed one for the probe to say anything.
    // Matched as the runner matches planned events (the parser's delivery ordinals vary
    // between runs).
    let position = |rec: &RunRecord, name: &str| match shepherd_explore_model::naming::find_recorded(
        &rec.steps, name,
    )[..]
    {
        [one] => rec.steps.iter().position(|s| s == one),
        _ => None,
    };
    let missing = p.moved.iter().find(|m| position(probe, m).is_none());
    let last_moved = p.moved.iter().filter_map(|m| position(probe, m)).max();
    let first_delayed = p.delayed.iter().filter_map(|d| position(probe, d)).min();
    let late = matches!((last_moved, first_delayed), (Some(m), Some(d)) if d < m);
    if missing.is_some() || late {
        // A gesture that waited for its target to become usable: the page itself keeps the
        // user from acting first.
        if let Some((_, why)) = probe
            .inert
            .iter()
            .find(|(e, _)| p.moved.iter().any(|m| m == e))
        {
            result.outcome = ProbeOutcome::Judged(verdict::Settled {
                verdict: verdict::Judgement::Harmless,
                rule: verdict::Rule::NotActionable,
                differences: Vec::new(),
                reason: format!(
                    "{} ({why} until the other side has run)",
                    verdict::Rule::NotActionable.describe()
                ),
            });
            return false;
        }
        let event = missing.or(p.moved.last()).cloned().unwrap_or_default();
        result.outcome = ProbeOutcome::Unexplored(Unexplored::NeverEarlier { event });
        return false;
    }
    // Both runs made every race they both had in one order: the moved side's access ran later
    // than its step, and the two end states are of one order.
    let known: Vec<&RaceOrders> = result
        .orders
        .iter()
        .filter(|o| o.reference.is_some() && o.run.is_some())
        .collect();
    if let Some(first) = known.first()
        && known.iter().all(|o| o.reference == o.run)
    {
        result.outcome = ProbeOutcome::Unexplored(Unexplored::NotReversed {
            location: first.location.clone(),
        });
        return false;
    }
    let with_png = |rec: &RunRecord| {
        let mut s = rec.snapshot.clone();
        s.screenshot = rec
            .screenshot
            .as_ref()
            .and_then(|f| std::fs::read(runs_dir.join(f)).ok());
        s
    };
    let early = match (&reference.checkpoint, &probe.checkpoint) {
        (Some(a), Some(b)) => Some((a.visible.as_str(), b.visible.as_str())),
        _ => None,
    };
    let moved_user = p
        .moved
        .iter()
        .any(|m| m.parse::<EventName>().is_ok_and(|n| n.is_user()));
    // What the user typed in the pair (a typing unit on either side).
    let typed = gesture::typed_texts(p.moved.iter().chain(&p.delayed).filter_map(|m| {
        match m.parse::<EventName>() {
            Ok(EventName::User(k)) => site.gestures.get(k),
            _ => None,
        }
    }));
    let settled = verdict::judge_settled(
        &with_png(reference),
        &with_png(probe),
        early,
        moved_user,
        p.window == Window::None,
        &typed,
    );
    let harmful = settled.verdict == verdict::Judgement::Harmful;
    tracing::debug!(
        probe = id,
        moved = ?p.moved,
        delayed = ?p.delayed,
        window = ?p.window,
        "probe judged: {}",
        settled.reason
    );
    result.outcome = ProbeOutcome::Judged(settled);
    harmful
}

fn write_screenshot(out: &RunOutput, id: u32, runs_dir: &Path) -> anyhow::Result<Option<String>> {
    match &out.snapshot.screenshot {
        Some(png) => {
            let name = format!("{id}.png");
            std::fs::write(runs_dir.join(&name), png).with_context(|| format!("writing {name}"))?;
            Ok(Some(name))
        }
        None => Ok(None),
    }
}

/// Keeps an execution's trace beside its record (`runs/<id>.trace.jsonl`) when
/// `SHEPHERD_EXPLORE_TRACES` is set: what a developer reads to see why a probe went as it did.
fn keep_trace(out: &RunOutput, id: u32, runs_dir: &Path) {
    if std::env::var_os("SHEPHERD_EXPLORE_TRACES").is_none() {
        return;
    }
    if let Some(t) = &out.trace
        && let Ok(f) = std::fs::File::create(runs_dir.join(format!("{id}.trace.jsonl")))
        && let Err(e) = shepherd_trace::write_jsonl(t, std::io::BufWriter::new(f))
    {
        tracing::warn!("cannot keep the trace of run {id}: {e}");
    }
}

fn write_record(rec: &RunRecord, runs_dir: &Path) -> anyhow::Result<()> {
    let path = runs_dir.join(format!("{}.json", rec.id));
    std::fs::write(&path, serde_json::to_vec(rec)?)
        .with_context(|| format!("writing {}", path.display()))
}

/// Folds a finished execution in: the explorer, the verdict against its parent, the record.
fn fold(
    state: &mut State,
    runs: &[RunRecord],
    job: Option<&Job>,
    out: &RunOutput,
    runs_dir: &Path,
) -> anyhow::Result<RunRecord> {
    let built = steps::build(&mut state.table, out);
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
    let screenshot = write_screenshot(out, id, runs_dir)?;
    let mut snapshot = out.snapshot.clone();
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
        skipped: out.skipped.clone(),
        diverged: out.diverged,
        stopped: out.stopped.clone(),
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
        probe: None,
        checkpoint: out.checkpoint.clone(),
        inert: out.inert.clone(),
    };
    keep_trace(out, rec.id, runs_dir);
    write_record(&rec, runs_dir)?;
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
    in_flight: &HashMap<usize, Work>,
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
        triage: &'a Option<Triage>,
        probes: &'a BTreeMap<u32, ProbeResult>,
    }
    let saved = Saved {
        version: state.version,
        fingerprint: &state.fingerprint,
        table: &state.table,
        explorer: &state.explorer,
        requeue: requeue
            .iter()
            .chain(in_flight.values().filter_map(|w| match w {
                Work::Job(j) => Some(j),
                _ => None,
            }))
            .collect(),
        runs: state.runs,
        failures: state.failures,
        elapsed_ms: state.elapsed_ms + session_start.elapsed().as_millis() as u64,
        triage: &state.triage,
        probes: &state.probes,
    };
    let tmp = dir.join("state.json.tmp");
    std::fs::write(&tmp, serde_json::to_vec(&saved)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join("state.json")).context("saving the exploration state")?;
    Ok(())
}
