//! The one mechanism behind repair and exploration: holding, releasing, discarding and
//! following a schedule, driven through `__shepherd.control(secret)`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use shepherd_e2e::{Case, case, run_cases};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        ("control_needs_the_secret", control_needs_the_secret),
        ("a_snooping_page_cannot_steer", a_snooping_page_cannot_steer),
        ("hold_and_release_timers", hold_and_release_timers),
        ("observe_is_the_runtimes_own", observe_is_the_runtimes_own),
        ("follow_a_schedule", follow_a_schedule),
        ("discard_a_click", discard_a_click),
        ("hold_a_click_then_release", hold_a_click_then_release),
        ("hold_a_fetch_settlement", hold_a_fetch_settlement),
        (
            "an_xhrs_end_of_body_events_are_held_as_one",
            xhr_end_of_body_held_as_one,
        ),
        (
            "a_service_worker_registration_is_counted_until_it_settles",
            registration_counted,
        ),
        ("virtual_time_holds_timers_when_registered", virtual_time),
        ("clearing_a_fired_timer_still_writes_it", clear_after_fire),
        ("key_events_name_their_key", key_events_name_their_key),
        (
            "the_page_counts_its_requests_in_flight",
            the_page_counts_its_requests_in_flight,
        ),
    ];
    run_cases(Mode::Record, cases)
}

/// How long a check that something does *not* happen waits (held callbacks stay held, a
/// discarded one never runs): a loaded machine only makes such a check easier to pass.
const PAUSE: Duration = Duration::from_millis(150);

/// The limit of a wait for something that does happen (a released callback runs), before the
/// patience factor: it ends as soon as it holds.
const SOON: Duration = Duration::from_secs(3);

fn stables(pending: &Value) -> Vec<String> {
    pending
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["stable"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

case!(control_needs_the_secret, |h| async move {
    let page = h.open("/control/").await?;
    let v = page
        .evaluate("[__shepherd.control('wrong'), typeof __shepherd.control, Object.keys(window).includes('__shepherd')]")
        .await?;
    ensure!(v == json!([null, "function", false]), "{v}");
    let d = page
        .evaluate("(() => { const d = Object.getOwnPropertyDescriptor(window, '__shepherd'); return [d.enumerable, d.writable, d.configurable]; })()")
        .await?;
    ensure!(d == json!([false, false, false]), "{d}");
    let _ = page.close().await;
    Ok(())
});

case!(a_snooping_page_cannot_steer, |h| async move {
    // Another origin's document, whose trace the snooping page will try to write into.
    let other = h.open_url(&h.origin.other_origin_url("/control/")).await?;
    let other_doc = other.evaluate("__shepherd.doc").await?;
    let other_doc = other_doc.as_str().unwrap_or_default().to_string();
    ensure!(
        other_doc.contains('.'),
        "document id with its origin's prefix: {other_doc}"
    );
    // An operator hold rule that must survive.
    h.origin
        .record_proxy(|p| p.holds().hold_matching("/never-requested"))
        .await;
    let page = h.open("/snoop/").await?;
    let out = page
        .evaluate(&format!(
            "snoop({:?}, {:?})",
            h.origin.other_origin_url(""),
            other_doc
        ))
        .await?;
    let _ = page.close().await;
    ensure!(
        out["candidates"].as_u64().unwrap_or(0) > 100
            && out["runtimeBytes"].as_u64().unwrap_or(0) > 10_000,
        "the page read its DOM, entries and the runtime's source: {out}"
    );
    ensure!(
        out["myToken"].as_str().is_some_and(|t| t.len() == 32),
        "{out}"
    );
    ensure!(
        out["control"] == 0,
        "__shepherd.control accepted a string the page found: {out}"
    );
    ensure!(
        out["ok"] == json!([]),
        "control endpoints answered 200: {out}"
    );
    let (rule_kept, nothing_added, held) = h
        .origin
        .record_proxy(|p| {
            (
                p.holds().should_hold("/never-requested").is_some(),
                p.holds().should_hold("/anything-else").is_none(),
                p.holds().pending().len(),
            )
        })
        .await;
    ensure!(
        rule_kept && nothing_added && held == 0,
        "holds changed: {rule_kept} {nothing_added} {held}"
    );
    h.origin.record_proxy(|p| p.holds().clear_rules()).await;
    // The other origin's trace holds nothing the snooping page sent.
    let t = h.flushed_trace(&other).await?;
    let _ = other.close().await;
    let bytes = String::from_utf8_lossy(&h.origin.trace_bytes(&other_doc)).into_owned();
    ensure!(
        !bytes.contains("SNOOPED"),
        "another origin's trace was written"
    );
    ensure!(
        !t.trace.actions.is_empty(),
        "the other page traced normally"
    );
    Ok(())
});

/// The control page with its two timers held when their native timers fire.
async fn two_held_timers(h: &shepherd_e2e::Harness) -> anyhow::Result<shepherd_browser::Page> {
    let page = h.open("/control/").await?;
    h.control(&page, "C.policy(d => d.kind === 'timer' ? 'hold' : 'run')")
        .await?;
    page.evaluate("arm(); 0").await?;
    h.wait_for_control(&page, "C.pending().length >= 2", SOON)
        .await?;
    Ok(page)
}

case!(hold_and_release_timers, |h| async move {
    let page = two_held_timers(&h).await?;
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!(""),
        "held timers did not run"
    );
    let pending = h.control(&page, "C.pending()").await?;
    let list = pending.as_array().context("pending list")?;
    ensure!(list.len() == 2, "two held timers: {pending}");
    ensure!(
        list.iter().all(|d| d["kind"] == "timer" && d["delay"] == 0),
        "{pending}"
    );
    let second = list[1]["hid"].as_u64().context("hid")?;
    // Released, its task still to come: the explorer learns from `releasing` that a callback
    // has run even when it changed nothing it can see.
    let released = h
        .control(
            &page,
            &format!("[C.release({second}), C.stats().releasing]"),
        )
        .await?;
    ensure!(released == json!([true, 1]), "release: {released}");
    h.wait_for(&page, "ran.length > 0", SOON).await?;
    let releasing = h.control(&page, "C.stats().releasing").await?;
    ensure!(
        releasing == json!(0),
        "the released timer has run: {releasing}"
    );
    // Then the whole pause with nothing changing (A stays held).
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("B"),
        "only B ran"
    );
    ensure!(
        h.control(&page, &format!("C.release({second})")).await? == json!(false),
        "released once"
    );
    // How long the state has been unchanged: at least the pause since B was seen to run, then
    // less than before once a discard changes the held list (the explorer dates changes by
    // it). Both hold however long the machine takes between the calls.
    let quiet = h.control(&page, "C.stats().unchangedMs").await?;
    let before = quiet.as_f64().unwrap_or(0.0);
    ensure!(before >= 100.0, "unchanged for the pause: {quiet}");
    let first = list[0]["hid"].as_u64().context("hid")?;
    let quiet = h
        .control(
            &page,
            &format!("(C.discard({first}), C.stats().unchangedMs)"),
        )
        .await?;
    ensure!(
        quiet.as_f64().is_some_and(|ms| ms < before),
        "a discard is a change: {quiet} after {before}"
    );
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("B"),
        "A discarded"
    );
    let stats = h.control(&page, "C.stats()").await?;
    ensure!(
        stats["held"] == 0 && stats["heldTotal"] == 2 && stats["discarded"] == 1,
        "{stats}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let timers = t.of_kind("timer");
    ensure!(timers.len() == 1, "one timer action (B)\n{}", t.dump());
    ensure!(
        t.stable(timers[0]) == stables(&pending)[1],
        "the trace names the released callback"
    );
    Ok(())
});

// `observe` lists what the runtime holds from its own lists, whatever the page did to the
// built-in prototypes (a driver that listed `pending()` with the page's `map` could be shown
// fewer held callbacks than there are).
case!(observe_is_the_runtimes_own, |h| async move {
    let page = two_held_timers(&h).await?;
    page.evaluate(
        "Array.prototype.map = function () { return []; }; \
         Object.defineProperty(Object.prototype, 'held', { set() {}, configurable: true }); 0",
    )
    .await?;
    let observed = h.control(&page, "C.observe()").await?;
    let held = observed["held"].as_array().context("held list")?;
    ensure!(
        held.len() == 2
            && held
                .iter()
                .all(|d| d[0].is_u64() && d[1].is_string() && d[2] == "timer"),
        "the held timers as [hid, stable, kind]: {observed}"
    );
    ensure!(
        observed["open"] == -1
            && observed["releasing"] == 0
            && observed["unchanged"].is_number()
            && observed["doc"].is_string(),
        "{observed}"
    );
    let _ = page.close().await;
    Ok(())
});

case!(follow_a_schedule, |h| async move {
    let page = h.open("/control/").await?;
    h.control(&page, "C.holdAll(true)").await?;
    page.evaluate("arm(); 0").await?;
    h.wait_for_control(
        &page,
        "C.pending().filter(p => p.stable.includes('/timer#')).length >= 2",
        SOON,
    )
    .await?;
    // The two timers `arm()` registers (on a loaded machine the page's own `pagereveal` can
    // come after `holdAll` and wait too).
    let order: Vec<String> = stables(&h.control(&page, "C.pending()").await?)
        .into_iter()
        .filter(|s| s.contains("/timer#"))
        .collect();
    ensure!(order.len() == 2, "{order:?}");
    // Registration order is A, B; the schedule asks for B first.
    let schedule = json!([order[1], order[0]]);
    h.control(&page, &format!("C.follow({schedule})")).await?;
    h.wait_for(&page, "ran.length >= 2", SOON).await?;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("B,A"),
        "schedule followed"
    );
    ensure!(
        h.control(&page, "C.scheduleState().position").await? == json!(2),
        "schedule done"
    );
    let _ = page.close().await;
    Ok(())
});

case!(discard_a_click, |h| async move {
    let page = h.open("/control/").await?;
    h.control(
        &page,
        "C.policy(d => d.kind === 'event:click' ? 'discard' : 'run')",
    )
    .await?;
    page.click("#b").await?;
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!(""),
        "click discarded"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    ensure!(
        t.with_scope("fire:click").is_empty(),
        "no click action\n{}",
        t.dump()
    );
    ensure!(
        !t.with_scope("fire:mousedown").is_empty(),
        "other events still run"
    );
    Ok(())
});

case!(hold_a_click_then_release, |h| async move {
    let page = h.open("/control/").await?;
    h.control(
        &page,
        "C.policy(d => d.kind === 'event:click' ? 'hold' : 'run')",
    )
    .await?;
    page.click("#b").await?;
    h.wait_for_control(&page, "C.pending().length >= 1", SOON)
        .await?;
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!(""),
        "click held"
    );
    let pending = h.control(&page, "C.pending()").await?;
    ensure!(
        pending[0]["kind"] == "event:click" && pending[0]["user"] == true,
        "{pending}"
    );
    let hid = pending[0]["hid"].as_u64().context("hid")?;
    h.control(&page, &format!("C.release({hid})")).await?;
    h.wait_for(&page, "ran.length > 0", SOON).await?;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("click"),
        "released click ran"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let clicks = t.with_scope("fire:click @ BUTTON[");
    ensure!(clicks.len() == 1, "one click action\n{}", t.dump());
    ensure!(
        t.stable(clicks[0]) == stables(&pending)[0],
        "same identity after release"
    );
    ensure!(t.type_code(clicks[0]) == 2, "still a user event");
    Ok(())
});

case!(hold_a_fetch_settlement, |h| async move {
    let page = h.open("/control/").await?;
    h.control(&page, "C.policy(d => d.kind === 'fetch' ? 'hold' : 'run')")
        .await?;
    page.evaluate("armFetch(); 0").await?;
    // Held when the response arrives.
    h.wait_for_control(&page, "C.pending().length >= 1", SOON)
        .await?;
    tokio::time::sleep(PAUSE).await;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!(""),
        "settlement held"
    );
    let hid = h.control(&page, "C.pending()[0].hid").await?;
    h.control(&page, &format!("C.release({hid})")).await?;
    h.wait_for(&page, "ran.length > 0", SOON).await?;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("fetched"),
        "continuation ran"
    );
    let _ = page.close().await;
    Ok(())
});

case!(xhr_end_of_body_held_as_one, |h| async move {
    let page = h.open("/control/").await?;
    h.control(
        &page,
        "C.policy(d => d.kind.startsWith('event:') && !d.user ? 'hold' : 'run')",
    )
    .await?;
    page.evaluate(
        "window.xlog = []; (() => { const x = new XMLHttpRequest(); \
         x.onreadystatechange = () => xlog.push('rs' + x.readyState); \
         x.onload = () => { xlog.push('load'); Promise.resolve().then(() => xlog.push('settled')); }; \
         x.addEventListener('loadend', () => xlog.push('loadend')); \
         x.open('GET', location.href); x.send(); })(); 0",
    )
    .await?;
    // The browser fires the DONE readystatechange, load and loadend in one task: held, they
    // are one callback (so nothing can be released between them), and the microtasks of each
    // event's listeners still run before the next event. Release what is held, oldest first,
    // until the response's events have run.
    let mut kinds = Vec::new();
    for _ in 0..20 {
        h.wait_for_control(&page, "C.pending().length >= 1", SOON)
            .await?;
        let pending = h.control(&page, "C.pending()").await?;
        let first = &pending[0];
        kinds.push(first["kind"].as_str().unwrap_or_default().to_string());
        let hid = first["hid"].as_u64().context("hid")?;
        h.control(&page, &format!("C.release({hid})")).await?;
        tokio::time::sleep(PAUSE).await;
        if page.evaluate("xlog.includes('loadend')").await? == json!(true) {
            break;
        }
    }
    let log = page.evaluate("xlog.join(',')").await?;
    ensure!(
        log.as_str()
            .is_some_and(|l| l.ends_with("rs4,load,settled,loadend")),
        "the end of body ran as one, with the microtask check between its events: {log}"
    );
    // (A `progress` while loading is a task of its own, before the DONE state.)
    ensure!(
        kinds
            .iter()
            .all(|k| k != "event:load" && k != "event:loadend"),
        "load and loadend were never held on their own: {kinds:?}"
    );
    let _ = page.close().await;
    Ok(())
});

case!(registration_counted, |h| async move {
    let page = h.open("/control/").await?;
    // The browser fetches the script in its own process, after `register()` returns: the page
    // says a fetch is coming until the registration settles (this script does not exist, so it
    // fails).
    let at_once = h
        .control(
            &page,
            "(window.reg = navigator.serviceWorker.register('no-such-worker.js').then(() => 'ok', () => 'failed'), C.stats().registering)",
        )
        .await?;
    let url = h.origin.url("/control/no-such-worker.js");
    ensure!(at_once == json!([url]), "registering {url}: {at_once}");
    h.wait_for_control(&page, "C.stats().registering.length === 0", SOON)
        .await?;
    ensure!(
        page.evaluate("reg").await? == json!("failed"),
        "the page's promise keeps its outcome"
    );
    let _ = page.close().await;
    Ok(())
});

case!(virtual_time, |h| async move {
    let page = h.open("/control/").await?;
    h.control(
        &page,
        "(C.policy(d => ['timer', 'interval', 'raf'].includes(d.kind) ? 'hold' : 'run'), C.virtualTime(true))",
    )
    .await?;
    // Ten minutes away, yet pending at once: the delay is virtual.
    page.evaluate("window.far = setTimeout(function () { ran.push('far'); }, 600000); 0")
        .await?;
    let pending = h.control(&page, "C.pending()").await?;
    ensure!(
        pending.as_array().map(Vec::len) == Some(1) && pending[0]["delay"] == 600000,
        "{pending}"
    );
    let hid = pending[0]["hid"].as_u64().context("hid")?;
    h.control(&page, &format!("C.release({hid})")).await?;
    h.wait_for(&page, "ran.length > 0", SOON).await?;
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("far"),
        "released timer ran"
    );
    // Cleared before release: gone from the pending list, never runs.
    page.evaluate("window.gone = setTimeout(function () { ran.push('gone'); }, 600000); clearTimeout(gone); 0")
        .await?;
    ensure!(
        h.control(&page, "C.pending().length").await? == json!(0),
        "cleared timer discarded"
    );
    // An interval: each tick is pending once the previous one ran.
    page.evaluate("window.iv = setInterval(function () { ran.push('tick'); }, 5000); 0")
        .await?;
    for n in 1..=2 {
        let p = h.control(&page, "C.pending()").await?;
        ensure!(
            p.as_array().map(Vec::len) == Some(1) && p[0]["kind"] == "interval",
            "tick {n}: {p}"
        );
        let hid = p[0]["hid"].as_u64().context("hid")?;
        h.control(&page, &format!("C.release({hid})")).await?;
        // The tick runs, and the next one is held once it ran.
        h.wait_for(&page, &format!("ran.length > {n}"), SOON)
            .await?;
    }
    ensure!(
        page.evaluate("ran.join(',')").await? == json!("far,tick,tick"),
        "two ticks"
    );
    page.evaluate("clearInterval(iv); 0").await?;
    ensure!(
        h.control(&page, "C.pending().length").await? == json!(0),
        "cleared interval discarded"
    );
    // Animation frames too.
    page.evaluate("requestAnimationFrame(function () { ran.push('frame'); }); 0")
        .await?;
    ensure!(
        h.control(&page, "C.pending().map(d => d.kind).join()")
            .await?
            == json!("raf"),
        "frame pending"
    );
    let _ = page.close().await;
    Ok(())
});

case!(clear_after_fire, |h| async move {
    let page = h.open("/control/").await?;
    page.evaluate("window.t1 = setTimeout(function () { ran.push('t'); }, 0); 0")
        .await?;
    h.wait_for(&page, "ran.length > 0", SOON).await?;
    page.evaluate("clearTimeout(t1); 0").await?;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let id = page_timer_write(&t)?;
    // In the other order the clear would have cancelled the tick: it writes the timer.
    let clears = t.accessing(|a| a.write && a.loc == id && a.value.as_deref() == Some("undefined"));
    ensure!(
        !clears.is_empty(),
        "no write of {id} by the clear\n{}",
        t.dump()
    );
    Ok(())
});

/// The `Timer:<id>` location of the page's one timer.
fn page_timer_write(t: &shepherd_e2e::TraceQuery) -> anyhow::Result<String> {
    t.accessing(|a| a.write && a.loc.starts_with("Timer:"))
        .into_iter()
        .map(|(_, a)| a.loc)
        .next()
        .context("no timer in the trace")
}

case!(key_events_name_their_key, |h| async move {
    let page = h.open("/control/").await?;
    page.press_key("x").await?;
    page.press_key("Enter").await?;
    tokio::time::sleep(PAUSE).await;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let keys: Vec<String> = t
        .of_kind("event:keydown")
        .into_iter()
        .chain(t.of_kind("event:keyup"))
        .filter_map(|a| {
            let ops = t.trace.ops_of(a);
            ops.iter().find_map(|op| match op {
                shepherd_trace::Op::Enter { scope, .. } => t
                    .trace
                    .strings
                    .get(*scope)
                    .strip_prefix("key:")
                    .map(str::to_string),
                _ => None,
            })
        })
        .collect();
    ensure!(
        keys.iter().filter(|k| *k == "x").count() == 2
            && keys.iter().filter(|k| *k == "Enter").count() == 2,
        "keydown and keyup name x and Enter: {keys:?}\n{}",
        t.dump()
    );
    Ok(())
});

// A driver learns from the page that its input sent a request (DevTools reports it later): the
// runtime counts XHR and fetch requests, and bodies being read, until they end.
case!(the_page_counts_its_requests_in_flight, |h| async move {
    let page = h.open("/network/").await?;
    h.wait_for(
        &page,
        "window.fetchDone === true && window.awaited > 0",
        SOON,
    )
    .await?;
    h.wait_for(&page, "got.length === 1", SOON).await?;
    let requests = || async { h.control(&page, "C.stats().requests").await };
    // The count once it reaches 0, or at the limit (a body's end is seen a turn after the
    // last callback the page waits for).
    let settled = || async {
        let start = std::time::Instant::now();
        loop {
            let n = requests().await?;
            if n == json!(0) || start.elapsed() >= shepherd_testkit::patience(SOON) {
                return anyhow::Ok(n);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    // The page's own four requests (the second XHR has no handler: its end is its loadend).
    let own = settled().await?;
    ensure!(own == json!(0), "the page's requests ended: {own}");
    // Two slow ones, started and counted at once; a send that throws is not counted.
    let started = page
        .evaluate(
            "(() => { window.slow = 0; \
               const x = new XMLHttpRequest(); x.open('GET', 'data.json?delay=4000'); \
               x.onload = () => { window.slow++; }; x.send(); \
               fetch('data.json?delay=4000').then((r) => r.json()).then(() => { window.slow++; }); \
               try { new XMLHttpRequest().send(); } catch (e) { window.threw = e.name; } \
               return window.threw; })()",
        )
        .await?;
    ensure!(started == json!("InvalidStateError"), "{started}");
    let during = requests().await?;
    ensure!(during == json!(2), "two requests in flight: {during}");
    h.wait_for(&page, "window.slow === 2", Duration::from_secs(15))
        .await?;
    let after = settled().await?;
    ensure!(after == json!(0), "every request ended: {after}");
    let _ = page.close().await;
    Ok(())
});
