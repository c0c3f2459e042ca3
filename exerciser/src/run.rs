//! The exercise itself: pick a control and a gesture (what has not been done first), act, let
//! the page settle, repeat.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use shepherd_browser::{Error, NavigationGuard, Page, Result};

use crate::controls::{Control, Scan, scan};
use crate::gesture::{Act, Fired, Gesture, Target, page_keys, perform};
use crate::options::ExerciseOptions;
use crate::replay::reset_pointer;
use crate::report::{ControlCoverage, ExerciseReport, FiredEvent, StopReason};
use crate::rng::Rng;

/// How long the page is given to settle after the last gesture, the guard still on.
const LAST_SETTLE: Duration = Duration::from_secs(1);
/// The quiet period looked for then.
const LAST_QUIET: Duration = Duration::from_millis(100);

/// Fire seeded user gestures at the page's controls until `opts.duration` or
/// `opts.max_events`, blocking navigations away from the page (see the crate docs).
pub async fn exercise(page: &Page, opts: &ExerciseOptions) -> Result<ExerciseReport> {
    let start = Instant::now();
    // A known pointer position, so that a replay from a fresh load (which also starts with
    // reset_pointer) sees the same mouseover/mouseout events.
    reset_pointer(page).await?;
    let guard = NavigationGuard::start(page).await?;
    let mut state = State::default();
    let result = exercise_loop(page, opts, start, &mut state).await;
    // The last gesture's default action (a form submitted, a link followed) may start its
    // navigation a moment later: it is still stopped.
    let _ = tokio::time::timeout(
        LAST_SETTLE,
        page.wait_quiet(opts.settle.max(LAST_QUIET), LAST_SETTLE),
    )
    .await;
    let (blocked, popups) = guard.stop(page).await;
    let stopped = result?;
    let mut controls: Vec<Seen> = state.coverage.into_values().collect();
    controls.sort_by_key(|s| s.first);
    Ok(ExerciseReport {
        events: state.log,
        blocked_navigations: blocked,
        closed_popups: popups,
        controls: controls.into_iter().map(Seen::report).collect(),
        stopped,
        elapsed: start.elapsed(),
    })
}

/// A control seen at some scan, and the gestures done on it.
#[derive(Debug)]
struct Seen {
    /// How many controls were seen before it: the report lists them as found, each scan's in
    /// document order (backend ids are numbered in an order that varies between loads).
    first: usize,
    node: i64,
    path: String,
    desc: String,
    offered: BTreeSet<Gesture>,
    done: BTreeSet<Gesture>,
    /// Gestures that failed on it (gone, no box, covered).
    tried: BTreeSet<Gesture>,
}

impl Seen {
    fn report(self) -> ControlCoverage {
        let names = |set: &BTreeSet<Gesture>| {
            Gesture::ALL
                .iter()
                .filter(|g| set.contains(g))
                .map(|g| g.name())
                .collect()
        };
        ControlCoverage {
            backend_node_id: self.node,
            path: self.path,
            target: self.desc,
            offered: names(&self.offered),
            done: names(&self.done),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    log: Vec<FiredEvent>,
    coverage: BTreeMap<i64, Seen>,
    page_keys_done: bool,
}

/// What to do next: a gesture on a control of the scan, or keys at the page.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Control(usize, Gesture),
    PageKeys,
}

/// The next move: keys at the page first (while only the page's own code has moved the
/// focus: later the keys go where the exercise put the focus), then a control nothing was
/// done to yet with its first gesture, then a gesture not yet done, then anything; each
/// uniformly among what the budget allows. `skip` holds controls that failed since the last
/// scan.
fn choose(
    scan: &Scan,
    state: &State,
    skip: &BTreeSet<i64>,
    budget: usize,
    rng: &mut Rng,
) -> Option<Pick> {
    let usable = |c: &Control| !skip.contains(&c.node);
    let done = |c: &Control, g: Gesture| {
        state
            .coverage
            .get(&c.node)
            .is_some_and(|s| s.done.contains(&g))
    };
    let untouched = |c: &Control| {
        state
            .coverage
            .get(&c.node)
            .is_none_or(|s| s.done.is_empty())
    };
    let fits = |g: Gesture| g.cost() <= budget;
    let page_keys = scan.page_keys && budget >= 2;
    if page_keys && !state.page_keys_done && state.coverage.values().all(|s| s.done.is_empty()) {
        return Some(Pick::PageKeys);
    }
    let tried = |c: &Control, g: Gesture| {
        state
            .coverage
            .get(&c.node)
            .is_some_and(|s| s.tried.contains(&g))
    };
    // Its kind's first gesture (controls.rs lists it first) that it was not tried with: a
    // click on a button rather than a hover, whose events the click's pointer move fires too,
    // so a short exercise reaches each control's main handlers first; Enter on a button under
    // an overlay, which no click reaches.
    let first = |c: &Control| {
        c.gestures
            .iter()
            .copied()
            .find(|g| fits(*g) && !tried(c, *g))
    };
    // 1. A control no gesture reached yet.
    let fresh: Vec<usize> = (0..scan.controls.len())
        .filter(|&i| {
            let c = &scan.controls[i];
            usable(c) && untouched(c) && first(c).is_some()
        })
        .collect();
    if !fresh.is_empty() {
        let i = fresh[rng.below(fresh.len())];
        return first(&scan.controls[i]).map(|g| Pick::Control(i, g));
    }
    // 2. A gesture not done yet (the page's own keys once).
    let mut pending: Vec<Pick> = Vec::new();
    for (i, c) in scan.controls.iter().enumerate() {
        if !usable(c) {
            continue;
        }
        for g in &c.gestures {
            if fits(*g) && !done(c, *g) {
                pending.push(Pick::Control(i, *g));
            }
        }
    }
    if page_keys && !state.page_keys_done {
        pending.push(Pick::PageKeys);
    }
    if !pending.is_empty() {
        return Some(pending[rng.below(pending.len())]);
    }
    // 3. Anything.
    let mut all: Vec<Pick> = Vec::new();
    for (i, c) in scan.controls.iter().enumerate() {
        if usable(c) {
            all.extend(
                c.gestures
                    .iter()
                    .filter(|g| fits(**g))
                    .map(|g| Pick::Control(i, *g)),
            );
        }
    }
    if page_keys {
        all.push(Pick::PageKeys);
    }
    (!all.is_empty()).then(|| all[rng.below(all.len())])
}

/// Whether every control of `scan` (and the page's keys) had every gesture, or was tried
/// with it and could not take it (a control under an overlay is not clicked).
fn covered(scan: &Scan, state: &State) -> bool {
    (!scan.page_keys || state.page_keys_done)
        && scan.controls.iter().all(|c| {
            state.coverage.get(&c.node).is_some_and(|s| {
                c.gestures
                    .iter()
                    .all(|g| s.done.contains(g) || s.tried.contains(g))
            })
        })
}

async fn exercise_loop(
    page: &Page,
    opts: &ExerciseOptions,
    start: Instant,
    state: &mut State,
) -> Result<StopReason> {
    let mut rng = Rng::new(opts.seed);
    let nav_at_start = page.main_navigations();
    let mut current = Scan::default();
    let mut skip: BTreeSet<i64> = BTreeSet::new();
    let mut since_scan = usize::MAX;
    let mut failures_in_a_row = 0usize;
    loop {
        if start.elapsed() >= opts.duration {
            return Ok(StopReason::Time);
        }
        if state.log.len() >= opts.max_events {
            return Ok(StopReason::MaxEvents);
        }
        if page.main_navigations() != nav_at_start {
            return Ok(StopReason::LeftPage);
        }

        let budget = opts.max_events - state.log.len();
        let mut pick = choose(&current, state, &skip, budget, &mut rng);
        if since_scan >= opts.rescan_every.max(1) || pick.is_none() {
            current = match scan(page).await {
                Ok(s) => s,
                // The document may be changing under the scan (a frame navigating, a
                // context going away): try again shortly, up to the failure budget.
                Err(Error::Protocol { .. } | Error::BadResponse { .. }) => {
                    failures_in_a_row += 1;
                    if failures_in_a_row > 50 {
                        return Ok(StopReason::NoCandidates);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            skip.clear();
            since_scan = 0;
            for c in &current.controls {
                let first = state.coverage.len();
                let seen = state.coverage.entry(c.node).or_insert_with(|| Seen {
                    first,
                    node: c.node,
                    path: c.path.clone(),
                    desc: c.desc.clone(),
                    offered: BTreeSet::new(),
                    done: BTreeSet::new(),
                    tried: BTreeSet::new(),
                });
                seen.offered.extend(c.gestures.iter().copied());
            }
            if let Some(min) = opts.stop_when_covered
                && state.log.len() >= min
                && covered(&current, state)
            {
                return Ok(StopReason::Covered);
            }
            if current.controls.is_empty() && !current.page_keys {
                return Ok(StopReason::NoCandidates);
            }
            pick = choose(&current, state, &skip, budget, &mut rng);
        }
        let Some(pick) = pick else {
            if current.controls.iter().all(|c| skip.contains(&c.node)) {
                // Every control failed since the scan: look again after a moment.
                since_scan = usize::MAX;
                tokio::time::sleep(Duration::from_millis(20)).await;
                failures_in_a_row += 1;
                if failures_in_a_row > 50 {
                    return Ok(StopReason::NoCandidates);
                }
                continue;
            }
            return Ok(StopReason::MaxEvents);
        };
        let at_ms = start.elapsed().as_millis() as u64;
        let mut fired: Fired = Vec::new();
        // A page stuck in a handler (an endless loop) holds input acks: never wait past the
        // exercise's own end by more than a grace second.
        let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
        let (control, what) = match pick {
            Pick::Control(i, g) => (Some(&current.controls[i]), format!("{g:?}")),
            Pick::PageKeys => (None, "keys".to_string()),
        };
        let scan_ref = &current;
        let hits = move |node: i64, hit: i64| scan_ref.within(node, hit);
        let step = Act {
            page,
            opts,
            hits: &hits,
            budget,
        };
        let act = async {
            match (pick, control) {
                (Pick::Control(_, g), Some(c)) => {
                    let target = Target {
                        node: c.node,
                        text: c.text,
                        options: &c.options,
                        range: c.range,
                    };
                    perform(&step, g, &target, &mut rng, &mut fired).await
                }
                _ => page_keys(page, &mut rng, &mut fired).await,
            }
        };
        let outcome = match tokio::time::timeout(grace, act).await {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                what: format!(
                    "{what} on {}",
                    control.map_or("the page", |c| c.desc.as_str())
                ),
                after: grace,
            }),
        };
        for (event, detail, on) in fired {
            let (node, path, target) = match (on, control) {
                (Some(n), _) => {
                    let (p, d) = current.names.get(&n).cloned().unwrap_or_default();
                    (Some(n), p, d)
                }
                (None, Some(c)) => (Some(c.node), c.path.clone(), c.desc.clone()),
                (None, None) => (None, String::new(), "page".to_string()),
            };
            state.log.push(FiredEvent {
                seq: state.log.len(),
                at_ms,
                event: event.to_string(),
                backend_node_id: node,
                path,
                target,
                detail,
            });
        }
        if let Some(counter) = &opts.on_events {
            (counter.0)(state.log.len());
        }
        since_scan += 1;
        match outcome {
            Ok(()) => {
                failures_in_a_row = 0;
                match (pick, control) {
                    (Pick::Control(_, g), Some(c)) => {
                        if let Some(s) = state.coverage.get_mut(&c.node) {
                            s.done.insert(g);
                        }
                    }
                    _ => state.page_keys_done = true,
                }
            }
            // The element went away, lost its box or is covered: leave it until the next scan.
            Err(Error::Element(_)) | Err(Error::Protocol { .. }) => {
                if let (Pick::Control(_, g), Some(c)) = (pick, control) {
                    skip.insert(c.node);
                    if let Some(s) = state.coverage.get_mut(&c.node) {
                        s.tried.insert(g);
                    }
                }
                failures_in_a_row += 1;
                if failures_in_a_row > 50 {
                    return Ok(StopReason::NoCandidates);
                }
                continue;
            }
            Err(Error::Timeout { .. }) => return Ok(StopReason::Time),
            Err(e) => return Err(e),
        }
        let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
        let settle = page.wait_quiet(opts.settle, opts.settle_limit);
        match tokio::time::timeout(grace, settle).await {
            Ok(Ok(_)) => {}
            Ok(Err(Error::Timeout { .. })) | Err(_) => return Ok(StopReason::Time),
            Ok(Err(e)) => return Err(e),
        }
    }
}
