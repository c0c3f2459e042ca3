//! `interfaces.js` lists the globals the runtime need not look at for `on*` handler accessors
//! (reading a browser's lazily made interface objects costs a page load ≈ 20 ms). The list is
//! only sound if none of them owns such an accessor: checked here in the Chromium the tests run,
//! in a secure context (a loopback page), where the most interfaces are exposed. A global the
//! list does not name is still looked at, so a newer browser is only slower, never unwrapped.
//!
//! `SHEPHERD_UPDATE_INTERFACES=1 cargo test -p shepherd-runtime --test interfaces` rewrites the
//! list from that Chromium.

// Test code: a panic here is a failed test, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::time::Duration;

use shepherd_browser::{Browser, LaunchOptions};
use shepherd_testkit::pages::{html, serve};

/// The same test `installHandlerProps` applies: a global function whose prototype is an
/// `EventTarget` and owns a configurable `on*` accessor. Returns `[handlers, others]`.
const CLASSIFY: &str = r#"(() => {
  const handlers = [], others = [];
  for (const n of Object.getOwnPropertyNames(window)) {
    let v;
    try {
      const d = Object.getOwnPropertyDescriptor(window, n);
      v = d && 'value' in d ? d.value : undefined;
    } catch (_) { v = undefined; }
    const p = typeof v === 'function' ? v.prototype : null;
    const target = p !== null && typeof p === 'object' &&
      (p === EventTarget.prototype || p instanceof EventTarget);
    const owns = target && Object.getOwnPropertyNames(p).some((k) => {
      if (k.length < 3 || !k.startsWith('on')) return false;
      const d = Object.getOwnPropertyDescriptor(p, k);
      return d !== undefined && d.configurable && typeof d.get === 'function' &&
        typeof d.set === 'function';
    });
    (owns ? handlers : others).push(n);
  }
  return [handlers, others];
})()"#;

const FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/interfaces.js");

/// The names `interfaces.js` lists.
fn listed(src: &str) -> BTreeSet<String> {
    let start = src.find('`').expect("the list is a template literal") + 1;
    let end = start + src[start..].find('`').expect("the literal ends");
    src[start..end]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn render(version: &str, names: &BTreeSet<String>) -> String {
    let mut lines = vec![String::new()];
    for n in names {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.len() + n.len() + 1 > 98 {
            lines.push(String::new());
        }
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() {
            last.push(' ');
        }
        last.push_str(n);
    }
    format!(
        "// interfaces.js — globals that own no `on*` handler accessor, so installHandlerProps\n\
         // (events.js) need not read them: reading a global makes the browser build its lazily\n\
         // made interface object, ≈ 20 ms per page for all of them. Any global not listed here is\n\
         // read and checked as before, so a browser with new interfaces is slower, never unwrapped.\n\
         // Generated from {version} in a secure context; checked by runtime-js/tests/interfaces.rs\n\
         // (SHEPHERD_UPDATE_INTERFACES=1 cargo test -p shepherd-runtime --test interfaces).\n\
         \n\
         const NO_HANDLER_GLOBALS = `\n{}\n`;\n",
        lines.join("\n")
    )
}

#[tokio::test]
async fn no_listed_global_owns_a_handler_accessor() {
    let server = serve(vec![(
        "/",
        html("<!doctype html><title>interfaces</title>"),
    )])
    .await;
    let browser = Browser::launch(LaunchOptions::default())
        .await
        .expect("Chromium is required for this test (scripts/install-deps installs it)");
    let version = browser.version().await.expect("the browser's version");
    let page = browser.new_page().await.expect("a page");
    page.navigate(&server.url("/"))
        .await
        .expect("the loopback page");
    let got = page.evaluate(CLASSIFY).await.expect("the classification");
    let _ = tokio::time::timeout(Duration::from_secs(10), browser.close()).await;
    let names = |i: usize| -> BTreeSet<String> {
        got[i]
            .as_array()
            .expect("a list of names")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let (handlers, others) = (names(0), names(1));
    assert!(
        handlers.contains("XMLHttpRequestEventTarget") && handlers.contains("HTMLElement"),
        "the classification finds the handler interfaces every page uses: {handlers:?}"
    );
    if std::env::var_os("SHEPHERD_UPDATE_INTERFACES").is_some() {
        std::fs::write(FILE, render(&version, &others)).expect("interfaces.js written");
    }
    let src = std::fs::read_to_string(FILE).expect("interfaces.js");
    let list = listed(&src);
    let wrong: Vec<&String> = list.intersection(&handlers).collect();
    assert!(
        wrong.is_empty(),
        "interfaces.js lists globals that own on* handler accessors in {version}: {wrong:?} \
         (their handlers would run unwrapped); rerun with SHEPHERD_UPDATE_INTERFACES=1"
    );
    let unlisted = others.difference(&list).count();
    eprintln!(
        "{version}: {} globals listed, {} handler interfaces, {unlisted} other globals not listed (read at every page start)",
        list.len(),
        handlers.len()
    );
}
