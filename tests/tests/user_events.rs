//! Whose events the trace's user events are, end to end (record mode, the full pipeline): only
//! events a user's input caused are user events, and no user-event arc starts at an event a
//! script caused (`docs/runtime-api.md`, "Runtime: user events"); the document's focus is a
//! location; navigations are stopped and traced as events; an exercise's coverage goes into
//! the trace.
//!
//! The property (`no_user_event_arc_starts_at_an_event_some_script_caused`) runs over
//! recorded traces of real pages: every page of the scenario corpus, TodoMVC's vanilla app
//! (`shepherd-testkit`) and `pages/causes/`, each recorded once without any input and once
//! exercised as `record --explore` does. Its oracles need no help from the runtime: without a
//! user there is no user event, so a trace recorded without input has no user event at all;
//! and on `pages/causes/` the page's scripts act on elements no user can reach (off-screen, ids
//! `scripted-…`), so an event at one of them is a script's — except a `blur` or `focusout`,
//! which the user's own click elsewhere causes when a script had focused one of them, and the
//! `select` Chromium fires at such a field once it lost the focus.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail, ensure};
use futures_util::StreamExt;
use serde_json::json;
use shepherd_e2e::{Case, Harness, TraceQuery, case, patience, run_cases_within};
use shepherd_exerciser::ExerciseOptions;
use shepherd_races::graph::ArcOrigin;
use shepherd_runtime::Mode;
use shepherd_trace::{ActionId, ActionType, ArcKind, Op};

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "page_caused_events_belong_to_their_cause",
            page_caused_events_belong_to_their_cause,
        ),
        (
            "the_users_own_events_are_chained",
            the_users_own_events_are_chained,
        ),
        ("the_focus_is_a_location", the_focus_is_a_location),
        (
            "navigations_are_stopped_and_traced",
            navigations_are_stopped_and_traced,
        ),
        ("coverage_goes_into_the_trace", coverage_goes_into_the_trace),
        (
            "no_user_event_arc_starts_at_an_event_some_script_caused",
            no_user_event_arc_starts_at_an_event_some_script_caused,
        ),
    ];
    // The property records some fifty pages twice each.
    run_cases_within(Mode::Record, cases, Duration::from_secs(900))
}

/// The `fire:<type> @ <target>` label of action `a`, if it is a dispatch.
fn fire_label(t: &TraceQuery, a: ActionId) -> Option<String> {
    t.trace.ops_of(a).iter().find_map(|op| match op {
        Op::Enter { scope, .. } => {
            let s = t.trace.strings.get(*scope);
            s.starts_with("fire:").then(|| s.to_string())
        }
        _ => None,
    })
}

/// The `id` of the node action `a` was dispatched at (from its label and the node's
/// description), if any.
fn target_id(t: &TraceQuery, a: ActionId) -> Option<String> {
    let label = fire_label(t, a)?;
    let target = label.rsplit_once(" @ ")?.1;
    let n: u32 = target.rsplit_once('[')?.1.strip_suffix(']')?.parse().ok()?;
    t.node(n)?.id
}

/// Events a key press fires at the focused element (and the text it types into it).
const KEYS_FOLLOW_FOCUS: &[&str] = &[
    "event:keydown",
    "event:keypress",
    "event:keyup",
    "event:beforeinput",
    "event:input",
    "event:textInput",
];

/// Whether action `a` is an event at an element only the page's scripts touch (the oracle of
/// the causes page): a user can neither click, focus, select in nor scroll them; moving
/// the focus away from one (`blur`, `focusout`) a user can, and Chromium then fires `select`
/// at a field whose text a script had selected (the focus change's doing, as the blur is); and
/// a key lands wherever the focus is, in a field a script focused too.
fn scripts_only(t: &TraceQuery, a: ActionId) -> Option<String> {
    let kind = t.kind(a);
    if kind == "event:blur" || kind == "event:focusout" {
        return None;
    }
    // A key goes to the focused element wherever it is: the page's `select()` and its
    // autofocus put the focus on an off-screen field, and the user's next keys land there.
    if KEYS_FOLLOW_FOCUS.contains(&kind) {
        return None;
    }
    let id = target_id(t, a).filter(|i| i.starts_with("scripted-"))?;
    let after_users_blur = kind == "event:select"
        && (0..a).any(|b| {
            is_ui(t, b)
                && t.kind(b) == "event:blur"
                && target_id(t, b).as_deref() == Some(id.as_str())
        });
    (!after_users_blur).then_some(id)
}

/// Whether action `a` carries the empty scope `mark`.
fn marked(t: &TraceQuery, a: ActionId, mark: &str) -> bool {
    t.trace
        .ops_of(a)
        .iter()
        .any(|op| matches!(op, Op::Enter { scope, .. } if t.trace.strings.get(*scope) == mark))
}

fn is_ui(t: &TraceQuery, a: ActionId) -> bool {
    t.trace
        .actions
        .get(a as usize)
        .is_some_and(|x| x.ty == ActionType::UserInterface)
}

/// The user-event arcs of a trace: the runtime's chain (join arcs between two user events)
/// and the analysis' auto-exploration arcs (each explored event hung off the last real user
/// event before it).
fn user_event_arcs(t: &TraceQuery) -> anyhow::Result<Vec<(ActionId, ActionId)>> {
    let mut arcs: Vec<(ActionId, ActionId)> = t
        .trace
        .arcs
        .iter()
        .filter(|a| a.kind == ArcKind::Join && is_ui(t, a.tail) && is_ui(t, a.head))
        .map(|a| (a.tail, a.head))
        .collect();
    let an = shepherd_races::analyze(&t.trace, &shepherd_races::Options::default())
        .map_err(|e| anyhow!("analysing: {e}"))?;
    arcs.extend(
        an.graph
            .arcs()
            .iter()
            .filter(|a| a.origin == ArcOrigin::AutoExplore)
            .map(|a| (a.tail, a.head)),
    );
    Ok(arcs)
}

/// Loads `url`, lets its scripts run until `ready` holds (or the time is up), optionally
/// exercises it as `record --explore` does, and returns the flushed trace.
async fn record(
    h: &Harness,
    url: &str,
    ready: Option<&str>,
    exercise: Option<ExerciseOptions>,
) -> anyhow::Result<TraceQuery> {
    let page = h.open_url(url).await?;
    let result = async {
        let _ = page
            .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(3)))
            .await;
        if let Some(opts) = exercise {
            shepherd_session::drive::exercise_recorded(&page, h.origin.secret(), &opts).await?;
        }
        if let Some(ready) = ready {
            h.wait_for(&page, ready, Duration::from_secs(10)).await?;
        }
        let _ = page
            .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(3)))
            .await;
        h.flushed_trace(&page).await
    }
    .await;
    let _ = page.close().await;
    result.with_context(|| format!("recording {url}"))
}

case!(page_caused_events_belong_to_their_cause, |h| async move {
    let t = record(
        &h,
        &h.origin.url("/causes/"),
        Some("window.done.all === true"),
        None,
    )
    .await?;
    let ticks = t.of_kind("interval");
    ensure!(ticks.len() >= 10, "interval ticks: {ticks:?}\n{}", t.dump());
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for a in &t.trace.actions {
        let Some(id) = target_id(&t, a.id).filter(|i| i.starts_with("scripted-")) else {
            continue;
        };
        let kind = t.kind(a.id).to_string();
        ensure!(
            !is_ui(&t, a.id),
            "#{} {kind} at #{id} is the page's, not a user event\n{}",
            a.id,
            t.dump()
        );
        let (cause, _) = t
            .forked_by(a.id)
            .ok_or_else(|| anyhow!("#{} {kind} at #{id} has no cause\n{}", a.id, t.dump()))?;
        ensure!(
            ticks.contains(&cause) || t.kind(cause).starts_with("event:"),
            "#{} {kind} at #{id} is forked by #{cause} {}, not by an interval tick\n{}",
            a.id,
            t.kind(cause),
            t.dump()
        );
        if id == "scripted-autofocus" && kind == "event:focus" {
            ensure!(
                marked(&t, a.id, "autofocus"),
                "the browser's autofocus is marked\n{}",
                t.dump()
            );
        }
        seen.insert(format!("{kind}@{id}"));
    }
    for want in [
        "event:selectionchange@scripted-value",
        "event:select@scripted-select",
        "event:selectionchange@scripted-area",
        "event:focus@scripted-autofocus",
    ] {
        ensure!(seen.contains(want), "no {want}: {seen:?}\n{}", t.dump());
    }
    // The page's scroll: the document's, forked by the tick that called scrollIntoView.
    let scrolls = t.with_scope("fire:scroll @ Document[1]");
    ensure!(!scrolls.is_empty(), "no scroll\n{}", t.dump());
    for s in scrolls {
        ensure!(!is_ui(&t, s), "#{s} scroll is the page's\n{}", t.dump());
        ensure!(
            t.forked_by(s).is_some_and(|(c, _)| ticks.contains(&c)),
            "#{s} scroll forked by a tick\n{}",
            t.dump()
        );
    }
    ensure!(
        user_event_arcs(&t)?.is_empty(),
        "no user, no user-event arc\n{}",
        t.dump()
    );
    Ok(())
});

case!(the_users_own_events_are_chained, |h| async move {
    let page = h.open("/causes/").await?;
    let r = async {
        h.wait_for(&page, "window.done.all === true", Duration::from_secs(10))
            .await?;
        page.click("#typed").await?;
        page.type_text("ab").await?;
        let _ = page
            .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(3)))
            .await;
        h.flushed_trace(&page).await
    }
    .await;
    let _ = page.close().await;
    let t = r?;
    // The click's focus, the keys, the input and the selectionchange typing caused.
    for want in [
        "fire:mousedown @ INPUT[",
        "fire:focus @ INPUT[",
        "fire:keydown @ INPUT[",
        "fire:input @ INPUT[",
        "fire:selectionchange @ INPUT[",
    ] {
        let at_typed: Vec<ActionId> = t
            .with_scope(want)
            .into_iter()
            .filter(|a| target_id(&t, *a).as_deref() == Some("typed"))
            .collect();
        ensure!(!at_typed.is_empty(), "no {want}typed\n{}", t.dump());
        for a in at_typed {
            ensure!(is_ui(&t, a), "#{a} {want} is the user's\n{}", t.dump());
        }
    }
    let ui: Vec<ActionId> = t
        .trace
        .actions
        .iter()
        .filter(|a| is_ui(&t, a.id))
        .map(|a| a.id)
        .collect();
    for w in ui.windows(2) {
        ensure!(
            t.has_arc(w[0], w[1], 'j'),
            "user events chained: #{} -> #{}\n{}",
            w[0],
            w[1],
            t.dump()
        );
    }
    Ok(())
});

case!(the_focus_is_a_location, |h| async move {
    let page = h.open("/causes/").await?;
    let r = async {
        h.wait_for(&page, "window.done.all === true", Duration::from_secs(10))
            .await?;
        page.click("#typed").await?;
        page.type_text("a").await?;
        // Page code moves the focus: a focus() call and a dialog opened by script.
        page.evaluate(
            "setTimeout(function () { document.getElementById('other').focus(); window.moved = true; }, 0)",
        )
        .await?;
        h.wait_for(&page, "window.moved === true", Duration::from_secs(5))
            .await?;
        page.type_text("b").await?;
        let _ = page
            .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(3)))
            .await;
        let value = page
            .evaluate("document.getElementById('other').value")
            .await?;
        let t = h.flushed_trace(&page).await?;
        anyhow::Ok((t, value))
    }
    .await;
    let _ = page.close().await;
    let (t, value) = r?;
    ensure!(
        value == json!("b"),
        "the key went to the focused field: {value}"
    );
    let loc = "Document[1].activeElement";
    let mover = t.accessing(|x| x.write && x.loc == loc && x.value.is_some());
    let timer = t
        .of_kind("timer")
        .into_iter()
        .find(|a| t.written(*a, loc).is_some())
        .ok_or_else(|| anyhow!("the focus() timer writes {loc}\n{}", t.dump()))?;
    ensure!(
        t.reads(timer, loc),
        "focus() reads the focus first\n{}",
        t.dump()
    );
    ensure!(!mover.is_empty());
    let keys: Vec<ActionId> = t
        .with_scope("fire:keydown @ INPUT[")
        .into_iter()
        .filter(|a| t.reads(*a, loc))
        .collect();
    ensure!(
        keys.len() == 2,
        "both keydowns read {loc}: {keys:?}\n{}",
        t.dump()
    );
    let presses: Vec<ActionId> = t
        .with_scope("fire:mousedown @ INPUT[")
        .into_iter()
        .filter(|a| t.written(*a, loc).is_some())
        .collect();
    ensure!(!presses.is_empty(), "the press writes {loc}\n{}", t.dump());
    // The key typed after the timer races with it.
    let races = t.uncovered_on(loc)?;
    ensure!(
        races
            .iter()
            .any(|r| r.first.action == timer || r.second.action == timer),
        "the timer's focus() races with the user's focus and keys: {}",
        t.races_text(|l| l == loc)
    );
    Ok(())
});

case!(navigations_are_stopped_and_traced, |h| async move {
    let page = h.open("/blocked/").await?;
    let url = page.url().await?;
    let r = async {
        let on = h.control(&page, "C.blockNavigations(true)").await?;
        ensure!(on == json!(true));
        // The campaign code is added to #away late: the click below reads the new href.
        h.wait_for(&page, "window.tagged === true", Duration::from_secs(5))
            .await?;
        for sel in ["#away", "#popup", "#routed", "#scripted", "#opener"] {
            page.click(sel).await?;
            let _ = page
                .wait_quiet(Duration::from_millis(150), patience(Duration::from_secs(2)))
                .await;
        }
        let navs = h.control(&page, "C.navigations()").await?;
        let state = page.evaluate("[window.routed, window.opened]").await?;
        let t = h.flushed_trace(&page).await?;
        anyhow::Ok((navs, state, t))
    }
    .await;
    let still = page.url().await;
    let _ = page.close().await;
    let (navs, state, t) = r?;
    ensure!(still? == url, "the page stayed");
    ensure!(
        state == json!([true, null]),
        "the router's own handling ran; window.open gave null: {state}"
    );
    let list = navs.as_array().cloned().unwrap_or_default();
    let kinds: Vec<(String, String)> = list
        .iter()
        .map(|n| {
            (
                n["kind"].as_str().unwrap_or("").to_string(),
                n["url"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let has = |kind: &str, end: &str| kinds.iter().any(|(k, u)| k == kind && u.ends_with(end));
    ensure!(has("link", "/blocked/away?campaign=spring"), "{kinds:?}");
    ensure!(has("popup", "/blocked/popup"), "{kinds:?}");
    ensure!(has("script", "/blocked/by-script"), "{kinds:?}");
    ensure!(has("popup", "/blocked/opened"), "{kinds:?}");
    ensure!(
        !kinds.iter().any(|(_, u)| u.ends_with("/blocked/routed")),
        "the router cancelled its own link: no navigation {kinds:?}"
    );
    ensure!(kinds.len() == 4, "{kinds:?}");
    // Nothing left the browser.
    for path in [
        "/blocked/away",
        "/blocked/popup",
        "/blocked/by-script",
        "/blocked/opened",
    ] {
        ensure!(
            !h.origin.requests().iter().any(|r| r == path),
            "{path} was requested: {:?}",
            h.origin.requests()
        );
    }
    // Each is an action forked by the click that caused it; the link's reads its href.
    let navigations = t.of_kind("navigation");
    ensure!(
        navigations.len() == 4,
        "{navigations:?} {:?} {kinds:?}\n{}",
        navigations.iter().map(|n| t.scope(*n)).collect::<Vec<_>>(),
        t.dump()
    );
    for n in &navigations {
        let (cause, _) = t
            .forked_by(*n)
            .ok_or_else(|| anyhow!("#{n} has no cause\n{}", t.dump()))?;
        ensure!(
            t.kind(cause) == "event:click",
            "#{n} forked by the click, not #{cause} {}\n{}",
            t.kind(cause),
            t.dump()
        );
    }
    let away = navigations
        .iter()
        .find(|n| {
            t.scope(**n)
                .is_some_and(|s| s.ends_with("/blocked/away?campaign=spring"))
        })
        .copied()
        .ok_or_else(|| anyhow!("no navigation to #away\n{}", t.dump()))?;
    let href = t
        .accessing(|x| !x.write && x.loc.ends_with(".href"))
        .into_iter()
        .find(|(a, _)| *a == away)
        .map(|(_, x)| x.loc)
        .ok_or_else(|| anyhow!("the link's navigation reads its href\n{}", t.dump()))?;
    let races = t.uncovered_on(&href)?;
    ensure!(
        !races.is_empty(),
        "the late rewrite of the href races with following the link\n{}",
        t.dump()
    );
    Ok(())
});

case!(coverage_goes_into_the_trace, |h| async move {
    let page = h.open("/causes/").await?;
    let r = async {
        let n = h
            .control(
                &page,
                r#"C.coverage([
                    {path: '/html[1]/body[1]/label[1]/input[1]', offered: 'type', done: 'type'},
                    {path: '/html[1]/body[1]/select[1]', offered: 'key-choose,pointer-choose', done: ''},
                    {path: '/html[1]/body[1]/nothing[1]', offered: 'click', done: 'click'},
                    {path: 42, offered: 'click', done: ''},
                    {path: '/html[1]/body[1]/button[1]'}
                ])"#,
            )
            .await?;
        let t = h.flushed_trace(&page).await?;
        anyhow::Ok((n, t))
    }
    .await;
    let _ = page.close().await;
    let (n, t) = r?;
    ensure!(n == json!(2), "two controls of this document: {n}");
    let controls: Vec<(Option<String>, String, String)> = t
        .trace
        .controls
        .iter()
        .map(|c| {
            (
                t.node(c.node).and_then(|d| d.id),
                t.trace.strings.get(c.offered).to_string(),
                t.trace.strings.get(c.done).to_string(),
            )
        })
        .collect();
    ensure!(
        controls
            == vec![
                (Some("typed".into()), "type".into(), "type".into()),
                (
                    Some("size".into()),
                    "key-choose,pointer-choose".into(),
                    String::new()
                ),
            ],
        "{controls:?}"
    );
    let report = t.report()?;
    let e = report
        .summary
        .exercised
        .ok_or_else(|| anyhow!("the report has the coverage"))?;
    ensure!(e.controls == 2 && e.exercised == 1, "{e:?}");
    ensure!(
        e.missed.len() == 1 && e.missed[0].name == "select#size",
        "{e:?}"
    );
    Ok(())
});

/// Every page of the scenario corpus, served at `/corpus/<name>/` (nothing held or delayed).
fn corpus_pages(h: &Harness) -> anyhow::Result<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut pages = Vec::new();
    for dir in std::fs::read_dir(&root)? {
        let dir = dir?.path();
        if !dir.join("manifest.toml").is_file() {
            continue;
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        put_tree(h, &dir, &format!("/corpus/{name}"))?;
        pages.push(format!("/corpus/{name}/index.html"));
    }
    pages.sort();
    Ok(pages)
}

/// Serves every file under `dir` at `prefix` + its relative path.
fn put_tree(h: &Harness, dir: &Path, prefix: &str) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if path.is_dir() {
            put_tree(h, &path, &format!("{prefix}/{name}"))?;
            continue;
        }
        let ct = match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
            "html" => "text/html; charset=utf-8",
            "js" | "mjs" => "text/javascript; charset=utf-8",
            "css" => "text/css; charset=utf-8",
            "json" => "application/json",
            "svg" => "image/svg+xml",
            "png" => "image/png",
            _ => "text/plain; charset=utf-8",
        };
        h.origin
            .put(&format!("{prefix}/{name}"), ct, std::fs::read(&path)?);
    }
    Ok(())
}

case!(
    no_user_event_arc_starts_at_an_event_some_script_caused,
    |h| async move {
        let mut pages = corpus_pages(&h)?;
        let cache = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target")
            .join("tmp");
        let todo = shepherd_testkit::todomvc(&cache).join("examples/vanillajs");
        put_tree(&h, &todo, "/todomvc")?;
        pages.push("/todomvc/index.html".into());
        pages.push("/causes/".into());
        let explore = ExerciseOptions {
            duration: Duration::from_millis(1500),
            max_events: 40,
            seed: 1,
            ..ExerciseOptions::default()
        };
        // Pages are recorded a few at a time (each in its own tab and browser context): most
        // of a recording is waiting for the page to be quiet.
        let (harness, explore) = (&h, &explore);
        let outcomes: Vec<anyhow::Result<usize>> = futures_util::stream::iter(pages)
            .map(|path| async move { property_on(harness, &path, explore).await })
            .buffer_unordered(PAGES_AT_ONCE)
            .collect()
            .await;
        let mut checked = 0;
        let mut scripted_seen = 0;
        let mut failures = Vec::new();
        for outcome in outcomes {
            match outcome {
                Ok(scripted) => {
                    checked += 1;
                    scripted_seen += scripted;
                }
                Err(e) => failures.push(format!("{e:#}")),
            }
        }
        ensure!(failures.is_empty(), "{}", failures.join("\n\n"));
        ensure!(checked >= 45, "{checked} pages");
        ensure!(
            scripted_seen > 0,
            "the causes page's scripts fired events at their elements while it was exercised"
        );
        Ok(())
    }
);

/// Pages the property records at once.
const PAGES_AT_ONCE: usize = 3;

/// The property on one page: recorded without input, then exercised. Returns how many events
/// at elements only scripts touch the exercised trace has.
async fn property_on(h: &Harness, path: &str, explore: &ExerciseOptions) -> anyhow::Result<usize> {
    let url = h.origin.url(path);
    // Without a user there is no user event.
    let t = record(h, &url, None, None).await?;
    if let Some(a) = t.trace.actions.iter().find(|a| is_ui(&t, a.id)) {
        bail!(
            "{path}: #{} {} is a user event in a run without input\n{}",
            a.id,
            t.kind(a.id),
            t.dump()
        );
    }
    // With one: no user-event arc starts at an event at an element only scripts touch, and
    // every one starts at a user event.
    let t = record(h, &url, None, Some(explore.clone())).await?;
    for (tail, head) in user_event_arcs(&t)? {
        ensure!(
            is_ui(&t, tail),
            "{path}: the user-event arc #{tail} -> #{head} starts at #{tail} {}, no user event\n{}",
            t.kind(tail),
            t.dump()
        );
        if let Some(id) = scripts_only(&t, tail) {
            bail!(
                "{path}: the user-event arc #{tail} -> #{head} starts at #{tail} {} at #{id}, which only scripts touch\n{}",
                t.kind(tail),
                t.dump()
            );
        }
    }
    Ok(t.trace
        .actions
        .iter()
        .filter(|a| scripts_only(&t, a.id).is_some())
        .count())
}
