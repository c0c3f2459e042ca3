//! The explorer end to end: pages with known harmful races, recorded in the good order through
//! the real record stack, explored through a real replay proxy and Chromium; and pages whose
//! races are all harmless.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use serde_json::Value;
use shepherd_browser::Page;
use shepherd_e2e::explore_site::record;
use shepherd_e2e::{Case, Harness, case, patience, run_cases_within};
use shepherd_explore::exploration::{ExploreOptions, explore};
use shepherd_explore::runner::{BrowserSpec, Plan, Timing, Worker, WorkerConfig};
use shepherd_explore_model::outcome::Outcome;
use shepherd_explore_model::report;
use shepherd_explore_model::site::Site;
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        (
            "click_before_the_script_defining_its_handler",
            click_before_script,
        ),
        (
            "a_click_waits_for_the_style_sheet_that_blocks_painting",
            unpainted_click,
        ),
        ("a_link_before_its_router_navigates", link_before_router),
        ("ajax_responses_in_the_wrong_order", ajax_order),
        ("late_initialisation_overwrites_typed_text", late_init),
        ("port_messages_are_reordered_by_their_posts", port_fifo),
        ("load_defines_a_function_three_reversals_deep", load_defines),
        ("same_value_writes_are_harmless", same_value),
        ("timer_ad_hoc_synchronisation_is_harmless", adhoc_timer),
        ("a_load_in_the_documents_first_piece_is_a_step", early_load),
        (
            "the_picture_is_of_the_end_state_while_the_next_page_loads",
            held_picture,
        ),
        ("two_workers_share_an_exploration", two_workers),
        (
            "a_remote_browser_through_an_authenticating_proxy",
            remote_browser,
        ),
        ("an_interrupted_exploration_resumes", resume),
        (
            "under_init_user_the_early_click_is_no_longer_harmful",
            policy_repairs_click,
        ),
    ];
    // The watchdog (times the patience factor) outlasts the exploration budget below.
    run_cases_within(Mode::Record, cases, Duration::from_secs(240))
}

/// A local worker replaying `site`'s recording.
fn local_worker(site: &Site) -> WorkerConfig {
    WorkerConfig {
        recording: site.recording.clone(),
        browser: BrowserSpec::Launch,
        listen: "127.0.0.1:0".parse().unwrap_or_else(|_| unreachable!()),
        advertise: None,
        auth: None,
        cache_dir: None,
        timing: Timing::default(),
    }
}

/// Options for exploring `site` up to `bound` with one local worker, state in `dir`.
fn options(site: &Site, bound: u32, dir: &Path) -> ExploreOptions {
    ExploreOptions {
        bound,
        // A backstop: the cases expect their explorations to complete, which they do well
        // within 150 s on an idle machine; a loaded one gets the patience factor.
        budget: Some(patience(Duration::from_secs(150))),
        max_sequences: None,
        workers: vec![local_worker(site)],
        state_dir: Some(dir.to_path_buf()),
        fresh: true,
        policy: None,
        triage: Default::default(),
        stop: Default::default(),
    }
}

/// Records `path` (loaded, then `act`, then settled) and explores it with `bound`.
async fn record_and_explore(
    h: &Harness,
    path: &str,
    bound: u32,
    act: impl AsyncFn(&Page) -> Result<()>,
) -> Result<(Outcome, Value, tempfile::TempDir)> {
    let site = record(h, path, act).await?;
    let dir = tempfile::tempdir()?;
    let opts = options(&site, bound, dir.path());
    explore_with(site, &opts, dir).await
}

async fn explore_with(
    site: Site,
    opts: &ExploreOptions,
    dir: tempfile::TempDir,
) -> Result<(Outcome, Value, tempfile::TempDir)> {
    let bound = opts.bound;
    let out = explore(site, opts, |_| {}).await?;
    let doc = serde_json::to_value(report::build(
        &out,
        bound,
        &shepherd_races::report::NoSources,
    ))?;
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
    // The outcome refers to files in the state directory: the caller keeps it.
    Ok((out, doc, dir))
}

/// The user of the WordPress-shaped page: count, then greet.
async fn count_then_greet(p: &Page) -> Result<()> {
    // The image the load handler starts must have loaded before the clicks, so the recorded
    // order (and the depth the reversal needs) is the same every run: when it arrived between
    // or after the clicks, the race was found at bound 2. Read in an isolated world, so the
    // wait itself reads nothing the trace would see.
    let start = std::time::Instant::now();
    let loaded =
        "performance.getEntriesByType('resource').some(e => e.name.endsWith('/pixel.gif'))";
    while p.evaluate_isolated(loaded).await? != Value::Bool(true) {
        anyhow::ensure!(
            start.elapsed() < patience(Duration::from_secs(5)),
            "pixel.gif never loaded"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Its load event is the task after the response.
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.click("#a").await?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    p.click("#b").await?;
    Ok(())
}

/// The recording's races with their answers, then the deeper reversals' (races only a
/// reordered execution showed).
fn races(doc: &Value) -> Vec<&Value> {
    ["races", "deeper"]
        .iter()
        .flat_map(|k| doc[*k].as_array().map_or(&[][..], Vec::as_slice))
        .collect()
}

fn harmful<'a>(doc: &'a Value, location: &str) -> Result<&'a Value> {
    races(doc)
        .into_iter()
        .find(|r| r["verdict"] == "harmful" && r["location"].as_str() == Some(location))
        .with_context(|| {
            format!(
                "no harmful race on {location}:\n{}",
                serde_json::to_string_pretty(&races(doc)).unwrap_or_default()
            )
        })
}

/// A harmful race on a location whose name ends with one of `suffixes` (object numbers vary).
fn harmful_on<'a>(doc: &'a Value, suffixes: &[&str]) -> Result<&'a Value> {
    races(doc)
        .into_iter()
        .find(|r| {
            r["verdict"] == "harmful"
                && r["location"]
                    .as_str()
                    .is_some_and(|l| suffixes.iter().any(|s| l.ends_with(s)))
        })
        .with_context(|| format!("no harmful race on a location ending with {suffixes:?}: {doc:#}"))
}

/// A harmful race whose reordered execution throws `message` (which race of the sequence
/// names it depends on the order the reorder phase took its jobs in).
fn harmful_throwing<'a>(doc: &'a Value, message: &str) -> Result<&'a Value> {
    races(doc)
        .into_iter()
        .find(|r| {
            r["verdict"] == "harmful"
                && r["witness"]["exceptions"]["reordered"]
                    .as_array()
                    .is_some_and(|x| {
                        x.iter()
                            .any(|e| e.as_str().is_some_and(|e| e.contains(message)))
                    })
        })
        .with_context(|| {
            format!(
                "no harmful race throwing {message:?}:\n{}",
                serde_json::to_string_pretty(&races(doc)).unwrap_or_default()
            )
        })
}

fn no_harmful(doc: &Value) -> Result<()> {
    if let Some(r) = races(doc).into_iter().find(|r| r["verdict"] == "harmful") {
        bail!(
            "a harmless page got a harmful verdict:\n{}",
            serde_json::to_string_pretty(r).unwrap_or_default()
        );
    }
    Ok(())
}

/// The witness shows both orders (what was moved ahead runs before what it was moved ahead of
/// only in the reordered one), both screenshots on disk, and what changed.
fn check_witness(r: &Value) -> Result<()> {
    let w = &r["witness"];
    ensure!(w.is_object(), "no witness: {r}");
    let recorded = w["orders"]["recorded"]
        .as_array()
        .context("recorded order")?;
    let reordered = w["orders"]["reordered"]
        .as_array()
        .context("reordered order")?;
    let moved = w["moved"].as_array().context("moved events")?;
    let delayed = w["delayed"].as_array().context("delayed events")?;
    let (Some(a), Some(b)) = (delayed.first(), moved.first()) else {
        bail!("the witness names nothing moved ahead of anything: {w}");
    };
    let pos = |o: &[Value], e: &Value| o.iter().position(|x| x == e);
    ensure!(
        pos(recorded, a).is_some() && pos(recorded, a) < pos(recorded, b),
        "the recorded order does not have {a} before {b}: {recorded:?}"
    );
    ensure!(
        pos(reordered, b).is_some()
            && (pos(reordered, a).is_none() || pos(reordered, b) < pos(reordered, a)),
        "the reordered order does not have {b} before {a}: {reordered:?}"
    );
    for side in ["recorded", "reordered"] {
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
    let (out, doc, _dir) = record_and_explore(&h, "/explore/click-before-script/", 1, async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    let r = harmful(&doc, "Global.show")?;
    check_witness(r)?;
    ensure!(r["depth"] == 1, "{r}");
    let ex = r["witness"]["exceptions"]["reordered"].to_string();
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

// The click is moved before the timer defining its handler, which runs while the slow style
// sheet still loads; a user sees nothing of the page until the head's style sheet has loaded:
// the probe lets the held sheet arrive first, then clicks, then runs the timer.
case!(unpainted_click, |h| async move {
    let (out, doc, _dir) = record_and_explore(&h, "/explore/unpainted-click/", 1, async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    harmful(&doc, "Global.show")?;
    let probes: Vec<_> = out
        .runs
        .iter()
        .filter(|r| r.probe.is_some_and(|p| !p.reference))
        .collect();
    ensure!(!probes.is_empty(), "no probe ran");
    for r in probes {
        let at = |pred: &dyn Fn(&str) -> bool| r.steps.iter().position(|s| pred(s));
        let sheet = at(&|s| s.starts_with("net:") && s.contains("style.css"));
        let click = at(&|s| s.starts_with("user:"));
        let script = at(&|s| s.starts_with("cb:") && s.contains("timer"));
        ensure!(
            matches!((sheet, click), (Some(a), Some(b)) if a < b),
            "run {}: the click ran before the style sheet: {:?}",
            r.id,
            r.steps
        );
        ensure!(
            matches!((click, script), (Some(a), Some(b)) if a < b),
            "run {}: the probe's click did not move before the timer: {:?}",
            r.id,
            r.steps
        );
    }
    Ok(())
});

case!(link_before_router, |h| async move {
    let (out, doc, _dir) = record_and_explore(&h, "/explore/link-before-router/", 1, async |p| {
        p.click("#next").await?;
        Ok(())
    })
    .await?;
    // The click before router.js would have left the page: the runtime stopped the
    // navigation, and the order is harmful by it.
    let r = races(&doc)
        .into_iter()
        .find(|r| {
            r["verdict"] == "harmful"
                && r["witness"]["requests"]["reordered"]
                    .as_array()
                    .is_some_and(|x| {
                        x.iter().any(|l| {
                            l.as_str().is_some_and(|l| {
                                l.starts_with("navigate ") && l.ends_with("/next.html")
                            })
                        })
                    })
        })
        .with_context(|| format!("no harmful order that navigates: {doc:#}"))?;
    check_witness(r)?;
    ensure!(
        out.runs.iter().all(|r| r.stopped.is_none()),
        "an execution ended by leaving the page: {:?}",
        out.runs.iter().map(|r| &r.stopped).collect::<Vec<_>>()
    );
    Ok(())
});

case!(ajax_order, |h| async move {
    let (_, doc, _dir) =
        record_and_explore(&h, "/explore/ajax-order/", 1, async |_| Ok(())).await?;
    let r = harmful_on(&doc, &[".childList", ".textContent"])?;
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
    let (_, doc, _dir) = record_and_explore(&h, "/explore/late-init/", 1, async |p| {
        p.focus("#name").await?;
        p.insert_text("alice").await?;
        Ok(())
    })
    .await?;
    let r = harmful_on(&doc, &[".value"])?;
    check_witness(r)?;
    ensure!(r["depth"] == 1);
    let diff = r["witness"]["dom_diff"].as_str().unwrap_or_default();
    ensure!(
        diff.contains(".value=\\\"alice\\\"") || diff.contains(".value=\"alice\""),
        "{diff}"
    );
    Ok(())
});

case!(port_fifo, |h| async move {
    let (_, doc, _dir) = record_and_explore(&h, "/explore/port-fifo/", 1, async |_| Ok(())).await?;
    let r = harmful_on(&doc, &[".childList", ".textContent"])?;
    check_witness(r)?;
    // The other message ends up shown.
    let diff = r["witness"]["dom_diff"].as_str().unwrap_or_default();
    ensure!(
        diff.contains("from the timer") && diff.contains("from DOMContentLoaded"),
        "{diff}"
    );
    Ok(())
});

case!(load_defines, |h| async move {
    let site = record(&h, "/explore/load-defines/", count_then_greet).await?;
    // R4's reorder phase alone (covered races not probed): the order that throws needs three
    // reversals, so bound 2 does not reach it and bound 3 does.
    let r4 = |bound: u32, dir: &Path| {
        let mut o = options(&site, bound, dir);
        o.triage.covered = 0;
        o
    };
    let d2 = tempfile::tempdir()?;
    let (out2, doc2, _d2) = explore_with(site.clone(), &r4(2, d2.path()), d2).await?;
    ensure!(out2.complete, "bound 2 finishes");
    ensure!(
        harmful_throwing(&doc2, "greet is not defined").is_err(),
        "found before bound 3: {doc2:#}"
    );
    let d3 = tempfile::tempdir()?;
    let (out3, doc3, _d3) = explore_with(site.clone(), &r4(3, d3.path()), d3).await?;
    let r = harmful_throwing(&doc3, "greet is not defined")?;
    check_witness(r)?;
    ensure!(r["depth"] == 3, "{r}");
    ensure!(out3.runs.len() > out2.runs.len());
    // Triage with the covered races: the race on greet, covered by the clicks' races, gets a
    // probe of its own and is found at bound 1, listed as a covered race.
    let d1 = tempfile::tempdir()?;
    let o1 = options(&site, 1, d1.path());
    let (_, doc1, _d1) = explore_with(site, &o1, d1).await?;
    let r = harmful_throwing(&doc1, "greet is not defined")?;
    check_witness(r)?;
    ensure!(r["covered"] == true && r["depth"] == 1, "{r}");
    Ok(())
});

case!(same_value, |h| async move {
    let (out, doc, _dir) =
        record_and_explore(&h, "/explore/same-value/", 1, async |_| Ok(())).await?;
    no_harmful(&doc)?;
    ensure!(
        races(&doc)
            .into_iter()
            .any(|r| r["location"] == "Global.theme" && r["verdict"] != "harmful"),
        "the same-value race is listed: {doc:#}"
    );
    ensure!(out.complete);
    Ok(())
});

case!(adhoc_timer, |h| async move {
    let (out, doc, _dir) =
        record_and_explore(&h, "/explore/adhoc-timer/", 1, async |_| Ok(())).await?;
    no_harmful(&doc)?;
    let r = races(&doc)
        .into_iter()
        .find(|r| r["location"] == "Global.data" && r["verdict"] == "harmless")
        .with_context(|| format!("the polling race is explored and harmless: {doc:#}"))?;
    ensure!(
        r["reason"].as_str().is_some_and(|s| s.contains("timer")),
        "judged as timer ad-hoc synchronisation: {r}"
    );
    ensure!(out.complete);
    Ok(())
});

case!(early_load, |h| async move {
    // The style sheet's `load` comes in the task that parses the document's first piece,
    // before a poll of the explorer could install its decider: the runtime holds it from the
    // start (the stack's explorer mode), so every execution has it as a step of its own,
    // never as something that ran at once in some executions and waited in others.
    let (out, _doc, _dir) =
        record_and_explore(&h, "/explore/early-load/", 1, async |_| Ok(())).await?;
    ensure!(!out.runs.is_empty(), "no execution");
    for r in &out.runs {
        ensure!(
            r.steps
                .iter()
                .any(|s| s.contains("/event:load@") && s.contains(">style:")),
            "execution {} has the style sheet's load as a step: {:?}",
            r.id,
            r.steps
        );
    }
    Ok(())
});

case!(held_picture, |h| async move {
    // The worker takes an execution's screenshot while it loads the next execution's page
    // through the same proxy. An execution stopped at its first step leaves the image's
    // response held: its picture must be of that end state (no image), whatever the next page
    // does meanwhile, and the next execution must not see the old page's hold as its own.
    let site = record(&h, "/explore/held-picture/", async |_| Ok(())).await?;
    let ca = std::sync::Arc::new(shepherd_proxy::CertificateAuthority::ephemeral()?);
    let mut cfg = local_worker(&site);
    cfg.timing.max_steps = 1;
    let stopped = Worker::start(&cfg, None, ca.clone()).await?;
    let mut pictures = Vec::new();
    // The recorded order, then plans that take over the first step the worker ran ahead
    // while the last picture was taken.
    let ahead = Plan::Job {
        prefix: Vec::new(),
        seq: Vec::new(),
        enablers: Default::default(),
    };
    for plan in [&Plan::Recorded, &ahead, &ahead] {
        let out = stopped.run(&site, plan).await?;
        ensure!(
            out.steps.len() == 1 && out.steps[0].enabled.len() == 1,
            "one step, from a state where only the document was enabled: {:?}",
            out.steps
        );
        ensure!(
            out.enabled_after.iter().any(|e| e.contains("red.png")),
            "the image is still held at the end: {:?}",
            out.enabled_after
        );
        pictures.push(out.snapshot.screenshot.context("a screenshot")?);
    }
    stopped.stop().await;
    // The same page, every step taken: the image is in the picture.
    let whole = Worker::start(&local_worker(&site), None, ca).await?;
    let out = whole.run(&site, &Plan::Recorded).await;
    whole.stop().await;
    let shown = out?.snapshot.screenshot.context("a screenshot")?;
    ensure!(
        pixel(&shown, 100, 100)? == [255, 0, 0],
        "the released image is red in the picture"
    );
    for (i, p) in pictures.iter().enumerate() {
        ensure!(
            pixel(p, 100, 100)? == [255, 255, 255],
            "execution {i}: the held image is not in the picture"
        );
    }
    Ok(())
});

/// The RGB colour at (`x`, `y`) of an 8-bit RGB or RGBA PNG (what Chromium's screenshots are).
fn pixel(png: &[u8], x: usize, y: usize) -> Result<[u8; 3]> {
    use std::io::Read;
    ensure!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let (mut at, mut width, mut channels, mut data) = (8, 0, 0, Vec::new());
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into()?) as usize;
        let kind = &png[at + 4..at + 8];
        let body = png.get(at + 8..at + 8 + len).context("a truncated chunk")?;
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into()?) as usize;
                ensure!(body[8] == 8 && body[12] == 0, "8-bit, not interlaced");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    c => bail!("colour type {c}"),
                };
            }
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&data[..]).read_to_end(&mut raw)?;
    let stride = width * channels;
    let mut prev = vec![0u8; stride];
    for row in 0..=y {
        let line = raw
            .get(row * (stride + 1)..(row + 1) * (stride + 1))
            .context("a short image")?;
        let mut cur = line[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let (b, c) = (prev[i], if i >= channels { prev[i - channels] } else { 0 });
            let predicted = match line[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((a as u16 + b as u16) / 2) as u8,
                4 => {
                    let p = a as i16 + b as i16 - c as i16;
                    let (pa, pb, pc) = (
                        (p - a as i16).abs(),
                        (p - b as i16).abs(),
                        (p - c as i16).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => bail!("filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(predicted);
        }
        prev = cur;
    }
    let at = x * channels;
    Ok([prev[at], prev[at + 1], prev[at + 2]])
}

case!(two_workers, |h| async move {
    let site = record(&h, "/explore/load-defines/", count_then_greet).await?;
    let dir = tempfile::tempdir()?;
    let mut opts = options(&site, 3, dir.path());
    // The reorder phase's deep sequences spread over both workers (no covered-race probe to
    // find the harmful order first).
    opts.triage.covered = 0;
    opts.workers.push(local_worker(&site));
    let (out, doc, _dir) = explore_with(site, &opts, dir).await?;
    ensure!(out.complete, "two workers finish bound 3");
    let r = harmful_throwing(&doc, "greet is not defined")?;
    ensure!(r["depth"] == 3, "{r}");
    check_witness(r)?;
    Ok(())
});

case!(remote_browser, |h| async move {
    let site = record(&h, "/explore/click-before-script/", async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    // A browser started elsewhere, reached over its DevTools endpoint; the replay proxy asks
    // for credentials, which the worker answers for the page.
    let remote = shepherd_browser::Browser::launch(shepherd_browser::LaunchOptions::default())
        .await
        .context("launching the remote browser")?;
    let dir = tempfile::tempdir()?;
    let mut opts = options(&site, 1, dir.path());
    opts.workers = vec![WorkerConfig {
        browser: BrowserSpec::Connect(remote.ws_url().to_string()),
        auth: Some("explorer:s3cret".into()),
        ..local_worker(&site)
    }];
    let (out, doc, _dir) = explore_with(site, &opts, dir).await?;
    let r = harmful(&doc, "Global.show")?;
    check_witness(r)?;
    ensure!(out.failures == 0, "{} failed executions", out.failures);
    // Connected, not launched: the worker left the remote browser running.
    ensure!(remote.version().await.is_ok(), "the remote browser is gone");
    let _ = remote.close().await;
    Ok(())
});

case!(resume, |h| async move {
    let site = record(&h, "/explore/load-defines/", count_then_greet).await?;
    let dir = tempfile::tempdir()?;
    let mut opts = options(&site, 2, dir.path());
    opts.max_sequences = Some(2);
    let first = explore(site.clone(), &opts, |_| {}).await?;
    ensure!(
        !first.complete && first.runs.len() == 2,
        "{} sequences",
        first.runs.len()
    );
    opts.max_sequences = None;
    opts.fresh = false;
    let (second, doc, _d) = explore_with(site, &opts, dir).await?;
    ensure!(second.complete, "the resumed exploration finishes");
    ensure!(
        second.runs.len() > 2 && second.runs[..2] == first.runs[..],
        "the resumed exploration goes on from the saved one"
    );
    // The first probe's reference ran before the interruption, its other order after: the
    // race is answered from both sessions' runs.
    ensure!(
        races(&doc)
            .into_iter()
            .any(|r| r["probe"] == 0 && r["verdict"] != "not-explored"),
        "a probe begun before the interruption is answered: {doc:#}"
    );
    Ok(())
});

case!(policy_repairs_click, |h| async move {
    // The page and the recording of click_before_script; explored under P_init,user the click
    // waits for the parse, so no order the policy allows calls `show` before it exists.
    let site = record(&h, "/explore/click-before-script/", async |p| {
        p.click("#go").await?;
        Ok(())
    })
    .await?;
    let dir = tempfile::tempdir()?;
    let mut opts = options(&site, 1, dir.path());
    opts.policy =
        Some(shepherd_policies::load("init-user").map_err(|e| anyhow::anyhow!("{}", e.rendered))?);
    let (out, doc, _dir) = explore_with(site, &opts, dir).await?;
    ensure!(out.complete, "bound 1 finishes");
    ensure!(
        doc["policy"] == "init-user",
        "the report names the policy: {doc:#}"
    );
    // The race is still seen (and reversed when the reversal is tried), but under the policy
    // the early click waits for the script, so every order ends as the recorded one; without
    // the policy it is harmful (click_before_script).
    let show = races(&doc)
        .into_iter()
        .find(|r| r["location"] == "Global.show")
        .with_context(|| format!("the race on show is reported: {doc:#}"))?;
    ensure!(
        show["verdict"] != "harmful",
        "the policy repairs the early click: {doc:#}"
    );
    let errors: Vec<&String> = out
        .runs
        .iter()
        .flat_map(|r| &r.snapshot.exceptions)
        .filter(|e| e.contains("show is not defined"))
        .collect();
    ensure!(
        errors.is_empty(),
        "an explored order still throws: {errors:?}"
    );
    Ok(())
});
