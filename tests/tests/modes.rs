//! Deterministic (replay) mode, repair mode, hostile pages and navigation.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::ensure;
use serde_json::json;
use shepherd_e2e::{Case, case, run_cases};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        ("replay_is_deterministic", replay_is_deterministic),
        (
            "repair_mode_wraps_without_tracing",
            repair_mode_wraps_without_tracing,
        ),
        ("hostile_page_keeps_working", hostile_page_keeps_working),
        ("navigation_loses_nothing", navigation_loses_nothing),
        ("no_enumerable_globals", no_enumerable_globals),
    ];
    run_cases(Mode::Record, cases)
}

case!(replay_is_deterministic, |h| async move {
    let sample = async |h: &shepherd_e2e::Harness| -> anyhow::Result<serde_json::Value> {
        let page = h.open("/det/").await?;
        let v = page.evaluate("window.sample").await?;
        let _ = page.close().await;
        Ok(v)
    };
    // Recorded once (real sources of randomness and time), then replayed twice from the
    // recording by a replay proxy.
    let recorded = sample(&h).await?;
    h.origin.set_mode(Mode::Replay).await?;
    let a = sample(&h).await;
    let b = sample(&h).await;
    h.origin.set_mode(Mode::Record).await?;
    let (a, b) = (a?, b?);
    ensure!(a == b, "two runs differ:\n{a}\n{b}");
    ensure!(
        a["r"][0] != a["r"][1],
        "random values still vary within a run: {a}"
    );
    ensure!(a["tz"] == 0, "UTC offset: {a}");
    ensure!(
        a["dateYear"] == 2023,
        "virtual clock starts at the configured time: {a}"
    );
    ensure!(
        a["ctor"] == "2020-01-02T03:04:05.000Z",
        "local-time constructor in UTC: {a}"
    );
    let uuid = a["uuid"].as_str().unwrap_or("");
    ensure!(
        uuid.len() == 36 && uuid.as_bytes()[14] == b'4',
        "uuid v4 shape: {uuid}"
    );
    // Record mode uses the real sources.
    let c = recorded;
    ensure!(
        c["r"] != a["r"] && c["dateYear"] != 2023,
        "record mode is not deterministic: {c}"
    );
    Ok(())
});

case!(repair_mode_wraps_without_tracing, |h| async move {
    h.origin.set_mode(Mode::Repair).await?;
    h.origin.clear();
    let r = async {
        let page = h.open("/events/").await?;
        h.control(
            &page,
            "C.policy(d => d.kind === 'event:click' && d.user ? 'hold' : 'run')",
        )
        .await?;
        page.click("#b1").await?;
        h.wait_for_control(&page, "C.pending().length >= 1", Duration::from_secs(3))
            .await?;
        let before = page.evaluate("clicks.join(',')").await?;
        let hid = h.control(&page, "C.pending()[0].hid").await?;
        h.control(&page, &format!("C.release({hid})")).await?;
        h.wait_for(&page, "clicks.length >= 3", Duration::from_secs(3))
            .await?;
        let after = page.evaluate("clicks.join(',')").await?;
        let stats = h.control(&page, "C.stats()").await?;
        let _ = page.close().await;
        anyhow::Ok((before, after, stats))
    }
    .await;
    h.origin.set_mode(Mode::Record).await?;
    let (before, after, stats) = r?;
    ensure!(
        before == json!("md-once"),
        "click held in repair mode: {before}"
    );
    ensure!(after == json!("md-once,b1,body"), "released: {after}");
    ensure!(
        stats["mode"] == "repair" && stats["strings"] == 0,
        "nothing traced: {stats}"
    );
    // Other documents may still be uploading (their first batch not in yet): look at the raw
    // batches, not at parsed traces.
    for doc in h.origin.docs() {
        let bytes = String::from_utf8_lossy(&h.origin.trace_bytes(&doc)).into_owned();
        ensure!(
            !bytes.contains("/events/"),
            "repair mode uploaded a trace for the events page ({doc})"
        );
    }
    Ok(())
});

case!(hostile_page_keeps_working, |h| async move {
    let page = h.open("/hostile/").await?;
    page.click("#b").await?;
    // The timer (1), the click (10) and the fetch (100).
    h.wait_for(&page, "hits >= 111", Duration::from_secs(3))
        .await?;
    let v = page.evaluate("[hits, window.wrappedByPage]").await?;
    ensure!(
        v == json!([111, true]),
        "timer, click and fetch all ran: {v}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    ensure!(t.of_kind("timer").len() == 1, "timer traced\n{}", t.dump());
    ensure!(
        t.with_scope("fire:click @ BUTTON[").len() == 1,
        "click traced"
    );
    ensure!(t.of_kind("fetch").len() == 1, "fetch traced");
    Ok(())
});

case!(navigation_loses_nothing, |h| async move {
    h.origin.clear();
    let page = h.open("/navigate/").await?;
    // The page navigates itself after 30 ms; its trace ends with the pagehide action, which
    // only a flush at exit can deliver.
    let t = h
        .origin
        .wait_trace(Duration::from_secs(5), |t| {
            !t.with_scope("fire:pagehide @ Window[0]").is_empty()
        })
        .await?;
    let _ = page.close().await;
    let hide = t.one_with_scope("fire:pagehide @ Window[0]")?;
    ensure!(
        t.reads(hide, "Window[0].pagehide"),
        "pagehide reads its list"
    );
    ensure!(
        t.trace.strings.len() > 3000,
        "all 3000 timer registrations arrived"
    );
    Ok(())
});

case!(no_enumerable_globals, |h| async move {
    let page = h.open("/control/").await?;
    // A fresh about:blank-like realm (iframe without the runtime) gives the baseline keys.
    let extra = page
        .evaluate(
            "(() => { const f = document.createElement('iframe'); document.body.appendChild(f);
               const base = new Set(Object.keys(f.contentWindow));
               const mine = ['ran', 'arm', 'armFetch'];
               return Object.keys(window).filter(k => !base.has(k) && !mine.includes(k) && !/^[0-9]+$/.test(k)); })()",
        )
        .await?;
    let _ = page.close().await;
    ensure!(
        extra == json!([]),
        "runtime added enumerable globals: {extra}"
    );
    let page = h.open("/control/").await?;
    let natives = page
        .evaluate(
            r"[setTimeout, fetch, EventTarget.prototype.addEventListener, XMLHttpRequest.prototype.send,
               Function.prototype.toString]
               .every(f => /\{ \[native code\] \}$/.test(Function.prototype.toString.call(f)))",
        )
        .await?;
    let _ = page.close().await;
    ensure!(natives == json!(true), "wrappers print as native code");
    Ok(())
});
