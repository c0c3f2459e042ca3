//! Record mode, one fixture page per entry point: the expected actions, arcs and accesses appear
//! in the trace the page uploads. One headless Chromium for the whole file.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, ensure};
use shepherd_e2e::{Case, TraceQuery, case, run_cases};
use shepherd_runtime::Mode;

fn main() -> ExitCode {
    let cases: &[Case] = &[
        ("parse_chunks_and_scripts", parse_chunks_and_scripts),
        ("timers_intervals_frames", timers_intervals_frames),
        (
            "microtasks_belong_to_their_turn",
            microtasks_belong_to_their_turn,
        ),
        (
            "dom_events_and_listener_lists",
            dom_events_and_listener_lists,
        ),
        ("xhr_and_fetch", xhr_and_fetch),
        (
            "an_inline_script_in_two_network_pieces_is_one_action",
            split_inline_script,
        ),
        ("messages_and_observers", messages_and_observers),
        ("resources_load_and_error", resources_load_and_error),
        ("dom_locations", dom_locations),
        ("dom_nodes_described_once", dom_nodes_described_once),
        ("uncaught_errors", uncaught_errors),
        (
            "fig1_onload_before_definition",
            fig1_onload_before_definition,
        ),
        ("stable_ids_survive_reload", stable_ids_survive_reload),
        ("websocket_messages", websocket_messages),
        (
            "dynamic_functions_instrumented",
            dynamic_functions_instrumented,
        ),
        ("dynamic_html_instrumented", dynamic_html_instrumented),
    ];
    run_cases(Mode::Record, cases)
}

/// The limit of a wait for a page to finish what the test looks at (times the patience factor).
const SOON: Duration = Duration::from_secs(3);

/// Whether the timers page's trace has all it will have: four timeouts (a, b, 30 ms, string),
/// three interval ticks, the frame and the idle callback.
fn timers_done(t: &TraceQuery) -> bool {
    t.of_kind("timer").len() >= 4
        && t.of_kind("interval").len() >= 3
        && !t.of_kind("raf").is_empty()
        && !t.of_kind("idle").is_empty()
}

case!(parse_chunks_and_scripts, |h| async move {
    let t = h
        .record_trace_until("/scripts/", SOON, |t| {
            !t.with_scope("fire:load @ Window[0]").is_empty()
        })
        .await?;
    let parse = t.of_kind("parse");
    ensure!(parse.len() >= 4, "parse chunks: {parse:?}\n{}", t.dump());
    // Inline scripts have actions, chained after the chunk before them.
    let inline1 = t.one_with_scope("script:inline #1")?;
    let inline6 = t.one_with_scope("script:inline #6")?;
    ensure!(
        t.kind(inline1 - 1) == "parse" && t.has_arc(inline1 - 1, inline1, 'j'),
        "chunk -> inline1\n{}",
        t.dump()
    );
    // Parser-blocking external script, chained in document order.
    let ext = t.one_with_scope("script:external http://")?;
    ensure!(
        t.hb(inline1, ext) && t.hb(ext, inline6),
        "document order\n{}",
        t.dump()
    );
    ensure!(
        t.reads(ext, "Tree[1]:p1"),
        "ext reads the id map\n{}",
        t.dump()
    );
    // Async script: forked by the chunk that inserted it, not chained.
    let asyn = t.one_with_scope("script:async")?;
    let (fork, _) = t
        .forked_by(asyn)
        .ok_or_else(|| anyhow::anyhow!("async not forked"))?;
    ensure!(
        t.kind(fork) == "parse",
        "async forked by a parse chunk\n{}",
        t.dump()
    );
    // Defer script runs after parsing, before DOMContentLoaded, which joins it.
    let defer = t.one_with_scope("script:defer")?;
    let dcl = t.one_with_scope("fire:DOMContentLoaded @ Document[1]")?;
    ensure!(t.has_arc(defer, dcl, 'j'), "DCL joins defer\n{}", t.dump());
    ensure!(
        t.hb(*parse.last().unwrap_or(&0), defer),
        "defer runs after parsing\n{}",
        t.dump()
    );
    ensure!(
        t.hb(*parse.last().unwrap_or(&0), dcl),
        "DCL after parsing\n{}",
        t.dump()
    );
    // Dynamically inserted script: forked by the inline script that inserted it.
    let ins = t.one_with_scope("script:inserted")?;
    ensure!(
        t.forked_by(ins).map(|f| f.0) == Some(inline6),
        "inserted forked by inserter\n{}",
        t.dump()
    );
    // Window load joins DOMContentLoaded and the script loads.
    let load = t.one_with_scope("fire:load @ Window[0]")?;
    ensure!(t.has_arc(dcl, load, 'j'), "load joins DCL\n{}", t.dump());
    let script_loads = t.with_scope("fire:load @ SCRIPT[");
    ensure!(script_loads.len() >= 4, "script load events\n{}", t.dump());
    for l in script_loads {
        ensure!(
            t.hb(l, load),
            "window load after script load {l}\n{}",
            t.dump()
        );
    }
    // Stable ids name the script by URL.
    ensure!(
        t.stable(ins).contains("inserted.js"),
        "stable {}",
        t.stable(ins)
    );
    Ok(())
});

case!(timers_intervals_frames, |h| async move {
    let t = h.record_trace_until("/timers/", SOON, timers_done).await?;
    let script = t.one_with_scope("script:inline #1")?;
    let timers = t.of_kind("timer");
    ensure!(
        timers.len() == 4,
        "a, b, 30 ms, string (c was cleared): {timers:?}\n{}",
        t.dump()
    );
    for &a in &timers {
        let (from, delay) = t
            .forked_by(a)
            .ok_or_else(|| anyhow::anyhow!("timer {a} not forked"))?;
        ensure!(
            from == script && delay.is_some(),
            "timer {a} forked with delay\n{}",
            t.dump()
        );
        let label = t.scope(a).unwrap_or_default().to_string();
        let id = label.trim_start_matches("timer:");
        ensure!(
            t.reads(a, &format!("Timer:{id}")),
            "tick reads its timer\n{}",
            t.dump()
        );
        ensure!(
            t.written(script, &format!("Timer:{id}")).is_some(),
            "set writes the timer"
        );
    }
    // Same delay, registered in order: FIFO join a -> b.
    let twenty: Vec<_> = timers
        .iter()
        .copied()
        .filter(|&a| t.forked_by(a).and_then(|f| f.1) == Some(20))
        .collect();
    ensure!(
        twenty.len() == 2 && t.has_arc(twenty[0], twenty[1], 'j'),
        "FIFO\n{}",
        t.dump()
    );
    // Intervals: three ticks, each joined to the previous one.
    let ticks = t.of_kind("interval");
    ensure!(ticks.len() == 3, "ticks {ticks:?}\n{}", t.dump());
    ensure!(
        t.has_arc(ticks[0], ticks[1], 'j') && t.has_arc(ticks[1], ticks[2], 'j'),
        "tick chain"
    );
    ensure!(
        t.of_kind("raf").len() == 1 && t.of_kind("idle").len() == 1,
        "raf + idle\n{}",
        t.dump()
    );
    for a in t.of_kind("raf").into_iter().chain(t.of_kind("idle")) {
        ensure!(
            t.forked_by(a).map(|f| f.0) == Some(script),
            "forked by the script"
        );
    }
    Ok(())
});

case!(microtasks_belong_to_their_turn, |h| async move {
    let t = h.record_trace_until("/timers/", SOON, timers_done).await?;
    let thirty = t
        .of_kind("timer")
        .into_iter()
        .find(|&a| t.forked_by(a).and_then(|f| f.1) == Some(30))
        .ok_or_else(|| anyhow::anyhow!("no 30 ms timer\n{}", t.dump()))?;
    ensure!(
        t.reads(thirty, "Tree[1]:fromPromiseJob"),
        "promise job in the timer's action\n{}",
        t.dump()
    );
    ensure!(
        t.reads(thirty, "Tree[1]:fromQueueMicrotask"),
        "queueMicrotask in the timer's action\n{}",
        t.dump()
    );
    Ok(())
});

case!(dom_events_and_listener_lists, |h| async move {
    let page = h.open("/events/").await?;
    page.click("#b1").await?;
    page.click("#b2").await?;
    page.click("#nolistener").await?;
    page.click("#b3").await?;
    page.evaluate("synthetic()").await?;
    h.wait_for(&page, "clicks.length >= 9", SOON).await?;
    let clicks = page.evaluate("clicks.join(',')").await?;
    ensure!(
        clicks.as_str()
            == Some("md-once,b1,body,handleEvent:click,body,body,body,handleEvent:click,body"),
        "page behaviour unchanged: {clicks}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let clicks: Vec<_> = t.with_scope("fire:click @ ");
    ensure!(
        clicks.len() == 4,
        "four trusted clicks (synthetic one is nested): {clicks:?}\n{}",
        t.dump()
    );
    // User events are ordered among themselves and typed as user interface.
    for w in clicks.windows(2) {
        ensure!(t.hb(w[0], w[1]), "user events ordered\n{}", t.dump());
    }
    for &c in &clicks {
        ensure!(t.type_code(c) == 2, "user interface type");
        let label = t
            .scope(c)
            .unwrap_or_default()
            .trim_start_matches("fire:click @ ")
            .to_string();
        ensure!(
            t.reads(c, &format!("{label}.click")),
            "dispatch reads the target list\n{}",
            t.dump()
        );
        ensure!(
            t.accesses(c)
                .iter()
                .any(|x| !x.write && x.loc.starts_with("BODY[") && x.loc.ends_with(".click")),
            "reads the body's list\n{}",
            t.dump()
        );
        ensure!(t.reads(c, "Window[0].click"), "reads the window's list");
    }
    // A dispatch with no listener still reads the target's list.
    let no = clicks[2];
    ensure!(
        t.scope(no).unwrap_or("").starts_with("fire:click @ DIV["),
        "third click on the div"
    );
    // The microtask queued by the b1 listener belongs to the click: its id-map read is in the
    // click's action.
    ensure!(
        t.scope(clicks[0])
            .is_some_and(|s| s.starts_with("fire:click @ BUTTON["))
            && t.reads(clicks[0], "Tree[1]:nolistener"),
        "the listener's microtask runs in the click's action\n{}",
        t.dump()
    );
    // Registration wrote the lists (script action).
    let script = t.one_with_scope("script:inline #1")?;
    let wrote: Vec<_> = t
        .accesses(script)
        .into_iter()
        .filter(|x| x.write && x.loc.ends_with(".click"))
        .collect();
    ensure!(
        wrote.len() >= 3,
        "listener registrations write lists: {wrote:?}"
    );
    // The on-attribute registration of #b3 (the fourth click's target) is written by the parse
    // chunk that created the button, not by a script.
    let b3 = t
        .scope(clicks[3])
        .unwrap_or_default()
        .trim_start_matches("fire:click @ ")
        .to_string();
    let slot = format!("{b3}.click");
    let attr = t.accessing(|x| x.write && x.loc == slot);
    ensure!(
        attr.len() == 1 && t.kind(attr[0].0) == "parse",
        "attribute handler registration of {slot} by the parse chunk: {attr:?}\n{}",
        t.dump()
    );
    // mousedown listener removed itself: the removal writes the list with undefined.
    let md = t.first_with_scope("fire:mousedown @ BUTTON[")?;
    ensure!(
        t.accesses(md).iter().any(|x| x.write
            && x.loc.ends_with(".mousedown")
            && x.value.as_deref() == Some("undefined")),
        "removeEventListener writes the list\n{}",
        t.dump()
    );
    Ok(())
});

// Real documents arrive in network reads that cut inline scripts anywhere: the parser
// inserts the script element, waits for the rest, appends its text and only then runs it. The
// script is one action, named as on an unsplit delivery.
case!(split_inline_script, |h| async move {
    let html = std::fs::read_to_string(shepherd_e2e::pages_dir().join("split-script/index.html"))?;
    let at = html.find("<script>").context("the page has a script")? + "<script>".len() + 3;
    let page = h.open(&format!("/split-script/?split_at={at}")).await?;
    h.wait_for(&page, "window.done === true", SOON).await?;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let script = t.one_with_scope("script:inline #1")?;
    let stable = t.stable(script);
    ensure!(stable == "doc/script@#1#1", "{stable}\n{}", t.dump());
    ensure!(
        t.written(script, "Global.first").is_some(),
        "the script's own accesses are in its action\n{}",
        t.dump()
    );
    Ok(())
});

case!(xhr_and_fetch, |h| async move {
    let page = h.open("/network/").await?;
    h.wait_for(
        &page,
        "got.length > 0 && window.fetchDone === true && window.awaited !== undefined",
        SOON,
    )
    .await?;
    let v = page
        .evaluate("[got.join(','), window.fetchStatus, window.fetchDone, window.awaited]")
        .await?;
    ensure!(
        v == serde_json::json!(["xhr:200", 200, true, 20]),
        "page behaviour: {v}"
    );
    // The second XHR has no handler: only its trace shows that it finished.
    let t = h
        .trace_until(&page, SOON, |t| {
            t.with_scope("fire:load @ XMLHttpRequest[").len() >= 2 && t.of_kind("body").len() >= 2
        })
        .await?;
    let _ = page.close().await;
    let script = t.one_with_scope("script:inline #1")?;
    let rsc = t.with_scope("fire:readystatechange @ XMLHttpRequest[");
    ensure!(
        rsc.len() >= 4,
        "readystatechange actions for both requests\n{}",
        t.dump()
    );
    let loads = t.with_scope("fire:load @ XMLHttpRequest[");
    ensure!(
        loads.len() == 2,
        "load of both XHRs, with and without handlers\n{}",
        t.dump()
    );
    for &a in rsc.iter().chain(loads.iter()) {
        ensure!(
            t.forked_by(a).map(|f| f.0) == Some(script),
            "XHR events forked by send\n{}",
            t.dump()
        );
        ensure!(t.type_code(a) == 3, "network type");
    }
    // Events of one XHR are chained.
    ensure!(t.hb(rsc[0], rsc[1]), "XHR events chained");
    let fetches = t.of_kind("fetch");
    ensure!(fetches.len() == 2, "two fetch settlements\n{}", t.dump());
    for &f in &fetches {
        ensure!(
            t.forked_by(f).map(|x| x.0) == Some(script),
            "fetch forked by its caller"
        );
    }
    let bodies = t.of_kind("body");
    ensure!(bodies.len() == 2, "two body reads\n{}", t.dump());
    // The continuation after r.json() runs in the body action: it reads the id map.
    ensure!(
        bodies.iter().any(|&b| t.reads(b, "Tree[1]:out")),
        "continuation in the body action\n{}",
        t.dump()
    );
    for &b in &bodies {
        let (from, _) = t
            .forked_by(b)
            .ok_or_else(|| anyhow::anyhow!("body not forked"))?;
        ensure!(
            fetches.contains(&from),
            "body read forked by the fetch settlement\n{}",
            t.dump()
        );
    }
    Ok(())
});

case!(messages_and_observers, |h| async move {
    let page = h.open("/messages/").await?;
    h.wait_for(&page, "got.length >= 6", SOON).await?;
    let got = page.evaluate("got.slice().sort().join(',')").await?;
    ensure!(
        got == serde_json::json!("io:1,port:p1,port:p2,ro:1,win:m1,win:m2"),
        "page behaviour: {got}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let script = t.one_with_scope("script:inline #1")?;
    let win = t.with_scope("fire:message @ Window[0]");
    ensure!(win.len() == 2, "two window messages\n{}", t.dump());
    for &m in &win {
        ensure!(
            t.forked_by(m).map(|f| f.0) == Some(script),
            "postMessage forks its message\n{}",
            t.dump()
        );
    }
    ensure!(
        t.has_arc(win[0], win[1], 'j'),
        "window messages FIFO\n{}",
        t.dump()
    );
    let port = t.of_kind("message");
    ensure!(port.len() == 2, "two port messages\n{}", t.dump());
    ensure!(t.has_arc(port[0], port[1], 'j'), "port FIFO\n{}", t.dump());
    for &m in &port {
        ensure!(
            t.forked_by(m).map(|f| f.0) == Some(script),
            "port message forked by poster"
        );
        ensure!(t.type_code(m) == 4, "continuation type");
    }
    for kind in ["observer:intersection", "observer:resize"] {
        let a = t.of_kind(kind);
        ensure!(a.len() == 1, "{kind} callback\n{}", t.dump());
        ensure!(
            t.forked_by(a[0]).map(|f| f.0) == Some(script),
            "{kind} forked by creator"
        );
    }
    Ok(())
});

case!(resources_load_and_error, |h| async move {
    let page = h.open("/resources/").await?;
    let frame_doc = page
        .evaluate("document.getElementById('frame').contentWindow.__shepherd.doc")
        .await?;
    let frame_doc = frame_doc.as_str().unwrap_or_default().to_string();
    let t = h
        .trace_until(&page, SOON, |t| {
            t.with_scope("fire:load @ IMG[").len() >= 3
                && !t.with_scope("fire:load @ Window[0]").is_empty()
        })
        .await;
    // The iframe uploads its own trace (its own document), within 300 ms of its first record;
    // a tab closed before that takes the records along.
    let deadline = std::time::Instant::now() + shepherd_e2e::patience(SOON);
    while !h.origin.docs().contains(&frame_doc) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = page.close().await;
    let t = t?;
    let img_loads = t.with_scope("fire:load @ IMG[");
    ensure!(
        img_loads.len() == 3,
        "static, dynamic (detached) and late images\n{}",
        t.dump()
    );
    let err = t.one_with_scope("fire:error @ IMG[")?;
    let (from, _) = t
        .forked_by(err)
        .ok_or_else(|| anyhow::anyhow!("error not forked"))?;
    ensure!(
        t.kind(from) == "parse",
        "broken image forked by the chunk that created it\n{}",
        t.dump()
    );
    ensure!(t.type_code(err) == 3, "network type");
    let frame = t.one_with_scope("fire:load @ IFRAME[")?;
    let window_load = t.one_with_scope("fire:load @ Window[0]")?;
    ensure!(
        t.hb(frame, window_load) && t.hb(err, window_load),
        "window load waits for resources\n{}",
        t.dump()
    );
    // The late image: created in a timer, which forks its load.
    let timer = t.of_kind("timer")[0];
    ensure!(
        img_loads
            .iter()
            .any(|&l| t.forked_by(l).map(|f| f.0) == Some(timer)),
        "late load forked by the timer\n{}",
        t.dump()
    );
    ensure!(
        !frame_doc.is_empty() && h.origin.docs().contains(&frame_doc),
        "iframe document {frame_doc:?} uploaded a trace too: {:?}",
        h.origin.docs()
    );
    Ok(())
});

case!(dom_locations, |h| async move {
    let page = h.open("/domlocs/").await?;
    h.wait_for(&page, "window.found !== undefined", SOON)
        .await?;
    let v = page
        .evaluate("[window.found, window.hasB, window.cookieNow]")
        .await?;
    ensure!(
        v == serde_json::json!([true, true, "k=v"]),
        "page behaviour: {v}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let script = t.one_with_scope("script:inline #1")?;
    let miss = t
        .accesses(script)
        .into_iter()
        .find(|x| !x.write && x.loc == "Tree[1]:later");
    ensure!(
        miss.and_then(|x| x.value).as_deref() == Some("null"),
        "read of a missing id logs null\n{}",
        t.dump()
    );
    ensure!(
        t.reads(script, "Tree[1]:box"),
        "querySelector('#box') reads the id map"
    );
    let timers = t.of_kind("timer");
    let (w, r) = (timers[0], timers[1]);
    ensure!(
        t.written(w, "Tree[1]:later").is_some(),
        "attaching an element with id writes the map\n{}",
        t.dump()
    );
    let cls = t
        .accesses(w)
        .into_iter()
        .find(|x| x.write && x.loc.ends_with(".className"));
    ensure!(
        cls.and_then(|x| x.value).as_deref() == Some("\"b\""),
        "className write with value\n{}",
        t.dump()
    );
    ensure!(t.written(w, "Document[1].cookie").is_some(), "cookie write");
    ensure!(t.reads(r, "Document[1].cookie"), "cookie read");
    ensure!(
        t.accesses(r)
            .iter()
            .any(|x| !x.write && x.loc.ends_with(".className")),
        "classList read"
    );
    ensure!(
        t.written(r, "Tree[1]:later") == Some(Some("null".into())),
        "removal clears the id\n{}",
        t.dump()
    );
    // A node's existence is written by the action that makes or inserts it, and logged once
    // a second action touches the node: the parsed box (its class set by the first timer),
    // the body (appended to by it), the made div (removed by the second).
    ensure!(
        t.accesses(w)
            .iter()
            .any(|x| x.write && x.loc.starts_with("NodeTree:")),
        "the made element's existence, written by its creator\n{}",
        t.dump()
    );
    ensure!(
        t.accessing(|x| x.write && x.loc.starts_with("NodeTree:"))
            .len()
            >= 3,
        "node existence writes\n{}",
        t.dump()
    );
    Ok(())
});

case!(dom_nodes_described_once, |h| async move {
    let page = h.open("/names/").await?;
    h.wait_for(&page, "window.before !== undefined", SOON)
        .await?;
    let v = page
        .evaluate("[window.spiesInstalled, window.before, window.pageCodeRan]")
        .await?;
    // Naming nodes (and everything else the runtime did after the page replaced the DOM
    // getters and methods with counting ones) called none of the page's functions.
    ensure!(v == serde_json::json!([true, 0, 0]), "page code ran: {v}");
    let elements = page
        .evaluate("document.getElementsByTagName('*').length")
        .await?
        .as_u64()
        .unwrap_or(0) as usize;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let node = |tag: &str, path: Option<&str>, id: Option<&str>, classes: Option<&str>| {
        shepherd_e2e::query::Node {
            tag: tag.into(),
            path: path.map(Into::into),
            id: id.map(Into::into),
            classes: classes.map(Into::into),
        }
    };
    for (listener, want) in [
        (
            "onToggle",
            node(
                "input",
                Some("#todo-list > li:nth-child(2) > input"),
                None,
                Some("toggle"),
            ),
        ),
        (
            "onDestroy",
            node(
                "button",
                Some("#todo-list > li:nth-child(2) > button"),
                None,
                Some("destroy"),
            ),
        ),
        (
            "onItem",
            node(
                "li",
                Some("#todo-list > li:nth-child(2)"),
                None,
                Some("done editing x"),
            ),
        ),
        // Ids that are not unique or not identifiers do not anchor a selector.
        (
            "onDup",
            node("i", Some("body > i:nth-child(4)"), Some("dup"), None),
        ),
        ("onFirst", node("p", Some("body > p"), Some("1st"), None)),
        // Six steps at most: then the selector is relative.
        (
            "onDeep",
            node(
                "span",
                Some("div > div > div > div > div > span"),
                None,
                Some("deep"),
            ),
        ),
        // Named before it was inserted: described at the end of the action, in place.
        ("onGhost", node("div", None, Some("ghost"), Some("spooky"))),
        // Named (its id written) before it was inserted, inserted by a later action: described
        // then, while the page's spies were installed.
        ("onLate", node("em", Some("em#late"), Some("late"), None)),
    ] {
        let (loc, got) = t.listener_node(listener)?;
        ensure!(got == want, "{listener} on {loc}: {got:?}, want {want:?}");
    }
    let (_, made) = t.listener_node("onMade")?;
    ensure!(
        made.path
            .as_deref()
            .is_some_and(|p| p.starts_with("body > p:nth-child("))
            && made.classes.as_deref() == Some("made"),
        "script-made element: {made:?}"
    );
    // The className write the MutationObserver saw names the field by its id.
    let (_, cls) = t
        .accessing(|x| x.write && x.loc.ends_with(".className"))
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no className write\n{}", t.dump()))?;
    let n: u32 = cls.loc["DOMNode[".len()..cls.loc.len() - "].className".len()].parse()?;
    ensure!(
        t.node(n)
            == Some(node(
                "input",
                Some("input#coupon"),
                Some("coupon"),
                Some("wide")
            )),
        "coupon: {:?}",
        t.node(n)
    );
    // Once per node, and only nodes a location or label names (not every parsed element).
    let mut numbers: Vec<u32> = t.trace.nodes.iter().map(|d| d.node).collect();
    let all = numbers.len();
    numbers.sort_unstable();
    numbers.dedup();
    ensure!(numbers.len() == all, "a node described twice");
    ensure!(
        all < elements,
        "{all} descriptions for {elements} elements in the document"
    );
    ensure!(
        t.trace.header.version == shepherd_trace::FORMAT_VERSION,
        "trace version {}",
        t.trace.header.version
    );
    Ok(())
});

case!(uncaught_errors, |h| async move {
    let t = h
        .record_trace_until("/errors/", SOON, |t| {
            t.of_kind("timer").len() >= 3 && !t.with_scope("fire:unhandledrejection").is_empty()
        })
        .await?;
    let timers = t.of_kind("timer");
    ensure!(timers.len() == 3, "{}", t.dump());
    // A property read of `undefined` throws inside the runtime's read helper: the position
    // is the page's (the first frame outside the runtime), not the runtime's.
    let thrown = t.exceptions_at(timers[2]);
    ensure!(
        thrown.iter().any(|(m, at)| m.contains("missing")
            && at
                .as_deref()
                .is_some_and(|p| p.contains("/errors/") && !p.contains("/__shepherd/"))),
        "the read of undefined is placed in the page: {thrown:?}\n{}",
        t.dump()
    );
    let e1 = t.exceptions(timers[0]);
    ensure!(
        e1.iter().any(|m| m.contains("undefinedFunctionCall")),
        "uncaught error in its timer\n{}",
        t.dump()
    );
    // Both are in the page's inline script, which the browser ran instrumented: the runtime
    // places them in the script's instrumented text, and that maps back to the script's own
    // lines (line 2: the first timer's call; line 4: the read of `o.missing`).
    let html = std::fs::read_to_string(shepherd_e2e::pages_dir().join("errors/index.html"))?;
    let script = shepherd_instrument::inline_code(&html)
        .into_iter()
        .next()
        .map(|c| (c.key, c.text, c.kind))
        .context("the page's inline script")?;
    for (timer, what, line, col) in [
        (timers[0], "undefinedFunctionCall", 2, 28),
        (timers[2], "missing", 4, 42),
    ] {
        let thrown = t.exceptions_at(timer);
        let at = thrown
            .iter()
            .find(|(m, _)| m.contains(what))
            .and_then(|(_, at)| at.clone())
            .with_context(|| format!("a position for {what}: {thrown:?}"))?;
        let (url, l, c) = shepherd_races::report::sources::split_position(&at)
            .with_context(|| format!("{at} is url:line:col"))?;
        ensure!(
            shepherd_races::report::sources::split_inline(url)
                .is_some_and(|(doc, key)| doc.ends_with("/errors/") && key == script.0),
            "{what} is placed in the inline script: {at}"
        );
        let back =
            shepherd_instrument::original_inline_position(&script.1, script.2, l as u32, c as u32);
        ensure!(
            back == Some((line, col)),
            "{what} at {at} maps to {back:?} in the script, not line {line} col {col}"
        );
    }
    let rej = t.first_with_scope("fire:unhandledrejection")?;
    ensure!(
        t.exceptions(rej)
            .iter()
            .any(|m| m.contains("nobody catches")),
        "unhandled rejection\n{}",
        t.dump()
    );
    Ok(())
});

case!(fig1_onload_before_definition, |h| async move {
    // The image loads while the script defining doSomething is still delayed: the bad order.
    let page = h.open("/fig1/").await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    let load = t.one_with_scope("fire:load @ IMG[")?;
    let label = t
        .scope(load)
        .unwrap_or_default()
        .trim_start_matches("fire:load @ ")
        .to_string();
    ensure!(
        t.reads(load, &format!("{label}.load")),
        "the dispatch reads the handler slot\n{}",
        t.dump()
    );
    ensure!(
        t.exceptions(load)
            .iter()
            .any(|m| m.contains("doSomething is not defined")),
        "the failed read of the undefined global is recorded in the load action\n{}",
        t.dump()
    );
    // The failed read of the undeclared global is logged by the instrumented handler, at its
    // position in the page's inline code.
    let read = t
        .accesses(load)
        .into_iter()
        .find(|x| !x.write && x.loc == "Global.doSomething");
    ensure!(
        read.and_then(|x| x.pos)
            .is_some_and(|p| p.contains("/fig1/#inline-")),
        "read of the undefined global\n{}",
        t.dump()
    );
    // The attribute registration is written by the parse chunk that created the image.
    let (from, _) = t
        .forked_by(load)
        .ok_or_else(|| anyhow::anyhow!("load not forked"))?;
    ensure!(
        t.written(from, &format!("{label}.load")).is_some(),
        "onload attribute writes the slot\n{}",
        t.dump()
    );
    let ext = t.with_scope("script:external");
    ensure!(
        ext.is_empty() || ext[0] > load,
        "bad order really happened\n{}",
        t.dump()
    );
    Ok(())
});

case!(stable_ids_survive_reload, |h| async move {
    let a = h.record_trace_until("/timers/", SOON, timers_done).await?;
    let b = h.record_trace_until("/timers/", SOON, timers_done).await?;
    // The parser's chunks are left out: how many there are depends on how the document's
    // bytes arrive and on the parser's time budget (a loaded machine splits the same page
    // into more pieces), so `parse#k` names a position, not a piece of the page. What a chunk
    // forks is named by its target, and the explorer matches such names with the chunk's
    // ordinal blanked (`naming::blank_parse` in the explore model).
    let ids = |t: &TraceQuery| -> Vec<String> {
        let mut v: Vec<String> = ["timer", "interval", "raf", "script"]
            .iter()
            .flat_map(|k| t.of_kind(k).into_iter().map(|x| t.stable(x).to_string()))
            .collect();
        // Timing may reorder the timers; the identities must be the same set.
        v.sort();
        v
    };
    let (sa, sb) = (ids(&a), ids(&b));
    ensure!(sa == sb, "stable ids differ:\n{sa:?}\n{sb:?}");
    // Four timers, three interval ticks, a frame and the script.
    ensure!(sa.len() >= 9, "too few actions to compare: {sa:?}");
    ensure!(
        sa.iter().collect::<std::collections::HashSet<_>>().len() == sa.len(),
        "stable ids unique"
    );
    ensure!(
        !a.of_kind("parse").is_empty() && !b.of_kind("parse").is_empty(),
        "each load has parse actions"
    );
    Ok(())
});

case!(websocket_messages, |h| async move {
    let page = h
        .open(&format!("/websocket/?ws={}", h.origin.ws_port()))
        .await?;
    h.wait_for(&page, "got.length === 2 && window.wsClosed === true", SOON)
        .await?;
    let v = page
        .evaluate("got.join(',') + (window.wsClosed === true ? ',closed' : '')")
        .await?;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    ensure!(
        v == serde_json::json!("echo:a,echo:b,closed"),
        "page behaviour: {v}"
    );
    let script = t.one_with_scope("script:inline #1")?;
    let open = t.one_with_scope("fire:open @ WebSocket[")?;
    let msgs = t.with_scope("fire:message @ WebSocket[");
    ensure!(msgs.len() == 2, "two messages\n{}", t.dump());
    for &a in [open, msgs[0], msgs[1]].iter() {
        ensure!(
            t.forked_by(a).map(|f| f.0) == Some(script),
            "forked by the opener\n{}",
            t.dump()
        );
        ensure!(t.type_code(a) == 3, "network type");
    }
    ensure!(
        t.has_arc(open, msgs[0], 'j') && t.has_arc(msgs[0], msgs[1], 'j'),
        "socket events in FIFO order\n{}",
        t.dump()
    );
    ensure!(
        t.reads(msgs[1], "Tree[1]:status"),
        "the handler runs in the message action\n{}",
        t.dump()
    );
    // The close event: its own network action, forked by the opener, after the last message,
    // reading the socket's `close` listener list (which `onclose =` wrote in the script).
    let close = t.one_with_scope("fire:close @ WebSocket[")?;
    ensure!(
        t.forked_by(close).map(|f| f.0) == Some(script) && t.type_code(close) == 3,
        "close forked by the opener, network type\n{}",
        t.dump()
    );
    ensure!(
        t.has_arc(msgs[1], close, 'j'),
        "close joins the last message (FIFO)\n{}",
        t.dump()
    );
    let scope = t.scope(close).unwrap_or_default().to_string();
    let list = format!("{}.close", scope.trim_start_matches("fire:close @ "));
    ensure!(
        t.reads(close, &list) && t.written(script, &list).is_some(),
        "close reads {list}, which the script's onclose= wrote\n{}",
        t.dump()
    );
    Ok(())
});

case!(dynamic_functions_instrumented, |h| async move {
    let page = h.open("/dynamic/").await?;
    h.wait_for(&page, "r.async !== undefined", SOON).await?;
    let r = page.evaluate("r").await?;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    // The functions behave and look like the natives.
    let want = serde_json::json!({
        "add": 4,
        "len": 2,
        "name": "anonymous",
        "str": "function anonymous(a,b\n) {\nreturn a + b + shared;\n}",
        "inst": true,
        "ctor": "function Function() { [native code] }|1|Function",
        "globalThis": true,
        "sharedW": 5,
        "gen": "7,2",
        "genInst": true,
        "asyncStr": "async function anonymous(x\n) {\nreturn (await x) + asyncShared;\n}",
        "asyncInst": true,
        "syntax": "SyntaxError",
        "failed": "undefinedfalse|-1",
        "async": 11,
    });
    ensure!(r == want, "page results:\n{r}\nwant\n{want}");
    // Their bodies were instrumented: the uninstrumented page logs these accesses only through
    // them, in the script's action (the async continuation in its own turn or the script's).
    let script = t.one_with_scope("script:inline #1")?;
    ensure!(
        t.reads(script, "Global.shared"),
        "new Function body reads the global\n{}",
        t.dump()
    );
    ensure!(
        t.written(script, "Global.sharedW") == Some(Some("5".to_string())),
        "Function body writes the global\n{}",
        t.dump()
    );
    ensure!(
        t.reads(script, "Global.genShared"),
        "GeneratorFunction body instrumented\n{}",
        t.dump()
    );
    ensure!(
        !t.accessing(|x| x.loc == "Global.asyncShared").is_empty(),
        "AsyncFunction body instrumented\n{}",
        t.dump()
    );
    // Code the instrumenter refused ran natively and logged nothing.
    ensure!(
        t.accessing(|x| x.loc == "Global.notLogged").is_empty(),
        "refused code is native\n{}",
        t.dump()
    );
    Ok(())
});

/// Requests pages made to the proxy's instrument endpoint so far.
async fn instrument_requests(h: &shepherd_e2e::Harness) -> u64 {
    h.origin.instrument_requests().await
}

case!(dynamic_html_instrumented, |h| async move {
    let page = h.open("/dynhtml/").await?;
    let r = page.evaluate("r").await?;
    let want = serde_json::json!({ "written": 1, "ctxW": 3, "buttons": 4, "text": "iw" });
    ensure!(r == want, "page results:\n{r}\nwant\n{want}");
    for b in ["#wb", "#ib", "#ab", "#ob"] {
        page.click(b).await?;
    }
    // Strings without code cost no request; one with a handler costs one, once.
    let before = instrument_requests(&h).await;
    page.evaluate(
        "document.getElementById('plain').innerHTML = '<b class=\"one\">plain <i>text</i></b>'; \
         document.getElementById('plain').insertAdjacentHTML('beforeend', '<p>online=1</p>'); 1",
    )
    .await?;
    ensure!(
        instrument_requests(&h).await == before,
        "markup without code made an instrument request"
    );
    for _ in 0..2 {
        page.evaluate("document.getElementById('plain').innerHTML = '<b onclick=\"f()\">x</b>'; 1")
            .await?;
    }
    ensure!(
        instrument_requests(&h).await == before + 1,
        "markup with a handler: one request, then the cache"
    );
    let clicked = page
        .evaluate("[clicked, innerSeen, adjSeen, outerSeen]")
        .await?;
    ensure!(
        clicked == serde_json::json!([2, 5, 6, 7]),
        "handlers ran: {clicked}"
    );
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    // The written script ran inside the writing script's action.
    let script = t.one_with_scope("script:inline #1")?;
    ensure!(
        t.written(script, "Global.writtenW") == Some(Some("2".to_string())),
        "document.write's script instrumented\n{}",
        t.dump()
    );
    // createContextualFragment's script ran when appended, in the same action.
    ensure!(
        t.written(script, "Global.ctxW") == Some(Some("3".to_string())),
        "createContextualFragment's script instrumented\n{}",
        t.dump()
    );
    // Each click action reads what its handler reads, at a position in dynamic code.
    let clicks = t.with_scope("fire:click @ ");
    ensure!(clicks.len() == 4, "four clicks: {clicks:?}\n{}", t.dump());
    let in_dynamic = |a, loc: &str| {
        t.accesses(a).iter().any(|x| {
            !x.write && x.loc == loc && x.pos.as_deref().is_some_and(|p| p.starts_with("eval-"))
        })
    };
    ensure!(
        in_dynamic(clicks[0], "Global.written")
            && t.written(clicks[0], "Global.clicked") == Some(Some("2".to_string())),
        "written button's handler instrumented\n{}",
        t.dump()
    );
    ensure!(
        in_dynamic(clicks[1], "Global.shared")
            && t.written(clicks[1], "Global.innerSeen") == Some(Some("5".to_string())),
        "innerHTML button's handler instrumented\n{}",
        t.dump()
    );
    ensure!(
        in_dynamic(clicks[2], "Global.shared")
            && t.written(clicks[2], "Global.adjSeen") == Some(Some("6".to_string())),
        "insertAdjacentHTML button's handler instrumented\n{}",
        t.dump()
    );
    ensure!(
        in_dynamic(clicks[3], "Global.shared")
            && t.written(clicks[3], "Global.outerSeen") == Some(Some("7".to_string())),
        "outerHTML button's handler instrumented\n{}",
        t.dump()
    );
    Ok(())
});
