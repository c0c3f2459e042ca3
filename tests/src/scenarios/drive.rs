//! One run of a scenario: a fresh browser context whose proxy is a new stack, the page loaded
//! while the manifest's schedule sends input and releases held answers, the oracle read once
//! the page is quiet. A recorded run (detect lane) then auto-explores briefly, flushes the
//! trace and runs `shepherd races` on the recording; a repaired run (repair lane) goes through
//! `shepherd serve --policy` and ends with the oracle. In the good order (what the explore
//! lane starts from) nothing is held or delayed and no auto-exploration runs: the schedule's
//! input is sent after the page has loaded and settled. The reach lane's run has nothing held
//! or delayed and no schedule: the page is exercised as `shepherd record URL --explore` does.

use super::manifest::{Action, Manifest, Oracle, Resource, Step, When};
use super::origin::{ScenarioOrigin, Seen};
use super::product::Shepherd;
use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::json;
use shepherd_browser::{Browser, Page};
use shepherd_exerciser::ExerciseOptions;
use shepherd_policies::PolicySet;
use shepherd_session::Stack;
use shepherd_session::drive::exercise_recorded;
use shepherd_testkit::patience;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longest wait for one schedule step's condition (times the patience factor: it ends as soon
/// as the condition holds).
const STEP_LIMIT: Duration = Duration::from_secs(20);

/// Longest wait for a step's condition under a policy: the bad schedule may wait for a state
/// the policy no longer lets happen (a first answer handled alone); the step then runs late,
/// once held answers reached their hold limit, and the oracle judges the result. Not scaled by
/// the patience factor: the step is expected to give up here, and the hold limits the
/// policies set are the product's.
const REPAIR_STEP_LIMIT: Duration = Duration::from_secs(5);

/// What the lanes share: one Chromium, the origin, the binary, a scratch directory.
pub struct Context {
    /// Headless Chromium (one for the lane; each run gets its own browser context).
    pub browser: Browser,
    /// The scenario origin.
    pub origin: ScenarioOrigin,
    /// Shepherd's CA and stacks.
    pub shepherd: Shepherd,
    /// Recordings go here.
    pub scratch: PathBuf,
    /// The longest auto-exploration after the schedule (it ends at its event count first).
    pub explore: Duration,
}

/// The seed `shepherd record` exercises with (its `--seed` default).
pub const RECORD_SEED: u64 = 1;

/// The reach run fires at least this many events before it may end on coverage.
const REACH_MIN_EVENTS: usize = 60;

/// A scenario: its directory name and manifest.
pub struct Scenario {
    /// Directory name (the URL path segment).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// The checked manifest.
    pub manifest: Manifest,
}

/// Which order a recorded run follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The manifest's bad schedule (holds, delays, input while the page loads), then
    /// auto-exploration.
    Bad,
    /// No holds or delays; the schedule's input (clicks, hovers, typing, keys) once the page
    /// is loaded and quiet, each followed by a settle; no auto-exploration.
    Good,
    /// Nothing held, delayed or scheduled: the loaded page exercised as `record --explore`
    /// does, for this long and at most this many events (the reach lane).
    Explored {
        /// How long.
        duration: Duration,
        /// At most this many events.
        max_events: usize,
    },
}

/// What one run produced.
pub struct Run {
    /// The recording file.
    pub recording: PathBuf,
    /// `shepherd races --json --all` of the recording.
    pub races: serde_json::Value,
    /// Uncaught exceptions (messages) seen over DevTools.
    pub exceptions: Vec<String>,
    /// Whether the oracle saw the error after the schedule (`None`: no oracle).
    pub oracle_fired: Option<bool>,
    /// Requests the origin answered.
    pub requests: Vec<Seen>,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// A run-unique control secret (never shown to pages).
fn secret(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("scenario-{name}-{nanos:x}")
}

/// Evaluates `expr` in an isolated world of the main frame: it sees the DOM but not the
/// page's globals, and nothing it does is logged in the trace (the page's wrappers live in
/// the page's own world).
async fn isolated_eval(page: &Page, expr: &str) -> Result<serde_json::Value> {
    let tree = page.call("Page.getFrameTree", json!({})).await?;
    let frame = tree
        .pointer("/frameTree/frame/id")
        .and_then(|v| v.as_str())
        .ok_or_else(|| anyhow!("no main frame"))?
        .to_string();
    let world = page
        .call(
            "Page.createIsolatedWorld",
            json!({ "frameId": frame, "worldName": "shepherd-scenarios" }),
        )
        .await?;
    let context = world
        .get("executionContextId")
        .cloned()
        .ok_or_else(|| anyhow!("no isolated world"))?;
    let answer = page
        .call(
            "Runtime.evaluate",
            json!({ "expression": expr, "contextId": context, "returnByValue": true, "awaitPromise": true }),
        )
        .await?;
    if let Some(e) = answer.get("exceptionDetails") {
        bail!("`{expr}` threw: {e}");
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(serde_json::Value::Null))
}

/// Whether `sel` matches an element now (DevTools DOM queries: no page code runs, so the
/// trace does not see a lookup the page never made).
async fn element_exists(page: &Page, sel: &str) -> bool {
    let Ok(doc) = page.call("DOM.getDocument", json!({ "depth": 0 })).await else {
        return false;
    };
    let Some(root) = doc.pointer("/root/nodeId").cloned() else {
        return false;
    };
    page.call(
        "DOM.querySelector",
        json!({ "nodeId": root, "selector": sel }),
    )
    .await
    .ok()
    .and_then(|f| f.get("nodeId").and_then(|n| n.as_i64()))
    .is_some_and(|n| n != 0)
}

/// Where a polled condition is evaluated.
#[derive(Clone, Copy)]
enum World {
    /// The page's own world (its globals; DOM lookups there are logged).
    Page,
    /// An isolated world (the DOM only).
    Isolated,
}

/// Polls `expr` until it is truthy or `limit` passes.
async fn poll(page: &Page, world: World, expr: &str, limit: Duration) -> Result<()> {
    let start = Instant::now();
    let probe =
        format!("(() => {{ try {{ return !!({expr}); }} catch (e) {{ return false; }} }})()");
    loop {
        let v = match world {
            World::Page => page.evaluate(&probe).await.ok(),
            World::Isolated => isolated_eval(page, &probe).await.ok(),
        };
        if v.and_then(|v| v.as_bool()) == Some(true) {
            return Ok(());
        }
        if start.elapsed() > limit {
            bail!("`{expr}` did not become true within {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_for(
    page: &Page,
    origin: &ScenarioOrigin,
    when: &When,
    limit: Duration,
) -> Result<()> {
    match when {
        When::AfterMs(ms) => {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            Ok(())
        }
        When::Element(sel) => {
            let start = Instant::now();
            while !element_exists(page, sel).await {
                if start.elapsed() > limit {
                    bail!("no element matches {sel} within {limit:?}");
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Ok(())
        }
        When::Request(p) => {
            if origin.wait_request(p, limit).await {
                Ok(())
            } else {
                bail!("no request for {p} within {limit:?}")
            }
        }
        When::Js(expr) => poll(page, World::Page, expr, limit).await,
        When::Dom(expr) => poll(page, World::Isolated, expr, limit).await,
        When::Load => {
            poll(
                page,
                World::Isolated,
                "document.readyState === 'complete'",
                limit,
            )
            .await
        }
    }
}

async fn act(page: &Page, origin: &ScenarioOrigin, action: &Action) -> Result<()> {
    match action {
        Action::Click(sel) => {
            page.click(sel.as_str()).await?;
        }
        Action::Hover(sel) => {
            page.hover(sel.as_str()).await?;
        }
        Action::Type { selector, text } => {
            page.focus(selector.as_str()).await?;
            page.type_text(text).await?;
        }
        Action::Key(k) => page.press_key(k).await?,
        Action::Keys(text) => page.type_text(text).await?,
        Action::Release(p) => origin.release(p),
        Action::Wait => {}
    }
    Ok(())
}

async fn run_schedule(
    page: &Page,
    origin: &ScenarioOrigin,
    steps: &[Step],
    lane: Lane,
) -> Result<()> {
    for (i, s) in steps.iter().enumerate() {
        let waited = match lane {
            Lane::Record(_) => wait_for(page, origin, &s.when, patience(STEP_LIMIT)).await,
            Lane::Repair | Lane::RecordRepaired => {
                wait_for(page, origin, &s.when, REPAIR_STEP_LIMIT)
                    .await
                    .or_else(|e| {
                        if std::env::var_os("SHEPHERD_SCENARIO_LOG").is_some() {
                            println!("  schedule step {} under the policy: {e:#}", i + 1);
                        }
                        Ok(())
                    })
            }
        };
        waited.with_context(|| format!("schedule step {}", i + 1))?;
        act(page, origin, &s.action)
            .await
            .with_context(|| format!("schedule step {}", i + 1))?;
    }
    Ok(())
}

/// How long the good order's page must be quiet after each input.
const GOOD_IDLE: Duration = Duration::from_millis(150);

/// The schedule's input on a loaded page, each step once the page is quiet again (the
/// schedule's conditions and releases are about the bad order and are left out). A `wait` is
/// kept when it is about the page's own progress: after some milliseconds, or until a state of
/// the page (`js`, `dom`). It is how a manifest makes the recording last until a late timer or
/// another context's work (a service worker's claim) has run: the race's other side, which no
/// request or DOM change announces to the quiet wait. Such a state that never comes in the
/// good order is waited for only up to [`STEP_LIMIT`], and the recording goes on.
async fn good_input(
    page: &Page,
    origin: &ScenarioOrigin,
    secret: &str,
    steps: &[Step],
) -> Result<()> {
    let secret_js = serde_json::to_string(secret)?;
    // The page's own count of the requests it started and has not seen end: true when there
    // is no runtime to ask.
    let no_requests = format!(
        "(() => {{ const C = globalThis.__shepherd && __shepherd.control({secret_js}); return !C || C.stats().requests === 0; }})()"
    );
    for (i, s) in steps.iter().enumerate() {
        match (&s.action, &s.when) {
            (Action::Wait, When::AfterMs(ms)) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                continue;
            }
            (Action::Wait, When::Js(_) | When::Dom(_)) => {
                if let Err(e) = wait_for(page, origin, &s.when, patience(STEP_LIMIT)).await
                    && std::env::var_os("SHEPHERD_SCENARIO_LOG").is_some()
                {
                    println!("  good order, schedule step {}: {e:#}", i + 1);
                }
                continue;
            }
            _ => {}
        }
        if matches!(s.action, Action::Release(_) | Action::Wait) {
            continue;
        }
        act(page, origin, &s.action)
            .await
            .with_context(|| format!("input of schedule step {}", i + 1))?;
        // The quiet wait reads the requests DevTools has reported: a request the input's
        // handler sent is reported a moment after the input returns, later on a loaded
        // machine, and a page whose DOM the input did not change is "quiet" at once
        // (gallery C's second click was followed by Delete before its answer). The page's
        // runtime counts that request when the handler sends it, so the wait starts with the
        // page's own count; a request it never sees end is left to the quiet wait's limit.
        let _ = poll(
            page,
            World::Page,
            &no_requests,
            patience(Duration::from_secs(2)),
        )
        .await;
        let _ = page
            .wait_quiet(GOOD_IDLE, patience(Duration::from_secs(2)))
            .await;
    }
    Ok(())
}

/// Whether the oracle sees the error now.
async fn oracle(
    page: &Page,
    origin: &ScenarioOrigin,
    o: &Oracle,
    exceptions: &[String],
) -> Result<Option<bool>> {
    Ok(match o {
        Oracle::Exception { message } => Some(exceptions.iter().any(|e| e.contains(message))),
        Oracle::Dom { expr } => {
            let v = isolated_eval(page, &format!("!!({expr})")).await?;
            Some(v.as_bool() == Some(true))
        }
        Oracle::LostInput { selector, typed } => {
            let v = isolated_eval(
                page,
                &format!(
                    "(() => {{ const e = document.querySelector({}); return !!e && String(e.value).includes({}); }})()",
                    serde_json::to_string(selector)?,
                    serde_json::to_string(typed)?
                ),
            )
            .await?;
            Some(v.as_bool() != Some(true))
        }
        Oracle::Request { path, query, seen } => {
            let hit = origin
                .requests()
                .iter()
                .any(|s| &s.path == path && query.as_deref().is_none_or(|q| s.query.contains(q)));
            Some(hit == *seen)
        }
        Oracle::None { .. } => None,
    })
}

fn exception_messages(page: &Page) -> Vec<String> {
    page.exceptions().into_iter().map(|e| e.message).collect()
}

/// Records `sc` with its schedule and auto-exploration, and analyses the recording.
pub async fn record(ctx: &Context, sc: &Scenario) -> Result<Run> {
    record_in(ctx, sc, Order::Bad).await
}

/// Records `sc` in `order`, and analyses the recording.
pub async fn record_in(ctx: &Context, sc: &Scenario, order: Order) -> Result<Run> {
    let started = Instant::now();
    let m = &sc.manifest;
    let good: Vec<Resource> = m
        .resources
        .iter()
        .filter(|r| r.good_delay_ms > 0)
        .map(|r| Resource {
            path: r.path.clone(),
            query: r.query.clone(),
            delay_ms: r.good_delay_ms,
            good_delay_ms: 0,
            hold: false,
            hold_limit_ms: r.hold_limit_ms,
            hold_after: None,
        })
        .collect();
    let (resources, file) = match order {
        Order::Bad => (&m.resources[..], format!("{}.rec", sc.name)),
        Order::Good => (&good[..], format!("{}.good.rec", sc.name)),
        Order::Explored { .. } => (&[][..], format!("{}.reach.rec", sc.name)),
    };
    ctx.origin.configure(&sc.name, resources);
    let rec: PathBuf = ctx.scratch.join(file);
    let _ = std::fs::remove_file(&rec);
    let secret = secret(&sc.name);
    let stack = ctx
        .shepherd
        .record(&rec, ctx.origin.ca_der(), &secret)
        .await?;
    let (exceptions, oracle_fired) = through(ctx, sc, stack, &secret, Lane::Record(order)).await?;
    let races = ctx.shepherd.races(&rec)?;
    Ok(Run {
        recording: rec,
        races,
        exceptions,
        oracle_fired,
        requests: ctx.origin.requests(),
        elapsed: started.elapsed(),
    })
}

/// What a run through `shepherd serve --policy` produced.
pub struct Repaired {
    /// Uncaught exceptions (messages) seen over DevTools.
    pub exceptions: Vec<String>,
    /// Whether the oracle saw the error after the schedule (`None`: no oracle).
    pub oracle_fired: Option<bool>,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// Runs `sc`'s bad schedule through a repair stack enforcing `policy` and reads the oracle
/// (no exploration: only the schedule's input, which is what the policy must repair).
pub async fn repaired(ctx: &Context, sc: &Scenario, policy: PolicySet) -> Result<Repaired> {
    let started = Instant::now();
    let secret = secret(&sc.name);
    ctx.origin.configure(&sc.name, &sc.manifest.resources);
    let stack = ctx
        .shepherd
        .serve(ctx.origin.ca_der(), &secret, policy)
        .await?;
    let (exceptions, oracle_fired) = through(ctx, sc, stack, &secret, Lane::Repair).await?;
    Ok(Repaired {
        exceptions,
        oracle_fired,
        elapsed: started.elapsed(),
    })
}

/// Records `sc`'s bad schedule with `policy` enforced (the repaired execution, traced): what
/// `shepherd policy covers` is asked about (the repair lane's agreement check). Discarded
/// input is repeated as in the repair lane; no auto-exploration.
pub async fn record_repaired(ctx: &Context, sc: &Scenario, policy: PolicySet) -> Result<Run> {
    let started = Instant::now();
    ctx.origin.configure(&sc.name, &sc.manifest.resources);
    let rec: PathBuf = ctx.scratch.join(format!("{}.repaired.rec", sc.name));
    let _ = std::fs::remove_file(&rec);
    let secret = secret(&sc.name);
    let stack = ctx
        .shepherd
        .record_with_policy(&rec, ctx.origin.ca_der(), &secret, policy)
        .await?;
    let (exceptions, oracle_fired) = through(ctx, sc, stack, &secret, Lane::RecordRepaired).await?;
    let races = ctx.shepherd.races(&rec)?;
    Ok(Run {
        recording: rec,
        races,
        exceptions,
        oracle_fired,
        requests: ctx.origin.requests(),
        elapsed: started.elapsed(),
    })
}

/// Which lane a run serves: what happens after the oracle was read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// Recorded in this order: after the bad order, auto-explore (when the manifest allows);
    /// then flush the trace.
    Record(Order),
    /// Nothing: the oracle is the result.
    Repair,
    /// The bad schedule recorded with the policy enforced: discarded input repeated as in
    /// `Repair`, then the trace flushed.
    RecordRepaired,
}

/// Drives `sc` through `stack` in a fresh browser context, then lets every held answer go
/// and stops the stack.
async fn through(
    ctx: &Context,
    sc: &Scenario,
    stack: Stack,
    secret: &str,
    lane: Lane,
) -> Result<(Vec<String>, Option<bool>)> {
    let proxy = stack.proxy().addr().to_string();
    let result = async {
        let page = ctx
            .browser
            .new_isolated_page(Some(&proxy), Some("<-loopback>"))
            .await?;
        let r = drive(ctx, sc, &page, secret, lane).await;
        let _ = page.close().await;
        r
    }
    .await;
    ctx.origin.release_all();
    stack.shutdown().await;
    result
}

async fn drive(
    ctx: &Context,
    sc: &Scenario,
    page: &Page,
    secret: &str,
    lane: Lane,
) -> Result<(Vec<String>, Option<bool>)> {
    let m = &sc.manifest;
    let url = ctx.origin.url(&sc.name, &m.page);
    let nav = page.call("Page.navigate", json!({ "url": url })).await?;
    if let Some(err) = nav.get("errorText").and_then(|e| e.as_str())
        && !err.is_empty()
    {
        bail!("navigating to {url}: {err}");
    }
    stay_on_page(page, secret).await?;
    let order = match lane {
        Lane::Record(order) => order,
        Lane::Repair | Lane::RecordRepaired => Order::Bad,
    };
    if let Order::Explored {
        duration,
        max_events,
    } = order
    {
        return explored(page, &url, secret, duration, max_events).await;
    }
    if order == Order::Bad {
        run_schedule(page, &ctx.origin, &m.schedule, lane).await?;
    }
    // Whatever the schedule left held goes now: the page must finish loading.
    ctx.origin.release_all();
    poll(
        page,
        World::Isolated,
        "document.readyState === 'complete'",
        patience(Duration::from_secs(10)),
    )
    .await
    .context("waiting for load")?;
    if order == Order::Good {
        let _ = page
            .wait_quiet(Duration::from_millis(250), patience(Duration::from_secs(4)))
            .await;
        good_input(page, &ctx.origin, secret, &m.schedule).await?;
    }
    if lane == Lane::Repair || lane == Lane::RecordRepaired {
        policy_idle(page, secret).await?;
    }
    let (exceptions, fired) = settled_oracle(ctx, page, m).await?;
    let secret_js = serde_json::to_string(secret)?;
    let control = |body: &str| {
        format!(
            "(async () => {{ const C = globalThis.__shepherd && __shepherd.control({secret_js}); if (!C) return false; {body}; return true; }})()"
        )
    };
    if lane == Lane::Repair || lane == Lane::RecordRepaired {
        let mut result = (exceptions, fired);
        // A policy that discarded the input showed the user that the page was busy
        // (EventRaceCommander's repair by discarding): the user repeats the input once the
        // page is idle, and the error must not show then either.
        let stats = page.evaluate(&control("return C.stats()")).await?;
        if result.1 == Some(true)
            && stats.get("policyDiscarded").and_then(|d| d.as_u64()) >= Some(1)
        {
            for s in m.schedule.iter().filter(|s| s.action.is_input()) {
                act(page, &ctx.origin, &s.action)
                    .await
                    .context("repeating discarded input")?;
            }
            result = settled_oracle(ctx, page, m).await?;
        }
        if lane == Lane::RecordRepaired {
            page.evaluate(&control("await C.flush()"))
                .await
                .context("flushing the trace")?;
        }
        return Ok(result);
    }
    if order == Order::Bad && !ctx.explore.is_zero() && m.auto_explore {
        let present = page.evaluate(&control("")).await?;
        if present.as_bool() != Some(true) {
            return Err(anyhow!(
                "no Shepherd runtime in {} (was the page instrumented?)",
                sc.name
            ));
        }
        exercise_recorded(
            page,
            secret,
            &ExerciseOptions {
                duration: ctx.explore,
                max_events: 16,
                seed: 7,
                settle: Duration::from_millis(30),
                settle_limit: Duration::from_millis(250),
                ..ExerciseOptions::default()
            },
        )
        .await
        .context("auto-exploration")?;
        let _ = page
            .wait_quiet(Duration::from_millis(150), patience(Duration::from_secs(2)))
            .await;
    }
    page.evaluate(&control("await C.flush()"))
        .await
        .context("flushing the trace")?;
    Ok((exception_messages(page), fired))
}

/// Makes the page's runtime stop and trace navigations away from it, as soon as the runtime
/// runs (it is the document's first script): a schedule that clicks a link or submits a form
/// must not lose the page, whose oracle and trace come after.
async fn stay_on_page(page: &Page, secret: &str) -> Result<()> {
    let secret_js = serde_json::to_string(secret)?;
    let expr = format!(
        "(() => {{ const C = globalThis.__shepherd && __shepherd.control({secret_js}); return !!(C && C.blockNavigations(true)); }})()"
    );
    let limit = patience(STEP_LIMIT);
    let start = Instant::now();
    loop {
        if page.evaluate(&expr).await.ok().and_then(|v| v.as_bool()) == Some(true) {
            return Ok(());
        }
        if start.elapsed() > limit {
            bail!("no Shepherd runtime answered within {limit:?} (was the page instrumented?)");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The reach lane's run: the page as `shepherd record URL --explore` drives it (load, a quiet
/// period, the exercise with `record`'s seed and settle, the coverage into the trace, a flush).
async fn explored(
    page: &Page,
    url: &str,
    secret: &str,
    duration: Duration,
    max_events: usize,
) -> Result<(Vec<String>, Option<bool>)> {
    poll(
        page,
        World::Isolated,
        "document.readyState === 'complete'",
        patience(Duration::from_secs(10)),
    )
    .await
    .with_context(|| format!("waiting for the load of {url}"))?;
    let _ = page
        .wait_quiet(
            Duration::from_millis(300),
            patience(Duration::from_secs(10)),
        )
        .await;
    exercise_recorded(
        page,
        secret,
        &ExerciseOptions {
            duration,
            max_events,
            seed: RECORD_SEED,
            // Coverage, not the clock, ends the run: a busy machine gets there later.
            stop_when_covered: Some(REACH_MIN_EVENTS),
            ..ExerciseOptions::default()
        },
    )
    .await
    .context("exercising the page")?;
    let _ = page
        .wait_quiet(Duration::from_millis(300), patience(Duration::from_secs(5)))
        .await;
    let secret_js = serde_json::to_string(secret)?;
    page.evaluate(&format!(
        "(async () => {{ const C = globalThis.__shepherd && __shepherd.control({secret_js}); if (!C) return false; await C.flush(); return true; }})()"
    ))
    .await
    .context("flushing the trace")?;
    Ok((exception_messages(page), None))
}

/// Waits until the repair policy holds nothing (input it postponed has been replayed, the
/// callbacks it held have run): replayed typing changes no DOM, so the quiet wait alone read
/// the oracle in the middle of it on a loaded machine. A policy that still holds something at
/// the limit is left to the oracle (its max-delay is the product's).
async fn policy_idle(page: &Page, secret: &str) -> Result<()> {
    let secret_js = serde_json::to_string(secret)?;
    let expr = format!(
        "(() => {{ const C = globalThis.__shepherd && __shepherd.control({secret_js}); return !C || C.stats().policyPending === 0; }})()"
    );
    if let Err(e) = poll(page, World::Page, &expr, patience(STEP_LIMIT)).await
        && std::env::var_os("SHEPHERD_SCENARIO_LOG").is_some()
    {
        println!("  the policy still holds input: {e:#}");
    }
    Ok(())
}

/// Waits until the page is quiet (or, for a page that never is, the limit times the patience
/// factor), then reads its exceptions and the oracle.
async fn settled_oracle(
    ctx: &Context,
    page: &Page,
    m: &Manifest,
) -> Result<(Vec<String>, Option<bool>)> {
    let _ = page
        .wait_quiet(Duration::from_millis(250), patience(Duration::from_secs(4)))
        .await;
    let exceptions = exception_messages(page);
    let fired = oracle(page, &ctx.origin, &m.oracle, &exceptions).await?;
    Ok((exceptions, fired))
}

/// The scenario directories' parent (`tests/scenarios`).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}
