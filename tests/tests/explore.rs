//! The explorer end to end: pages with known harmful races, recorded in the good order through
//! the real record stack, explored through a real replay proxy and Chromium; and pages whose
//! races are all harmless.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use shepherd_browser::Page;
use shepherd_e2e::{Case, Harness, case, run_cases_within};
use shepherd_explore::exploration::{ExploreOptions, Outcome, explore};
use shepherd_explore::report;
use shepherd_explore::runner::{BrowserSpec, Timing, WorkerConfig};
use shepherd_explore::site::Site;
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "click_before_the_script_defining_its_handler",
            click_before_script,
        ),
        ("ajax_responses_in_the_wrong_order", ajax_order),
        ("late_initialisation_overwrites_typed_text", late_init),
        ("load_defines_a_function_three_reversals_deep", load_defines),
        ("same_value_writes_are_harmless", same_value),
        ("timer_ad_hoc_synchronisation_is_harmless", adhoc_timer),
    ];
    run_cases_within(Mode::Record, cases, Duration::from_secs(240))
}

/// Records `path` (loaded, then `act`, then settled) and explores it with `bound`.
async fn record_and_explore(
    h: &Harness,
    path: &str,
    bound: u32,
    act: impl AsyncFn(&Page) -> Result<()>,
) -> Result<(Outcome, Value)> {
    let page = h.open(path).await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    act(&page).await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    h.origin.flush().await;
    let site = Site::from_trace(
        h.origin.recording().to_path_buf(),
        h.origin.url(path),
        t.trace,
    );
    ensure!(!site.recorded_order.is_empty(), "nothing to schedule");
    let dir = tempfile::tempdir()?;
    let opts = ExploreOptions {
        bound,
        budget: Some(Duration::from_secs(150)),
        workers: vec![WorkerConfig {
            recording: h.origin.recording().to_path_buf(),
            browser: BrowserSpec::Launch,
            listen: "127.0.0.1:0".parse()?,
            advertise: None,
            auth: None,
            cache_dir: None,
            timing: Timing::default(),
        }],
        state_dir: Some(dir.path().to_path_buf()),
        fresh: true,
        policy: None,
    };
    let out = explore(site, &opts, |_| {}).await?;
    let doc = report::json(&out, bound, &shepherd_races::report::NoSources);
    if std::env::var_os("EXPLORE_DEBUG").is_some() {
        for r in &out.runs {
            eprintln!(
                "run {} depth {} skipped {:?} stopped {:?} ms {} origin {:?}\n  {:?}\n  verdict {:?}",
                r.id,
                r.depth,
                r.skipped,
                r.stopped,
                r.elapsed_ms,
                r.origin.as_ref().map(|o| (
                    o.parent,
                    &o.kind,
                    o.steps,
                    &o.events,
                    o.races
                        .iter()
                        .map(|x| x.location.clone())
                        .collect::<Vec<_>>()
                )),
                r.steps,
                r.verdict.as_ref().map(|v| &v.reason)
            );
            eprintln!(
                "  pairs {:?}",
                r.pairs
                    .iter()
                    .map(|p| (
                        p.first,
                        p.second,
                        p.races
                            .iter()
                            .map(|x| x.location.clone())
                            .collect::<Vec<_>>()
                    ))
                    .collect::<Vec<_>>()
            );
        }
    }
    // Keep the state directory alive as long as the outcome refers to it.
    std::mem::forget(dir);
    Ok((out, doc))
}

fn races(doc: &Value) -> &[Value] {
    doc["races"].as_array().map_or(&[], Vec::as_slice)
}

fn harmful<'a>(doc: &'a Value, location: &str) -> Result<&'a Value> {
    races(doc)
        .iter()
        .find(|r| r["verdict"] == "harmful" && r["location"].as_str() == Some(location))
        .with_context(|| {
            format!(
                "no harmful race on {location}:\n{}",
                serde_json::to_string_pretty(&doc["races"]).unwrap_or_default()
            )
        })
}

fn no_harmful(doc: &Value) -> Result<()> {
    if let Some(r) = races(doc).iter().find(|r| r["verdict"] == "harmful") {
        bail!(
            "a harmless page got a harmful verdict:\n{}",
            serde_json::to_string_pretty(r).unwrap_or_default()
        );
    }
    Ok(())
}

/// The witness shows two different orders of the reversed pair, both screenshots on disk, and
/// what changed.
fn check_witness(r: &Value) -> Result<()> {
    let w = &r["witness"];
    ensure!(w.is_object(), "no witness: {r}");
    let parent = w["orders"]["parent"].as_array().context("parent order")?;
    let child = w["orders"]["child"].as_array().context("child order")?;
    let (a, b) = (&w["reversed"]["first"], &w["reversed"]["second"]);
    let pos = |o: &[Value], e: &Value| o.iter().position(|x| x == e);
    ensure!(
        pos(parent, a) < pos(parent, b),
        "parent order does not have {a} before {b}"
    );
    ensure!(
        pos(child, b).is_some() && (pos(child, a).is_none() || pos(child, b) < pos(child, a)),
        "reversed order does not have {b} before {a}: {child:?}"
    );
    for side in ["parent", "child"] {
        let shot = w["screenshots"][side].as_str().context("screenshot path")?;
        let png = std::fs::read(Path::new(shot)).with_context(|| format!("reading {shot}"))?;
        ensure!(png.starts_with(b"\x89PNG"), "{shot} is not a PNG");
    }
    ensure!(
        r["first"]["source"].is_string() || r["second"]["source"].is_string(),
        "no source position for the racing accesses: {r}"
    );
    Ok(())
}

case!(click_before_script, |h| async move {
    let (out, doc) = record_and_explore(&h, "/explore/click-before-script/", 1, async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    let r = harmful(&doc, "Global.show")?;
    check_witness(r)?;
    ensure!(r["depth"] == 1, "{r}");
    let ex = r["witness"]["exceptions"]["child"].to_string();
    ensure!(ex.contains("show is not defined"), "{ex}");
    ensure!(
        r["witness"]["dom_diff"]
            .as_str()
            .is_some_and(|d| d.contains("shown")),
        "{r}"
    );
    ensure!(out.complete, "bound 1 finishes");
    Ok(())
});

case!(ajax_order, |h| async move {
    let (_, doc) = record_and_explore(&h, "/explore/ajax-order/", 1, async |_| Ok(())).await?;
    let r = races(&doc)
        .iter()
        .find(|r| {
            r["verdict"] == "harmful"
                && r["location"]
                    .as_str()
                    .is_some_and(|l| l.ends_with(".textContent"))
        })
        .with_context(|| format!("no harmful textContent race: {doc:#}"))?;
    check_witness(r)?;
    ensure!(r["depth"] == 1);
    let diff = r["witness"]["dom_diff"].as_str().unwrap_or_default();
    ensure!(
        diff.lines()
            .any(|l| l.starts_with('-') && l.contains("\"new answer\""))
            && diff
                .lines()
                .any(|l| l.starts_with('+') && l.contains("\"old answer\"")),
        "the reversed page ends with the old answer: {diff}"
    );
    Ok(())
});

case!(late_init, |h| async move {
    let (_, doc) = record_and_explore(&h, "/explore/late-init/", 1, async |p| {
        p.focus("#name").await?;
        p.insert_text("alice").await?;
        Ok(())
    })
    .await?;
    let r = races(&doc)
        .iter()
        .find(|r| {
            r["verdict"] == "harmful"
                && r["location"]
                    .as_str()
                    .is_some_and(|l| l.ends_with(".value"))
        })
        .with_context(|| format!("no harmful race on the field's value: {doc:#}"))?;
    check_witness(r)?;
    ensure!(r["depth"] == 1);
    let diff = r["witness"]["dom_diff"].as_str().unwrap_or_default();
    ensure!(
        diff.contains(".value=\\\"alice\\\"") || diff.contains(".value=\"alice\""),
        "{diff}"
    );
    Ok(())
});

case!(load_defines, |h| async move {
    let act = async |p: &Page| {
        p.click("#a").await?;
        tokio::time::sleep(Duration::from_millis(100)).await;
        p.click("#b").await?;
        Ok(())
    };
    let (out2, doc2) = record_and_explore(&h, "/explore/load-defines/", 2, act).await?;
    ensure!(out2.complete, "bound 2 finishes");
    ensure!(
        harmful(&doc2, "Global.greet").is_err(),
        "found before bound 3: {doc2:#}"
    );
    let (out3, doc3) = record_and_explore(&h, "/explore/load-defines/", 3, act).await?;
    let r = harmful(&doc3, "Global.greet")?;
    check_witness(r)?;
    ensure!(r["depth"] == 3, "{r}");
    ensure!(out3.runs.len() > out2.runs.len());
    Ok(())
});

case!(same_value, |h| async move {
    let (out, doc) = record_and_explore(&h, "/explore/same-value/", 1, async |_| Ok(())).await?;
    no_harmful(&doc)?;
    ensure!(
        races(&doc)
            .iter()
            .any(|r| r["location"] == "Global.theme" && r["verdict"] != "harmful"),
        "the same-value race is listed: {doc:#}"
    );
    ensure!(out.complete);
    Ok(())
});

case!(adhoc_timer, |h| async move {
    let (out, doc) = record_and_explore(&h, "/explore/adhoc-timer/", 1, async |_| Ok(())).await?;
    no_harmful(&doc)?;
    let r = races(&doc)
        .iter()
        .find(|r| r["location"] == "Global.data" && r["verdict"] == "harmless")
        .with_context(|| format!("the polling race is explored and harmless: {doc:#}"))?;
    ensure!(
        r["reason"].as_str().is_some_and(|s| s.contains("timer")),
        "judged as timer ad-hoc synchronisation: {r}"
    );
    ensure!(out.complete);
    Ok(())
});
