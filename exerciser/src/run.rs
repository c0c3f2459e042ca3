//! The exercise itself: pick a candidate at random, act on it, let the page settle, repeat.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use shepherd_browser::{Element, Error, MouseButton, Page, Result};

use crate::candidates::{Action, Candidate, Candidates, scan};
use crate::guard::NavGuard;
use crate::options::ExerciseOptions;
use crate::replay::reset_pointer;
use crate::report::{ExerciseReport, FiredEvent, StopReason};
use crate::rng::Rng;

/// Keys pressed by a key action (one chosen at random).
const KEYS: &[&str] = &["a", "Enter", "ArrowDown", "ArrowUp", " ", "Escape", "1"];

/// Fire seeded random user events at elements with handlers until `opts.duration` or
/// `opts.max_events`, blocking navigations away from the page (see the crate docs).
pub async fn exercise(page: &Page, opts: &ExerciseOptions) -> Result<ExerciseReport> {
    let start = Instant::now();
    // A known pointer position, so that a replay from a fresh load (which also starts with
    // reset_pointer) sees the same mouseover/mouseout events.
    reset_pointer(page).await?;
    let guard = NavGuard::start(page).await?;
    let result = exercise_loop(page, opts, start).await;
    let (blocked, popups) = guard.stop(page).await;
    let (events, stopped, seen) = result?;
    Ok(ExerciseReport {
        events,
        blocked_navigations: blocked,
        closed_popups: popups,
        candidates_seen: seen,
        stopped,
        elapsed: start.elapsed(),
    })
}

async fn exercise_loop(
    page: &Page,
    opts: &ExerciseOptions,
    start: Instant,
) -> Result<(Vec<FiredEvent>, StopReason, usize)> {
    let mut rng = Rng::new(opts.seed);
    let mut log: Vec<FiredEvent> = Vec::new();
    let mut seen: BTreeSet<i64> = BTreeSet::new();
    let nav_at_start = page.main_navigations();
    let mut candidates: Candidates = Vec::new();
    let mut since_scan = usize::MAX;
    let mut failures_in_a_row = 0usize;
    loop {
        if start.elapsed() >= opts.duration {
            return Ok((log, StopReason::Time, seen.len()));
        }
        if log.len() >= opts.max_events {
            return Ok((log, StopReason::MaxEvents, seen.len()));
        }
        if page.main_navigations() != nav_at_start {
            return Ok((log, StopReason::LeftPage, seen.len()));
        }
        if since_scan >= opts.rescan_every.max(1) || candidates.is_empty() {
            candidates = match scan(page).await {
                Ok(c) => c,
                // The document may be changing under the scan (a frame navigating, a
                // context going away): try again shortly, up to the failure budget.
                Err(Error::Protocol { .. } | Error::BadResponse { .. }) => {
                    failures_in_a_row += 1;
                    if failures_in_a_row > 50 {
                        return Ok((log, StopReason::NoCandidates, seen.len()));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            seen.extend(candidates.iter().filter_map(|c| c.node));
            since_scan = 0;
            if candidates.is_empty() {
                return Ok((log, StopReason::NoCandidates, seen.len()));
            }
        }
        let budget = opts.max_events - log.len();
        let affordable: Vec<usize> = (0..candidates.len())
            .filter(|&i| {
                let c = &candidates[i];
                c.action.cost(c.node.is_none()) <= budget
            })
            .collect();
        if affordable.is_empty() {
            return Ok((log, StopReason::MaxEvents, seen.len()));
        }
        let pick = affordable[rng.below(affordable.len())];
        let Candidate {
            node,
            action,
            desc,
            path,
        } = candidates[pick].clone();
        let at_ms = start.elapsed().as_millis() as u64;
        let mut fired: Vec<(&'static str, Option<String>)> = Vec::new();
        // A page stuck in a handler (an endless loop) holds input acks: never wait past the
        // exercise's own end by more than a grace second.
        let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
        let outcome = match tokio::time::timeout(
            grace,
            perform(page, node, action, budget, opts, &mut rng, &mut fired),
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(Error::Timeout {
                what: format!("{action:?} on {desc}"),
                after: grace,
            }),
        };
        for (event, detail) in fired {
            log.push(FiredEvent {
                seq: log.len(),
                at_ms,
                event: event.to_string(),
                backend_node_id: node,
                path: path.clone(),
                target: desc.clone(),
                detail,
            });
        }
        if let Some(counter) = &opts.on_events {
            (counter.0)(log.len());
        }
        since_scan += 1;
        match outcome {
            Ok(()) => failures_in_a_row = 0,
            // The element went away or lost its box: forget it and go on.
            Err(Error::Element(_)) | Err(Error::Protocol { .. }) => {
                candidates.remove(pick);
                failures_in_a_row += 1;
                if failures_in_a_row > 50 {
                    return Ok((log, StopReason::NoCandidates, seen.len()));
                }
                continue;
            }
            Err(Error::Timeout { .. }) => {
                return Ok((log, StopReason::Time, seen.len()));
            }
            Err(e) => return Err(e),
        }
        let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
        let settle = page.wait_quiet(opts.settle, opts.settle_limit);
        match tokio::time::timeout(grace, settle).await {
            Ok(Ok(_)) => {}
            Ok(Err(Error::Timeout { .. })) | Err(_) => {
                return Ok((log, StopReason::Time, seen.len()));
            }
            Ok(Err(e)) => return Err(e),
        }
    }
}

async fn perform(
    page: &Page,
    node: Option<i64>,
    action: Action,
    budget: usize,
    opts: &ExerciseOptions,
    rng: &mut Rng,
    fired: &mut Vec<(&'static str, Option<String>)>,
) -> Result<()> {
    match action {
        Action::Hover | Action::Click => {
            let Some(id) = node else {
                return Err(Error::Element("page-level mouse action".into()));
            };
            let (x, y) = page.element_center(&Element::BackendNode(id)).await?;
            page.mouse_move(x, y).await?;
            fired.push(("mouseover", None));
            if action == Action::Click {
                page.mouse_down(x, y, MouseButton::Left).await?;
                fired.push(("mousedown", None));
                page.mouse_up(x, y, MouseButton::Left).await?;
                fired.push(("click", None));
            }
        }
        Action::Focus => {
            if let Some(id) = node {
                page.focus(Element::BackendNode(id)).await?;
                fired.push(("focus", None));
            }
        }
        Action::Keys | Action::Type => {
            let mut budget = budget;
            if let Some(id) = node {
                page.focus(Element::BackendNode(id)).await?;
                fired.push(("focus", None));
                budget -= 1;
            }
            let keys: Vec<String> = if action == Action::Keys {
                vec![KEYS[rng.below(KEYS.len())].to_string()]
            } else if opts.text_inputs.is_empty() {
                vec!["x".to_string()]
            } else {
                let text = &opts.text_inputs[rng.below(opts.text_inputs.len())];
                text.chars().map(|c| c.to_string()).collect()
            };
            for key in keys.into_iter().take(budget / 2) {
                page.key_down(&key).await?;
                fired.push(("keydown", Some(key.clone())));
                page.key_up(&key).await?;
                fired.push(("keyup", Some(key)));
            }
        }
    }
    Ok(())
}
