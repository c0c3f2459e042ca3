//! Real code through the real proxy: eight TodoMVC apps of the npm package `todomvc@0.1.1`
//! (AngularJS, Ember + jQuery + Handlebars, React + JSXTransformer, Backbone + jQuery +
//! Underscore, Knockout, vanilla JS, Mithril, CanJS + jQuery) are driven in headless Chromium
//! directly, through `shepherd serve` (repair mode: the controller only, no instrumentation) and
//! through `shepherd record` (every script instrumented, runtime tracing): add three todos,
//! complete one, delete one. The todo list DOM must be the same in all three, a proxied page
//! must not throw anything the plain one did not, and the runtime must really have been there
//! in the right mode (and, recording, a trace for the page in the recording). One Chromium and
//! one proxy per mode serve every app.
//!
//! The package is fetched with `npm pack` into the target directory on first run; without npm
//! or access to the npm registry the test fails and says why (`$SHEPHERD_TODOMVC_DIR` points it
//! at an unpacked copy instead).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/todomvc.rs"]
mod support;

use serde_json::Value;
use shepherd_browser::Browser;
use shepherd_testkit::patience;
use std::time::Duration;
use support::{ProxyMode, ShepherdProxy, StaticServer, wait_for};

const APPS: [&str; 8] = [
    "angularjs",
    "emberjs",
    "react",
    "backbone",
    "knockoutjs",
    "vanillajs",
    "mithril",
    "canjs",
];

/// `app/mode` pairs known to behave differently through the proxy, each with the reason. The
/// test still runs them and prints the difference, but only fails for pairs not listed here —
/// and fails if a listed pair starts working, so the list cannot go stale.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

const TODOS: [&str; 3] = ["buy milk", "walk the dog", "write tests"];

/// The observable state: each item's label text and completed class, and the counter text.
const SNAPSHOT: &str = r#"(() => {
    const norm = s => (s || '').replace(/\s+/g, ' ').trim();
    const items = [...document.querySelectorAll('#todo-list > li')].map(li => ({
        text: norm((li.querySelector('label') || li).textContent),
        completed: li.classList.contains('completed'),
        checked: !!(li.querySelector('.toggle') || {}).checked,
    }));
    const count = document.querySelector('#todo-count');
    return { items, count: norm(count && count.textContent) };
})()"#;

struct Run {
    snapshot: Value,
    steps: Vec<String>,
    exceptions: Vec<String>,
    runtime: Value,
}

async fn run_app(browser: &Browser, url: &str, proxy: Option<&ShepherdProxy>) -> Run {
    let page = browser
        .new_isolated_page(proxy.map(|p| p.addr.as_str()), proxy.map(|_| "<-loopback>"))
        .await
        .unwrap();
    page.navigate(url).await.unwrap();
    let _ = page
        .wait_quiet(
            Duration::from_millis(200),
            patience(Duration::from_secs(10)),
        )
        .await;
    let mut steps = Vec::new();
    let long = Duration::from_secs(10);
    if !wait_for(&page, "!!document.querySelector('#new-todo')", long).await {
        steps.push("no #new-todo".into());
    }
    for (i, todo) in TODOS.iter().enumerate() {
        if let Err(e) = page.focus("#new-todo").await {
            steps.push(format!("focus: {e}"));
        }
        page.insert_text(todo).await.unwrap();
        page.press_key("Enter").await.unwrap();
        let expr = format!(
            "document.querySelectorAll('#todo-list > li').length === {}",
            i + 1
        );
        if !wait_for(&page, &expr, long).await {
            steps.push(format!("adding {todo:?} did not add an item"));
        }
    }
    if let Err(e) = page.click("#todo-list > li:nth-of-type(2) .toggle").await {
        steps.push(format!("toggle: {e}"));
    }
    let done =
        "document.querySelector('#todo-list > li:nth-of-type(2)').classList.contains('completed')";
    if !wait_for(&page, done, long).await {
        steps.push("toggling did not complete the item".into());
    }
    if let Err(e) = page.hover("#todo-list > li:nth-of-type(1)").await {
        steps.push(format!("hover: {e}"));
    }
    if let Err(e) = page.click("#todo-list > li:nth-of-type(1) .destroy").await {
        steps.push(format!("destroy: {e}"));
    }
    let gone = "document.querySelectorAll('#todo-list > li').length === 2";
    if !wait_for(&page, gone, long).await {
        steps.push("destroying did not remove the item".into());
    }
    // Let deferred renders (counters, async frameworks) settle before comparing.
    let _ = page
        .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(5)))
        .await;
    let snapshot = page.evaluate(SNAPSHOT).await.unwrap();
    let runtime = match proxy {
        Some(p) => {
            let secret = serde_json::to_string(&p.secret).unwrap();
            let probe = format!(
                "(async () => {{ const ok = typeof __shepherd === 'object' && __shepherd !== null; \
                 const c = ok && __shepherd.control({secret}); if (c) await c.flush(); \
                 return {{ runtime: ok, flushed: !!c, mode: ok ? __shepherd.mode : null }}; }})()"
            );
            page.evaluate(&probe).await.unwrap()
        }
        None => page
            .evaluate("typeof __shepherd")
            .await
            .unwrap_or(Value::Null),
    };
    let exceptions = page
        .exceptions()
        .into_iter()
        .map(|e| {
            format!(
                "{} at {}:{}:{}",
                e.message.lines().next().unwrap_or(""),
                e.url.unwrap_or_default(),
                e.line.unwrap_or(0),
                e.column.unwrap_or(0)
            )
        })
        .collect();
    let _ = page.close().await;
    Run {
        snapshot,
        steps,
        exceptions,
        runtime,
    }
}

fn expected_snapshot() -> Value {
    serde_json::json!({
        "items": [
            { "text": TODOS[1], "completed": true, "checked": true },
            { "text": TODOS[2], "completed": false, "checked": false },
        ],
        "count": "1 item left",
    })
}

/// Compares a proxied run with the plain one; the problems found (empty: identical).
fn compare(plain: &Run, proxied: &Run, mode: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if proxied.snapshot != plain.snapshot {
        problems.push(format!(
            "DOM differs: plain {} proxied {} (steps {:?})",
            plain.snapshot, proxied.snapshot, proxied.steps
        ));
    }
    let new_errors: Vec<&String> = proxied
        .exceptions
        .iter()
        .filter(|e| !plain.exceptions.contains(e))
        .collect();
    if !new_errors.is_empty() {
        problems.push(format!("new page errors: {new_errors:?}"));
    }
    let want = serde_json::json!({ "runtime": true, "flushed": true, "mode": mode });
    if proxied.runtime != want {
        problems.push(format!(
            "runtime missing or wrong mode: {}",
            proxied.runtime
        ));
    }
    problems
}

#[test]
fn todomvc_apps_behave_identically_through_the_proxy_in_repair_and_record_mode() {
    shepherd_testkit::chromium();
    let root = support::package_root();
    let server = StaticServer::start(root);
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let repair = ShepherdProxy::start(bin, ProxyMode::Repair);
    let record = ShepherdProxy::start(bin, ProxyMode::Record);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let failures = rt.block_on(async {
        let browser = shepherd_testkit::pages::launch().await;
        let mut failures: Vec<(String, String)> = Vec::new();
        for app in APPS {
            let url = format!("{}/examples/{app}/index.html", server.origin());
            let plain = run_app(&browser, &url, None).await;
            // The plain run pins down what the driver does: if it does not reach the expected
            // state, the driver (not the proxy) is wrong for this app.
            assert_eq!(
                plain.snapshot,
                expected_snapshot(),
                "{app} without the proxy: driver did not reach the expected state ({:?}; exceptions {:?})",
                plain.steps,
                plain.exceptions
            );
            assert_eq!(plain.runtime, Value::from("undefined"), "{app}: plain run saw a runtime");
            for (mode, proxy) in [("repair", &repair), ("record", &record)] {
                let proxied = run_app(&browser, &url, Some(proxy)).await;
                let mut problems = compare(&plain, &proxied, mode);
                if mode == "record" {
                    let rec =
                        shepherd_recording::Recording::open_readonly(&proxy.recording).unwrap();
                    let traced = rec.traces().unwrap().iter().any(|t| {
                        t.bytes > 0
                            && t.page_url
                                .as_deref()
                                .is_some_and(|u| u.contains(&format!("/examples/{app}/")))
                    });
                    if !traced {
                        problems.push("no trace of the page in the recording".into());
                    }
                }
                eprintln!(
                    "todomvc {app} ({mode}): {}",
                    if problems.is_empty() {
                        "identical".to_string()
                    } else {
                        problems.join("; ")
                    }
                );
                if !problems.is_empty() {
                    failures.push((format!("{app}/{mode}"), problems.join("; ")));
                }
            }
        }
        let _ = browser.close().await;
        failures
    });
    let known = |key: &str| KNOWN_FAILURES.iter().any(|(a, _)| *a == key);
    let unexpected: Vec<_> = failures.iter().filter(|(a, _)| !known(a)).collect();
    assert!(
        unexpected.is_empty(),
        "apps broken by the proxy: {unexpected:#?}"
    );
    for (key, why) in KNOWN_FAILURES {
        assert!(
            failures.iter().any(|(a, _)| a == key),
            "{key} is listed as a known failure ({why}) but now works: remove it from the list"
        );
    }
}
