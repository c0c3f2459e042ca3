//! Repair policies enforced in headless Chromium through `shepherd serve`: one case pair per
//! scenario of EventRaceCommander (the bad order forced by a delayed response or early input
//! over CDP; the error without a policy, gone with the shipped policy that repairs it), and
//! the enforcement itself: postponed input keeps its effects, the spinner, the liveness guard,
//! script holds scoped to the page, reverse mode in front of an HTTPS staging origin.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::{Value, json};
use shepherd_browser::Page;
use shepherd_e2e::{Case, Harness, case, patience, run_cases};
use shepherd_proxy::UpstreamTrust;
use shepherd_runtime::Mode;
use shepherd_session::{Run, Stack, StackOptions};

fn main() -> ExitCode {
    let cases: &[Case] = &[
        ("gallery_a_click_lost_without_policy", gallery_a_plain),
        ("gallery_a_repaired_by_init_user", gallery_a_repaired),
        ("gallery_b_reference_error_without_policy", gallery_b_plain),
        ("gallery_b_repaired_by_init_user", gallery_b_repaired),
        ("gallery_c_type_error_without_policy", gallery_c_plain),
        ("gallery_c_repaired_by_async_user", gallery_c_repaired),
        ("iframe_load_missed_without_policy", iframe_plain),
        ("iframe_load_repaired_by_init_system", iframe_repaired),
        ("ajax_cookie_out_of_order_without_policy", fifo_plain),
        ("ajax_cookie_repaired_by_async_fifo", fifo_repaired),
        (
            "async_init_overwrites_input_without_policy",
            asyncinit_plain,
        ),
        ("async_init_repaired_by_init_user_plus", asyncinit_repaired),
        ("unordered_scripts_fail_without_policy", scripts_plain),
        ("unordered_scripts_repaired_by_async_fifo", scripts_repaired),
        ("postponed_keystroke_lands_in_its_field", keystroke),
        ("postponed_checkbox_click_toggles", checkbox),
        ("postponed_link_click_navigates", link),
        ("spinner_while_input_waits", spinner),
        ("liveness_guard_releases_and_reports", liveness),
        ("waitrec_cascade_stays_a_set_then_goes_passive", cascade),
        ("reverse_https_staging_with_policy", reverse_https),
        ("parser_gates_hold_and_hide_their_markers", parser_gates),
        (
            "parser_resources_no_rule_names_are_left_alone",
            parser_resources_no_rule_names,
        ),
        (
            "forks_from_events_no_rule_names_are_seen",
            forks_from_unnamed_events,
        ),
        (
            "a_parser_async_script_is_waited_for_without_an_observer",
            lazy_parser_script,
        ),
        ("held_scripts_leave_the_page_connections", held_scripts_pool),
        (
            "inserted_scripts_are_asked_for_beside_held_parser_scripts",
            inserted_beside_parser,
        ),
        ("cancelled_events_count_as_arrived", cancelled),
        (
            "a_script_image_is_asked_for_beside_held_parser_scripts",
            head_image,
        ),
        ("unreplayable_key_is_discarded_visibly", unreplayable_key),
        (
            "a_synchronous_request_is_not_waited_for",
            odd_pages_under_shipped_policies,
        ),
        (
            "input_is_not_discarded_for_timers_that_repeat",
            repeating_timers,
        ),
        (
            "held_scripts_of_two_documents_leave_the_page_connections",
            held_scripts_two_documents,
        ),
        (
            "failures_and_scripts_that_never_run_are_not_waited_for",
            failures_under_shipped_policies,
        ),
        (
            "a_single_page_app_loads_under_every_shipped_policy",
            spa_under_shipped_policies,
        ),
        (
            "a_site_loads_under_every_shipped_policy",
            site_under_shipped_policies,
        ),
        (
            "a_module_is_evaluated_once_under_every_shipped_policy",
            modules_under_shipped_policies,
        ),
        (
            "third_party_widgets_load_once_under_every_shipped_policy",
            widgets_under_shipped_policies,
        ),
        (
            "trusted_types_pages_load_under_every_shipped_policy",
            trusted_types_under_shipped_policies,
        ),
        (
            "ad_tags_written_by_document_write_load_under_every_shipped_policy",
            ad_tags_under_shipped_policies,
        ),
    ];
    run_cases(Mode::Repair, cases)
}

const STATUS: &str = "document.getElementById('status').textContent";

async fn with_policy(h: &Harness, policy: Option<&str>) -> anyhow::Result<()> {
    h.origin.set_mode(Mode::Repair).await?;
    h.origin.set_policy(policy).await
}

fn exceptions(page: &shepherd_browser::Page) -> String {
    let all: Vec<String> = page.exceptions().iter().map(|e| format!("{e:?}")).collect();
    all.join("\n")
}

/// How long a check that something does *not* happen waits (a lost click stays lost): a
/// loaded machine only makes such a check easier to pass.
const PAUSE: Duration = Duration::from_millis(300);

/// Waits until `until` holds in `page` (what the repaired order leads to), or, without one,
/// for [`PAUSE`] (the plain order's outcome is that nothing more happens).
async fn settle(h: &Harness, page: &Page, until: Option<&str>) -> anyhow::Result<()> {
    match until {
        Some(expr) => h.wait_for(page, expr, Duration::from_secs(3)).await,
        None => {
            tokio::time::sleep(PAUSE).await;
            Ok(())
        }
    }
}

/// `until` for a status line that must come to read `status`.
fn status_is(status: &str) -> String {
    format!("{STATUS} === {status:?}")
}

/// Gallery (a): the user clicks "Gallery 1" before init.js registered its listener.
async fn gallery_a(
    h: &Harness,
    policy: Option<&str>,
    until: Option<&str>,
) -> anyhow::Result<(Value, Value)> {
    with_policy(h, policy).await?;
    let page = h.open_early("/repair/gallery/a.html").await?;
    h.wait_for(
        &page,
        "!!document.getElementById('g1') && document.readyState === 'loading'",
        Duration::from_secs(3),
    )
    .await?;
    page.click("#g1").await?;
    h.wait_for(
        &page,
        "document.readyState === 'complete'",
        Duration::from_secs(5),
    )
    .await?;
    settle(h, &page, until).await?;
    let status = page.evaluate(STATUS).await?;
    let stats = h.control(&page, "C.stats()").await?;
    let _ = page.close().await;
    Ok((status, stats))
}

case!(gallery_a_plain, |h| async move {
    let (status, _) = gallery_a(&h, None, None).await?;
    ensure!(status == json!("none"), "the early click is lost: {status}");
    Ok(())
});

case!(gallery_a_repaired, |h| async move {
    let (status, stats) = gallery_a(&h, Some("init-user"), Some(&status_is("showing g1"))).await?;
    ensure!(
        status == json!("showing g1"),
        "the click waited for the listener: {status}"
    );
    ensure!(stats["postponed"].as_u64() >= Some(1), "{stats}");
    Ok(())
});

/// Gallery (b): the click comes after init.js but before script.js declared loadThumbs.
async fn gallery_b(
    h: &Harness,
    policy: Option<&str>,
    until: Option<&str>,
) -> anyhow::Result<(Value, String)> {
    with_policy(h, policy).await?;
    let page = h.open_early("/repair/gallery/b.html").await?;
    h.wait_for(
        &page,
        "window.initDone === true && document.readyState === 'loading'",
        Duration::from_secs(3),
    )
    .await?;
    page.click("#g1").await?;
    h.wait_for(
        &page,
        "document.readyState === 'complete'",
        Duration::from_secs(5),
    )
    .await?;
    settle(h, &page, until).await?;
    let status = page.evaluate(STATUS).await?;
    let errors = exceptions(&page);
    let _ = page.close().await;
    Ok((status, errors))
}

case!(gallery_b_plain, |h| async move {
    let (status, errors) = gallery_b(&h, None, None).await?;
    ensure!(
        errors.contains("loadThumbs is not defined"),
        "ReferenceError expected: {errors}"
    );
    ensure!(status == json!("none"), "{status}");
    Ok(())
});

case!(gallery_b_repaired, |h| async move {
    let (status, errors) = gallery_b(&h, Some("init-user"), Some(&status_is("showing g1"))).await?;
    ensure!(errors.is_empty(), "no error with init-user: {errors}");
    ensure!(status == json!("showing g1"), "{status}");
    Ok(())
});

/// Gallery (c): "Delete" clicked while the response for "Gallery 2" is pending.
async fn gallery_c(h: &Harness, policy: Option<&str>) -> anyhow::Result<(Value, String, Value)> {
    with_policy(h, policy).await?;
    let page = h.open("/repair/gallery/c.html").await?;
    page.click("#g1").await?;
    h.wait_for(
        &page,
        &format!("{STATUS} === 'showing g1'"),
        Duration::from_secs(2),
    )
    .await?;
    page.click("#g2").await?;
    page.click(".del").await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let errors = exceptions(&page);
    h.wait_for(
        &page,
        &format!("{STATUS} === 'showing g2'"),
        Duration::from_secs(3),
    )
    .await?;
    let status = page.evaluate(STATUS).await?;
    let stats = h.control(&page, "C.stats()").await?;
    let _ = page.close().await;
    Ok((status, errors, stats))
}

case!(gallery_c_plain, |h| async move {
    let (_, errors, _) = gallery_c(&h, None).await?;
    ensure!(
        errors.contains("TypeError"),
        "thumbs[pos] is undefined: {errors}"
    );
    Ok(())
});

case!(gallery_c_repaired, |h| async move {
    let (status, errors, stats) = gallery_c(&h, Some("async-user")).await?;
    ensure!(
        errors.is_empty(),
        "the Delete click is discarded while g2 is pending: {errors}"
    );
    ensure!(status == json!("showing g2"), "{status}");
    ensure!(stats["policyDiscarded"].as_u64() >= Some(1), "{stats}");
    Ok(())
});

async fn iframe(h: &Harness, policy: Option<&str>, until: Option<&str>) -> anyhow::Result<Value> {
    with_policy(h, policy).await?;
    let page = h.open("/repair/iframe/").await?;
    settle(h, &page, until).await?;
    let status = page.evaluate(STATUS).await?;
    let _ = page.close().await;
    Ok(status)
}

case!(iframe_plain, |h| async move {
    let s = iframe(&h, None, None).await?;
    ensure!(
        s == json!("not adjusted"),
        "the iframe loaded before its listener: {s}"
    );
    Ok(())
});

case!(iframe_repaired, |h| async move {
    let s = iframe(&h, Some("init-system"), Some(&status_is("adjusted"))).await?;
    ensure!(
        s == json!("adjusted"),
        "the load event waited for the page to be parsed: {s}"
    );
    Ok(())
});

async fn fifo(h: &Harness, policy: Option<&str>) -> anyhow::Result<Value> {
    with_policy(h, policy).await?;
    let page = h.open("/repair/fifo/").await?;
    h.wait_for(
        &page,
        &format!("{STATUS} !== 'pending'"),
        Duration::from_secs(3),
    )
    .await?;
    let s = page.evaluate(STATUS).await?;
    let _ = page.close().await;
    Ok(s)
}

case!(fifo_plain, |h| async move {
    let s = fifo(&h, None).await?;
    ensure!(
        s == json!("cookie one"),
        "the first response arrived last and won: {s}"
    );
    Ok(())
});

case!(fifo_repaired, |h| async move {
    let s = fifo(&h, Some("async-fifo")).await?;
    ensure!(
        s == json!("cookie two"),
        "responses handled in request order: {s}"
    );
    Ok(())
});

/// The user types into "from" while its initialization is pending, then again after it.
/// Returns what the page accepted before the initialization, at the end, the final value.
async fn asyncinit(
    h: &Harness,
    policy: Option<&str>,
) -> anyhow::Result<(Value, Value, Value, Value)> {
    with_policy(h, policy).await?;
    let page = h.open("/repair/asyncinit/").await?;
    page.focus("#from").await?;
    page.press_key("x").await?;
    h.wait_for(&page, "window.initialized === true", Duration::from_secs(3))
        .await?;
    let early = page.evaluate("window.typed.slice()").await?;
    let stats = h.control(&page, "C.stats()").await?;
    page.press_key("y").await?;
    h.wait_for(
        &page,
        "window.typed.indexOf('y') >= 0",
        Duration::from_secs(3),
    )
    .await?;
    let typed = page.evaluate("window.typed").await?;
    let value = page
        .evaluate("document.getElementById('from').value")
        .await?;
    let _ = page.close().await;
    Ok((early, typed, value, stats))
}

case!(asyncinit_plain, |h| async move {
    let (early, typed, value, _) = asyncinit(&h, None).await?;
    ensure!(
        early == json!(["x"]),
        "the early keystroke was accepted: {early}"
    );
    ensure!(typed == json!(["x", "y"]), "{typed}");
    ensure!(
        value == json!("Copenhageny"),
        "and then overwritten by the initialization: {value}"
    );
    Ok(())
});

case!(asyncinit_repaired, |h| async move {
    let (early, typed, value, stats) = asyncinit(&h, Some("init-user-plus")).await?;
    ensure!(
        early == json!([]),
        "the early keystroke was discarded: {early}"
    );
    ensure!(typed == json!(["y"]), "the later one landed: {typed}");
    ensure!(value == json!("Copenhageny"), "{value}");
    ensure!(stats["policyDiscarded"].as_u64() >= Some(1), "{stats}");
    Ok(())
});

/// Loads the page whose loader inserts a.js (late) and b.js (which needs a.js), then waits
/// until `until` holds, or (plain) until b.js has failed: its exception is reported
/// asynchronously. The load event already waited for both inserted scripts.
async fn scripts(
    h: &Harness,
    policy: Option<&str>,
    until: Option<&str>,
) -> anyhow::Result<(Value, String)> {
    with_policy(h, policy).await?;
    let page = h.open("/repair/scripts/").await?;
    let settled = match until {
        Some(expr) => h.wait_for(&page, expr, Duration::from_secs(3)).await,
        None => {
            let deadline = std::time::Instant::now() + patience(Duration::from_secs(3));
            while !exceptions(&page).contains("s_att") && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // A status b.js would set after the error comes in its own task: give it time.
            tokio::time::sleep(PAUSE).await;
            Ok(())
        }
    };
    let s = page.evaluate(STATUS).await?;
    let errors = exceptions(&page);
    let _ = page.close().await;
    settled?;
    Ok((s, errors))
}

case!(scripts_plain, |h| async move {
    let (s, errors) = scripts(&h, None, None).await?;
    ensure!(
        errors.contains("s_att is not defined"),
        "b.js ran first: {errors}"
    );
    ensure!(s == json!("pending"), "{s}");
    Ok(())
});

case!(scripts_repaired, |h| async move {
    let (s, errors) = scripts(
        &h,
        Some("async-fifo"),
        Some(&format!("{STATUS}.startsWith('ok')")),
    )
    .await?;
    ensure!(errors.is_empty(), "{errors}");
    // The proxy held b.js for this page; the page sees its own URL (no hold marker).
    ensure!(s == json!("ok a,b b.js"), "{s}");
    Ok(())
});

/// Writes `text` as a policy file in a fresh directory; returns the directory (kept alive by
/// the caller) and the file's path.
fn policy_file(name: &str, text: &str) -> anyhow::Result<(tempfile::TempDir, String)> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join(name);
    std::fs::write(&file, text)?;
    let path = file.to_str().context("path")?.to_string();
    Ok((dir, path))
}

/// Fails when the page's repair figures hold an incident: something waited for the liveness
/// limit.
async fn without_incidents(h: &Harness, page: &Page) -> anyhow::Result<()> {
    let figures = h.control(page, "C.repair()").await?;
    ensure!(
        figures["incidents"]
            .as_array()
            .is_some_and(|a| a.is_empty()),
        "nothing waited for the liveness limit: {figures}"
    );
    Ok(())
}

// The parser's script, image and inline script, each held by the proxy until the one before
// it ran (the page's resource timing shows the marked URLs); what the page reads of its own
// URLs and attributes shows no marker.
case!(parser_gates, |h| async move {
    let (_dir, file) = policy_file(
        "in-order.policy",
        "on fork script, inline-script, img as v then next(v)\n\
         template next(u):\n  on fork script, inline-script, img as w until arrived(u) once then order(u, w)\n",
    )?;
    let page = open_until_done(&h, Some(&file), "/repair/parser/").await?;
    let seen = page.evaluate(STATUS).await?;
    let text = seen.as_str().context("status text")?.to_string();
    ensure!(!text.contains("__shepherd_hold"), "a marker shows: {text}");
    let list: Vec<String> = serde_json::from_str(&text)?;
    ensure!(list[0].ends_with("/repair/parser/app.js?v=2"), "{list:?}");
    ensure!(list[1] == "app.js?v=2", "{list:?}");
    ensure!(
        list[3] == "pic.svg" && list[5] == "pic.svg 1x, pic.svg?big=1 2x",
        "{list:?}"
    );
    ensure!(
        list[7] == "1",
        "the inline script keeps only its own attribute: {list:?}"
    );
    let marked = page
        .evaluate(
            "performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('__shepherd_hold')).length",
        )
        .await?;
    ensure!(
        marked.as_u64() >= Some(2),
        "the script and the image were requested with their hold markers: {marked}"
    );
    ensure!(page.evaluate("window.appRan").await? == json!(true));
    without_incidents(&h, &page).await?;
    let _ = page.close().await;
    Ok(())
});

/// Opens the page of two parser-blocking scripts, an async one, an inline script and an image
/// under a policy file of `text`; returns the page's status and how many events the policy saw
/// created.
async fn forks_under(h: &Harness, text: &str) -> anyhow::Result<(Value, Value)> {
    let (_dir, file) = policy_file("named.policy", text)?;
    let page = open_until_done(h, Some(&file), "/repair/unnamed/").await?;
    let status = page.evaluate(STATUS).await?;
    let figures = h.control(&page, "C.repair()").await?;
    without_incidents(h, &page).await?;
    let _ = page.close().await;
    Ok((status, figures["forked"].clone()))
}

// A policy about async scripts sees the async script created and nothing else of the parser's
// (no rule can name a parser-blocking or inline script, or an image): the runtime leaves
// those alone. Naming them, the policy sees each created.
case!(parser_resources_no_rule_names, |h| async move {
    let all_ran = json!("true,true,true,true");
    let (status, forked) = forks_under(
        &h,
        "on fork script async as v until parsed then wait(v)\n\
         template wait(u):\n  discard user until arrived(u)\n",
    )
    .await?;
    ensure!(status == all_ran, "{status}");
    ensure!(forked == json!(1), "only the async script: {forked}");
    let (status, forked) = forks_under(
        &h,
        "on fork script, inline-script, img as v until parsed then wait(v)\n\
         template wait(u):\n  discard user until arrived(u)\n",
    )
    .await?;
    ensure!(status == all_ran, "{status}");
    ensure!(
        forked == json!(5),
        "three scripts, the inline script and the image: {forked}"
    );
    Ok(())
});

// Events no rule can name (a parser script's `load`, the document's `readystatechange`, a
// request's first body bytes) run their listeners without an action of their own; the timers
// those listeners start are still seen created, so a click while they are pending is
// discarded.
case!(forks_from_unnamed_events, |h| async move {
    let (_dir, file) = policy_file(
        "timers.policy",
        "on fork timer as t until parsed then wait(t)\n\
         template wait(u):\n  discard user until arrived(u)\n",
    )?;
    let page = open_until_done(&h, Some(&file), "/repair/ignored/").await?;
    let status = page.evaluate(STATUS).await?;
    ensure!(
        status == json!("true,number,number,number"),
        "the three timers started: {status}"
    );
    page.click("#b").await?;
    tokio::time::sleep(PAUSE).await;
    let figures = h.control(&page, "C.repair()").await?;
    ensure!(
        page.evaluate("window.clicks").await? == json!(0),
        "the click waits for the timers: {figures}"
    );
    ensure!(
        figures["forked"] == json!(4) && figures["discarded"].as_u64() >= Some(1),
        "the request and the three timers seen created, the click discarded: {figures}"
    );
    ensure!(
        figures["leftAlone"].as_u64() >= Some(3),
        "the script's load, readystatechange and the request's progress were left alone: {figures}"
    );
    without_incidents(&h, &page).await?;
    let _ = page.close().await;
    Ok(())
});

// init-user-plus names the parser's async scripts and nothing else of the parser's: no
// observer watches the document, and the async script still loading after parsing is forked
// when the policy next looks (the DOMContentLoaded it sees begin), so a click before the
// script ran is discarded and one after it counts.
case!(lazy_parser_script, |h| async move {
    with_policy(&h, Some("init-user-plus")).await?;
    let page = h.open_early("/repair/lazy/").await?;
    h.wait_for(&page, &status_is("parsed"), Duration::from_secs(8))
        .await?;
    page.click("#b").await?;
    ensure!(
        page.evaluate("window.lateRan === undefined").await? == json!(true),
        "the click came before the script (delayed 5 s) ran"
    );
    tokio::time::sleep(PAUSE).await;
    let figures = h.control(&page, "C.repair()").await?;
    ensure!(
        page.evaluate("window.clicks").await? == json!(0)
            && figures["discarded"].as_u64() >= Some(1),
        "the click while the async script loads is discarded: {figures}"
    );
    ensure!(
        figures["forked"] == json!(1),
        "the async script seen created: {figures}"
    );
    h.wait_for(&page, "window.lateRan === true", Duration::from_secs(10))
        .await?;
    page.click("#b").await?;
    h.wait_for(&page, "window.clicks === 1", Duration::from_secs(3))
        .await
        .context("the click after the script ran counts")?;
    without_incidents(&h, &page).await?;
    let _ = page.close().await;
    Ok(())
});

/// Opens `path` under `policy` and waits until its status line no longer reads `pending`.
async fn open_until_done(h: &Harness, policy: Option<&str>, path: &str) -> anyhow::Result<Page> {
    with_policy(h, policy).await?;
    let page = h.open(path).await?;
    h.wait_for(
        &page,
        &format!("{STATUS} !== 'pending'"),
        patience(Duration::from_secs(30)),
    )
    .await?;
    Ok(page)
}

// Eight parser-blocking scripts under the shipped network FIFO policy (async-fifo):
// the second waits for the request the first sends. Over HTTP/1.1 the browser has six
// connections to the host and the proxy holds the scripts' answers; had it held more than
// leaves the page a connection, the request would queue behind them until the liveness limit
// (an incident). The FIFO order still holds: the parser runs the scripts in document order.
case!(held_scripts_pool, |h| async move {
    let page = open_until_done(&h, Some("async-fifo"), "/repair/pool/").await?;
    without_incidents(&h, &page).await?;
    let ran: Vec<String> =
        serde_json::from_str(page.evaluate(STATUS).await?.as_str().context("status")?)?;
    ensure!(
        ran == ["s1", "data", "s2", "s3", "s4", "s5", "s6", "s7", "s8"],
        "the request's answer before the second script, the scripts in order: {ran:?}"
    );
    let _ = page.close().await;
    Ok(())
});

// The first script inserts four scripts, then sends a request; under a network FIFO policy the
// parser's next scripts wait for it and the proxy holds them. Chromium does not send a
// low-priority request (an inserted script) to an HTTP/1.1 host while the head's scripts are
// in flight: the inserted scripts, which the request waits for, would wait for the held
// scripts (10 s, five incidents). The runtime asks for them at high priority. The origin's
// four HTTP/1.1 places go to the first parser script still held and the first three inserted
// ones (the parser's later scripts wait behind the first anyway); the fourth inserted script
// may find them taken and go through, so its place in the order is not checked.
case!(inserted_beside_parser, |h| async move {
    let page = open_until_done(&h, Some("async-fifo"), "/repair/pool-mixed/").await?;
    without_incidents(&h, &page).await?;
    let ran: Vec<String> =
        serde_json::from_str(page.evaluate(STATUS).await?.as_str().context("status")?)?;
    let at = |name: &str| ran.iter().position(|r| r == name);
    let mut all = ran.clone();
    all.sort();
    ensure!(
        all == [
            "auto", "data", "i1", "i2", "i3", "i4", "null", "s1", "s2", "s3", "s4", "s5", "s6",
            "s7"
        ] && at("s1") == Some(0),
        "every script and the request ran, the first script first: {ran:?}"
    );
    ensure!(
        ["i1", "i2", "i3"].windows(2).all(|w| at(w[0]) < at(w[1]))
            && at("data") < at("s2")
            && ["s2", "s3", "s4", "s5", "s6", "s7"]
                .windows(2)
                .all(|w| at(w[0]) < at(w[1])),
        "the inserted scripts held in order, the request's answer before the parser's next \
         script: {ran:?}"
    );
    // What the page reads of an inserted script's priority: it set none.
    ensure!(
        ran[ran.len() - 2..] == ["null", "auto"],
        "the page reads no priority it did not set: {ran:?}"
    );
    let _ = page.close().await;
    Ok(())
});

// A script in the head loads an image, and a policy orders the next parser script after that
// load: the proxy holds the parser's scripts meanwhile. Chromium does not send a low-priority
// request to an HTTP/1.1 host while the head's scripts are in flight, so the image's request
// would wait for the held script, which waits for the image (10 s, an incident). The runtime
// asks for it at high priority; the page reads no priority it did not set.
case!(head_image, |h| async move {
    let (_dir, file) = policy_file(
        "fifo.policy",
        "on fork script, img as v then next(v)\n\
         template next(u):\n  on fork script, img as w until arrived(u) once then order(u, w)\n",
    )?;
    let page = open_until_done(&h, Some(&file), "/repair/head-image/").await?;
    without_incidents(&h, &page).await?;
    let ran = page.evaluate(STATUS).await?;
    ensure!(
        ran == json!(r#"["b1","img","b2","b3","null","auto"]"#),
        "the image's load before the next script; no priority the page did not set: {ran}"
    );
    let _ = page.close().await;
    Ok(())
});

/// Loads `path` under each shipped policy: it loads without an incident, and what it ran (its
/// status line, a JSON list of names) is `all` in some order; `check` sees each policy's order.
async fn under_shipped_policies(
    h: &Harness,
    path: &str,
    all: &[&str],
    check: impl Fn(&str, &[String]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for &(policy, _) in shepherd_policies::SHIPPED {
        let page = open_until_done(h, Some(policy), path)
            .await
            .with_context(|| format!("{policy}: the page loads"))?;
        without_incidents(h, &page)
            .await
            .with_context(|| policy.to_string())?;
        let ran: Vec<String> =
            serde_json::from_str(page.evaluate(STATUS).await?.as_str().context("status")?)?;
        let mut sorted = ran.clone();
        sorted.sort();
        ensure!(
            sorted == all,
            "{policy}: what runs in a browser ran, nothing else: {ran:?}"
        );
        check(policy, &ran)?;
        let _ = page.close().await;
    }
    Ok(())
}

// A site's usual page under every shipped policy over HTTP/1.1: an analytics loader inserting
// an async script from an inline script in the head, parser-blocking, deferred and async
// scripts, a script written with document.write, images (one made by a script), an iframe, a
// timer, fetch and XHR. Everything runs and nothing waits for the liveness limit. Under
// async-fifo the parser's first script waits for the analytics script inserted before it,
// which Chromium would not send while that held script is in flight (a 10 s incident before
// the runtime asked for it at high priority).
case!(site_under_shipped_policies, |h| async move {
    let all = [
        "analytics",
        "app",
        "app-timer",
        "config",
        "fetch",
        "legacy",
        "loaded",
        "timer",
        "vendor",
        "widget",
        "widget-part",
        "xhr",
    ];
    under_shipped_policies(&h, "/repair/site/", &all, |policy, ran| {
        let at = |name: &str| ran.iter().position(|r| r == name);
        ensure!(
            policy != "async-fifo" || at("analytics") < at("vendor"),
            "{policy}: the network's order: {ran:?}"
        );
        Ok(())
    })
    .await
});

// A single-page app's page under every shipped policy: a module graph (preloaded, with a
// dynamic import and a fetch), a loader keeping its inserted scripts in order, an animation
// frame and an idle callback, and scripts the browser does not run (`nomodule`, a VBScript).
// Before the runtime judged scripts as the browser does, the `nomodule` script counted as a
// network fork that never arrived, and async-fifo held the app's fetch until the liveness
// limit.
case!(spa_under_shipped_policies, |h| async move {
    let all = ["a", "b", "idle", "items", "lazy", "loaded", "main:2", "raf"];
    under_shipped_policies(&h, "/repair/spa/", &all, |_, _| Ok(())).await
});

// Third-party widgets under every shipped policy: a tag manager's cascade of async scripts
// and tracking pixels, a jQuery-like library (ready, JSONP reading its callback from its own
// `src`, a script fetched by XHR and evaluated), a string timer, an interval cleared after
// three ticks, `<picture>` and `srcset`, a preloaded script, `decode()`, an observer, a
// message, `document.fonts.ready`, and a loader that inserts a script only when
// `script[src="…"]` finds none. Before, under async-fifo the inserted script kept its hold
// marker in its `src` attribute, so the loader never found it and inserted it three times,
// and the page did not find the parser's own script by its URL either.
case!(widgets_under_shipped_policies, |h| async move {
    let all = [
        "decoded",
        "evald",
        "fonts",
        "getScript",
        "interval x3",
        "jsonp data",
        "late",
        "lib",
        "lib found",
        "loaded",
        "message",
        "micro",
        "ready",
        "seen",
        "string timer",
        "tag a",
        "tag b",
        "tags",
        "widget",
    ];
    under_shipped_policies(&h, "/repair/widgets/", &all, |_, _| Ok(())).await
});

// A page under Trusted Types (`require-trusted-types-for 'script'` in a `<meta>` element, and
// again as a header, in force before the runtime runs), under every shipped policy: a script
// inserted with a TrustedScriptURL, a parser script and markup written as TrustedHTML all
// run, nothing waits for the liveness limit, and the runtime throws nothing. Under async-fifo the inserted script's request
// carries its hold marker: the runtime's own Trusted Types policy vouches for the marked URL
// (for the header, the proxy adds that policy's name to the page's `trusted-types`). Before,
// the runtime set the marked URL as a string: the page's appendChild threw a TypeError, the
// script never ran and the parser's next script waited 10 s for it.
case!(trusted_types_under_shipped_policies, |h| async move {
    let header = "require-trusted-types-for%20%27script%27%3B%20trusted-types%20app";
    for path in [
        "/repair/tt/".to_string(),
        format!("/repair/tt/?csp={header}"),
    ] {
        for &(policy, _) in shepherd_policies::SHIPPED {
            let page = open_until_done(&h, Some(policy), &path).await?;
            without_incidents(&h, &page)
                .await
                .with_context(|| format!("{policy} {path}"))?;
            ensure!(
                page.exceptions().is_empty(),
                "{policy} {path}: {}",
                exceptions(&page)
            );
            let ran: Vec<String> =
                serde_json::from_str(page.evaluate(STATUS).await?.as_str().context("status")?)?;
            let gated = policy == "async-fifo";
            let mut want = vec!["inserted", "loaded", "parser", "written"];
            if gated {
                want.insert(1, "inserted marked");
            }
            ensure!(ran == want, "{policy} {path}: {ran:?}");
            let _ = page.close().await;
        }
    }
    Ok(())
});

// Ad tags under every shipped policy: scripts written by document.write, the first writing a
// third (the parser runs it before the second), a write from an async script (the browser
// ignores it), then a request. Everything runs in the parser's order and nothing waits for
// the liveness limit. Before, under async-fifo the third script was held 10 s: the network
// FIFO ordered it after the second, which the parser runs only after it. And the script the
// async script wrote counted as a fork that never arrived, so the FIFO held the request after
// it until the limit.
case!(ad_tags_under_shipped_policies, |h| async move {
    let all = [
        "ad1",
        "ad1 end",
        "ad2",
        "ad3",
        "ad4",
        "after writes",
        "async writer",
        "loaded",
        "xhr",
    ];
    under_shipped_policies(&h, "/repair/adtags/", &all, |policy, ran| {
        let parser: Vec<&String> = ran
            .iter()
            .filter(|r| {
                ["ad1", "ad1 end", "ad2", "ad3", "ad4", "after writes"].contains(&r.as_str())
            })
            .collect();
        ensure!(
            parser == ["ad1", "ad1 end", "ad3", "ad2", "after writes", "ad4"],
            "{policy}: the parser's order: {ran:?}"
        );
        Ok(())
    })
    .await
});

// Modules under every shipped policy: a module is known by its URL, so one that a second
// module imports, that two script tags name, that a script inserts and that document.write
// writes is evaluated once; a `DATA:` script runs its source. Before, the gates of async-fifo
// (which may postpone parser scripts) put a marker in the URL of each module's tag, inserted
// module and written one, and each became a module of its own: `a.js` ran four times. The
// `DATA:` script's marker (an upper-case scheme) became part of its source, a SyntaxError.
case!(modules_under_shipped_policies, |h| async move {
    let all = ["a", "b1", "c1", "data", "loaded"];
    under_shipped_policies(&h, "/repair/modules/", &all, |_, _| Ok(())).await
});

// What fails or never runs, under every shipped policy: scripts, an image and a fetch that
// answer 404, an inserted script removed at once (it still runs), a script in an element that
// never enters the document, one in an element that enters it later, a cleared timer, an
// aborted XHR, an XHR to a closed port. Nothing waits for the liveness limit. Before, the
// script that never entered the document counted as a fork when it was put in its element,
// never arrived, and async-fifo held the parser's next script 10 s.
case!(failures_under_shipped_policies, |h| async move {
    let all = [
        "fetch 404",
        "gone ran",
        "img 404",
        "inserted 404",
        "last",
        "later ran",
        "loaded",
        "ok",
        "parser 404",
        "xhr error",
    ];
    under_shipped_policies(&h, "/repair/broken/", &all, |_, _| Ok(())).await
});

// The same page twice, in two frames of one page: two documents hold their scripts on one
// host, whose six HTTP/1.1 connections they share. The cap counts the holds of every document
// on the origin, so each frame's request still gets a connection; without it both requests
// waited for the liveness limit, which let the scripts go before the answers.
case!(held_scripts_two_documents, |h| async move {
    let page = open_until_done(&h, Some("async-fifo"), "/repair/pool-frames/").await?;
    let frames: Vec<String> =
        serde_json::from_str(page.evaluate(STATUS).await?.as_str().context("status")?)?;
    let order = r#"["s1","data","s2","s3","s4","s5","s6","s7","s8"]"#;
    ensure!(
        frames == [order, order],
        "in each frame the request's answer before the second script: {frames:?}"
    );
    let _ = page.close().await;
    Ok(())
});

// A page that polls for as long as it is open (a timer that sets itself again, and a slider
// whose next slide is a request sent from a timer). init-user-plus and async-user wait for the
// asynchronous work a page starts; a timeout that two timer callbacks led to repeats work and
// counts as an interval, which they do not wait for, so once both chains repeat a click counts.
// Before, they discarded every click until the liveness limit stopped the rule (the
// EventRaceCommander paper's caveat about sliders).
case!(repeating_timers, |h| async move {
    for policy in ["init-user-plus", "async-user"] {
        let page = open_until_done(&h, Some(policy), "/repair/poll/").await?;
        h.wait_for(
            &page,
            "window.ticks >= 4 && window.slides >= 3",
            Duration::from_secs(5),
        )
        .await?;
        page.click("#b").await?;
        h.wait_for(&page, "window.clicks === 1", Duration::from_secs(3))
            .await
            .with_context(|| format!("{policy}: the click counts"))?;
        let figures = h.control(&page, "C.repair()").await?;
        ensure!(
            figures["discarded"] == json!(0),
            "{policy}: nothing discarded: {figures}"
        );
        let _ = page.close().await;
    }
    Ok(())
});

// Old and odd but real, under every shipped policy: a synchronous XHR in the head, a script
// that writes a script, an inserted `defer` script, a `srcdoc` frame and inserted scripts kept
// in order (`async = false`). Before, the synchronous request counted as a network fork, but
// its events run inside send() and never arrive: async-fifo held the next parser script 10 s.
case!(odd_pages_under_shipped_policies, |h| async move {
    let all = [
        "inserted-defer",
        "o1",
        "o2",
        "o3",
        "srcdoc",
        "sync 200",
        "writer",
        "written",
    ];
    under_shipped_policies(&h, "/repair/odd/", &all, |policy, ran| {
        let at = |name: &str| ran.iter().position(|r| r == name);
        ensure!(
            at("sync 200") == Some(0)
                && at("writer") < at("written")
                && at("o1") < at("o2")
                && at("o2") < at("o3"),
            "{policy}: the browser's own order: {ran:?}"
        );
        Ok(())
    })
    .await
});

// A click waits for an XHR the page aborted and an image it removed: both count as arrived,
// so the click runs at once instead of at the liveness limit (which would report an incident:
// the check does not depend on how long the click took).
case!(cancelled, |h| async move {
    let (_dir, file) = policy_file(
        "wait.policy",
        "option max-delay 6s\non fork xhr, img as v then wait-for(v)\n\
         template wait-for(v):\n  postpone click until arrived(v)\n",
    )?;
    with_policy(&h, Some(&file)).await?;
    // The removed image's request goes on (it delays the window's load, not the click).
    let page = h.open_early("/repair/cancel/").await?;
    h.wait_for(
        &page,
        "!!document.getElementById('status') && document.readyState !== 'loading'",
        Duration::from_secs(5),
    )
    .await?;
    page.click("#go").await?;
    h.wait_for(
        &page,
        &format!("{STATUS} === 'clicked'"),
        Duration::from_secs(8),
    )
    .await?;
    without_incidents(&h, &page).await?;
    let _ = page.close().await;
    Ok(())
});

// Tab moves focus, which a replay cannot re-create: the held key press is discarded visibly
// (counted, the spinner shown) instead of being replayed wrongly.
case!(unreplayable_key, |h| async move {
    let page = early_input(&h, "init-user").await?;
    page.focus("#field").await?;
    page.press_key("Tab").await?;
    h.wait_for(
        &page,
        "window.lateDone === true && document.readyState === 'complete'",
        Duration::from_secs(4),
    )
    .await?;
    let start = std::time::Instant::now();
    let stats = loop {
        let stats = h.control(&page, "C.stats()").await?;
        if stats["policyDiscarded"].as_u64() >= Some(1) {
            break stats;
        }
        ensure!(
            start.elapsed() < patience(Duration::from_secs(3)),
            "the Tab was not discarded: {stats}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let seen = page.evaluate("window.seen").await?;
    let _ = page.close().await;
    ensure!(stats["postponed"].as_u64() >= Some(1), "{stats}");
    ensure!(
        seen == json!([]),
        "no copy of the discarded key press was dispatched: {seen}"
    );
    Ok(())
});

/// Input on /repair/input/ while late.js (parser-blocking, delayed) still loads.
async fn early_input(h: &Harness, policy: &str) -> anyhow::Result<shepherd_browser::Page> {
    with_policy(h, Some(policy)).await?;
    let page = h.open_early("/repair/input/").await?;
    h.wait_for(
        &page,
        "!!document.getElementById('go') && document.readyState === 'loading'",
        Duration::from_secs(3),
    )
    .await?;
    Ok(page)
}

case!(keystroke, |h| async move {
    let page = early_input(&h, "init-user").await?;
    page.focus("#field").await?;
    page.press_key("a").await?;
    ensure!(
        page.evaluate("document.getElementById('field').value")
            .await?
            == json!(""),
        "held while loading"
    );
    h.wait_for(
        &page,
        "window.lateDone === true && document.readyState === 'complete'",
        Duration::from_secs(4),
    )
    .await?;
    h.wait_for(
        &page,
        "document.getElementById('field').value === 'a'",
        Duration::from_secs(1),
    )
    .await?;
    let seen = page.evaluate("window.seen").await?;
    ensure!(
        seen == json!(["keydown:a", "insertText:a", "keyup:a"]),
        "events in order, typed at the caret: {seen}"
    );
    let _ = page.close().await;
    Ok(())
});

case!(checkbox, |h| async move {
    let page = early_input(&h, "init-user").await?;
    page.click("#box").await?;
    ensure!(
        page.evaluate("document.getElementById('box').checked")
            .await?
            == json!(false),
        "held"
    );
    h.wait_for(
        &page,
        "document.getElementById('box').checked === true",
        Duration::from_secs(4),
    )
    .await?;
    let seen = page.evaluate("window.seen").await?;
    ensure!(
        seen == json!(["change:true"]),
        "the page's listener saw the toggle: {seen}"
    );
    let _ = page.close().await;
    Ok(())
});

case!(link, |h| async move {
    let page = early_input(&h, "init-user").await?;
    page.click("#go").await?;
    h.wait_for(
        &page,
        "location.pathname.endsWith('/target.html')",
        Duration::from_secs(5),
    )
    .await?;
    let _ = page.close().await;
    Ok(())
});

const SPINNER: &str = "(() => { const s = document.querySelector('shepherd-busy'); return !!s && getComputedStyle(s).position === 'fixed' && s.getAttribute('role') === 'status' && document.body.getAttribute('aria-busy') === 'true'; })()";

case!(spinner, |h| async move {
    let page = early_input(&h, "init-user").await?;
    let before = page
        .evaluate("document.getElementById('go').getBoundingClientRect().top")
        .await?;
    page.click("#box").await?;
    h.wait_for(&page, SPINNER, Duration::from_secs(1))
        .await
        .context("spinner shown while the click waits")?;
    let during = page
        .evaluate("document.getElementById('go').getBoundingClientRect().top")
        .await?;
    ensure!(before == during, "no layout shift: {before} vs {during}");
    h.wait_for(
        &page,
        "document.getElementById('box').checked === true",
        Duration::from_secs(4),
    )
    .await?;
    h.wait_for(
        &page,
        "!document.querySelector('shepherd-busy') && !document.body.hasAttribute('aria-busy')",
        Duration::from_secs(1),
    )
    .await
    .context("spinner gone once released")?;
    let _ = page.close().await;
    // The same policy with the spinner off.
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("quiet.policy");
    std::fs::write(&file, "option spinner off\npostpone user until parsed\n")?;
    let page = early_input(&h, file.to_str().context("path")?).await?;
    page.click("#box").await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    ensure!(
        page.evaluate("!!document.querySelector('shepherd-busy')")
            .await?
            == json!(false),
        "spinner off"
    );
    let _ = page.close().await;
    Ok(())
});

case!(liveness, |h| async move {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("stuck.policy");
    std::fs::write(
        &file,
        "option max-delay 600ms\npostpone click until js \"window.never === true\"\n",
    )?;
    with_policy(&h, Some(file.to_str().context("path")?)).await?;
    let page = h.open("/repair/input/").await?;
    let t0 = std::time::Instant::now();
    page.click("#box").await?;
    h.wait_for(
        &page,
        "document.getElementById('box').checked === true",
        Duration::from_secs(3),
    )
    .await?;
    let waited = t0.elapsed();
    ensure!(
        waited >= Duration::from_millis(550),
        "held until the limit: {waited:?}"
    );
    let start = std::time::Instant::now();
    loop {
        let stats = h.origin.repair_stats().await;
        if let Some(p) = stats.iter().find(|p| p.page.ends_with("/repair/input/"))
            && let Some(i) = p.incidents.first()
        {
            ensure!(i.policy == "stuck" && i.rule == "stuck:2", "{i:?}");
            ensure!(i.event.starts_with("click"), "{i:?}");
            ensure!(i.delay_ms >= 550.0, "{i:?}");
            break;
        }
        ensure!(
            start.elapsed() < patience(Duration::from_secs(3)),
            "no incident reported: {stats:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = page.close().await;
    Ok(())
});

// init-user-plus on a page with sixteen timers in flight during loading: without the set
// semantics each fork doubled the WAITREC instances and the runtime hit its cap (an incident,
// and rules stopped being added, so the policy stopped protecting the page).
case!(cascade, |h| async move {
    with_policy(&h, Some("init-user-plus")).await?;
    let page = h.open("/repair/cascade/").await?;
    h.wait_for(
        &page,
        &format!("{STATUS} === 'done'"),
        Duration::from_secs(5),
    )
    .await?;
    without_incidents(&h, &page).await?;
    // Once nothing can be held any more the controller goes passive, and a listener it
    // wrapped while the policy was active runs without the runtime making an action of it.
    let start = std::time::Instant::now();
    let stats = loop {
        let stats = h.control(&page, "C.stats()").await?;
        if stats["repairActive"] == json!(false) {
            break stats;
        }
        ensure!(
            start.elapsed() < patience(Duration::from_secs(5)),
            "the policy never went quiet: {stats}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    page.click("#more").await?;
    h.wait_for(&page, "window.clicks === 1", Duration::from_secs(2))
        .await?;
    let after = h.control(&page, "C.stats()").await?;
    let _ = page.close().await;
    ensure!(
        after["actions"] == stats["actions"],
        "the wrapped listener ran as an action after the policy went quiet: {stats} then {after}"
    );
    Ok(())
});

case!(reverse_https, |h| async move {
    let (staging, ca_der, task) = h.origin.start_https().await?;
    let opts = StackOptions {
        reverse: Some(format!("https://{staging}").parse()?),
        policy: Some(shepherd_policies::load("init-user").map_err(|e| anyhow::anyhow!("{e}"))?),
        ..StackOptions::default()
    };
    let ca = std::sync::Arc::new(shepherd_proxy::CertificateAuthority::ephemeral()?);
    let stack = Stack::start(
        Run::Serve {
            trust: UpstreamTrust::WithExtraRoots(vec![ca_der]),
        },
        opts,
        ca,
    )
    .await?;
    let page = h.browser.new_page().await?;
    page.call("Page.enable", json!({})).await?;
    page.call(
        "Page.navigate",
        json!({ "url": format!("http://{}/repair/gallery/a.html", stack.proxy().addr()) }),
    )
    .await?;
    h.wait_for(
        &page,
        "!!document.getElementById('g1') && document.readyState === 'loading'",
        Duration::from_secs(3),
    )
    .await?;
    page.click("#g1").await?;
    h.wait_for(
        &page,
        &format!("{STATUS} === 'showing g1'"),
        Duration::from_secs(5),
    )
    .await?;
    let _ = page.close().await;
    stack.shutdown().await;
    task.abort();
    Ok(())
});
