//! The language end to end: the shipped policies and the prelude check cleanly, bad files
//! give line and column, the compiled form has what the runtime reads, garbage never panics,
//! and the augmented happens-before orders the paper's races.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use shepherd_policies::covers::Augmented;
use shepherd_policies::{PRELUDE, SHIPPED, Severity, load, parse_policy};
use shepherd_trace::{ActionType, TraceBuilder};

#[test]
fn shipped_policies_and_prelude_are_clean() {
    let mut d = Vec::new();
    let f = shepherd_policies::parser::parse(PRELUDE, &mut d);
    assert!(d.is_empty(), "prelude: {d:?}");
    assert_eq!(f.templates.len(), 4);
    for (name, text) in SHIPPED {
        let (p, warnings) =
            parse_policy(name, name, text).unwrap_or_else(|e| panic!("{name}:\n{e}"));
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert!(!p.rules.is_empty());
        assert!(
            shepherd_policies::summary(text).contains("Repairs") || text.contains("# Repairs"),
            "{name} says which race class it repairs"
        );
    }
}

#[test]
fn names_and_paths_compose() {
    let set = load("init-user, async-fifo").expect("two shipped policies");
    assert_eq!(set.names(), "init-user,async-fifo");
    let c = set.compile();
    assert_eq!(c.json["policies"].as_array().map(Vec::len), Some(2));
    assert!(c.postpones_scripts, "async-fifo orders inserted scripts");
    assert!(!load("init-user").unwrap().compile().postpones_scripts);
    let dir = tempfile_dir();
    let path = dir.join("site.policy");
    std::fs::write(&path, "scope \"https://shop.test/*\"\noption spinner off\npostpone click on \"#g1, #g2\" until js \"typeof loadThumbs === 'function'\"\n").unwrap();
    let set = load(path.to_str().unwrap()).expect("a file");
    let c = set.compile();
    let p = &c.json["policies"][0];
    assert_eq!(p["name"], "site");
    assert_eq!(p["spinner"], false);
    assert_eq!(p["scope"][0], "^https:\\/\\/shop\\.test\\/.*$");
    assert_eq!(p["rules"][0]["until"][0]["js"], 0);
    assert_eq!(c.js, vec!["typeof loadThumbs === 'function'".to_string()]);
    let e = load("init-usr").unwrap_err();
    assert!(e.rendered.contains("did you mean `init-user`"), "{e}");
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("shepherd-policies-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn bad_files_give_line_and_column() {
    let cases: &[(&str, (u32, u32), &str)] = &[
        (
            "postpone clik until parsed",
            (1, 10),
            "did you mean `click`",
        ),
        (
            "\n\ndiscard timer until parsed",
            (3, 9),
            "only user input may be discarded",
        ),
        (
            "on fork user as v then waitfor(v)",
            (1, 9),
            "not created by the page",
        ),
        ("on fork timer as v", (1, 1), "give it `then"),
        (
            "on fork timer as v then waitfr(v)",
            (1, 25),
            "did you mean `waitfor`",
        ),
        (
            "on fork timer as v then waitfor(v, v)",
            (1, 25),
            "takes 1 event",
        ),
        (
            "on fork timer then waitfor(v)",
            (1, 28),
            "not a bound event",
        ),
        ("postpone user until js \"a; b\"", (1, 26), "no `;`"),
        (
            "postpone timer on \"#x\"",
            (1, 10),
            "`on` needs an element target",
        ),
        (
            "postpone click delay < 10ms",
            (1, 10),
            "`delay` applies to timer",
        ),
        ("option max-delay 5", (1, 18), "duration"),
        (
            "option colour on\npostpone user until parsed",
            (1, 8),
            "unknown option",
        ),
        (
            "postpone user until parsd",
            (1, 21),
            "did you mean `parsed`",
        ),
        ("# only a comment", (1, 1), "no rules"),
        (
            "let user = click\npostpone user",
            (1, 5),
            "already names an event kind",
        ),
    ];
    for (src, at, msg) in cases {
        let e = parse_policy("t", "t.policy", src).expect_err(src);
        let first = e
            .diagnostics
            .iter()
            .find(|d| d.severity == Severity::Error)
            .expect("an error");
        assert_eq!((first.span.line, first.span.col), *at, "{src}: {e}");
        assert!(e.rendered.contains(msg), "{src}: wanted {msg:?} in\n{e}");
        assert!(
            e.rendered
                .starts_with(&format!("t.policy:{}:{}: error:", at.0, at.1)),
            "{e}"
        );
    }
}

#[test]
fn warnings_do_not_reject() {
    let (_, w) = parse_policy("t", "t.policy", "postpone click").expect("accepted");
    assert!(
        w.iter().any(|d| d.message.contains("never expires")),
        "{w:?}"
    );
}

#[test]
fn explanations_name_every_rule() {
    let set = load("init-user-plus").unwrap();
    let text = shepherd_policies::explain::explain(&set.policies[0]);
    assert!(text.contains("postpone user input"), "{text}");
    assert!(text.contains("until the document is parsed"), "{text}");
    assert!(text.contains("template waitrec(u)"), "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Any text: no panic, and every diagnostic points into the text.
    #[test]
    fn garbage_never_panics(src in "[ -~\\t\\n\u{e9}\u{1F600}]{0,200}") {
        if let Err(e) = parse_policy("g", "g.policy", &src) {
            let lines = src.split('\n').count() as u32;
            for d in &e.diagnostics {
                prop_assert!(d.span.line >= 1 && d.span.line <= lines.max(1), "{d:?}");
            }
        }
    }

    /// Text made of the language's own words: same, and accepted policies compile.
    #[test]
    fn word_salad_never_panics(words in prop::collection::vec(prop::sample::select(vec![
        "postpone", "discard", "dispatch", "on", "fork", "begin", "user", "click", "timer", "xhr",
        "script", "until", "parsed", "arrived(", "v", ")", "as", "then", "waitfor(", "once", ",",
        "\n", "\n  ", "template", "t(u):", "u", "js", "\"x\"", "after", "10s", "or", "from", "not",
        "url", "\"*\"", "state", "4", "delay", "<=", "let", "=", "option", "spinner", "off", "scope",
    ]), 0..40)) {
        let src = words.join(" ");
        if let Ok((p, _)) = parse_policy("w", "w.policy", &src) {
            let _ = shepherd_policies::compile::compile(&[p]);
        }
    }
}

/// The two unordered scripts of the paper (att.com): a loader inserts a.js and b.js; b.js
/// uses what a.js defines. async-fifo orders them; init-user does not.
#[test]
fn async_fifo_orders_two_inserted_scripts() {
    let mut b = TraceBuilder::new();
    let loader = b.begin(ActionType::Unknown, "script", "doc/script@#1#1");
    b.enter("script:inline #1", None).exit();
    b.end();
    let a = b.begin(
        ActionType::Unknown,
        "script",
        "doc/script@#1#1/script@https://s.test/a.js#1",
    );
    b.enter("script:inserted https://s.test/a.js", None)
        .write("Global.s_att", Some("Object[3]"))
        .exit();
    b.end();
    let bb = b.begin(
        ActionType::Unknown,
        "script",
        "doc/script@#1#1/script@https://s.test/b.js#1",
    );
    b.enter("script:inserted https://s.test/b.js", None)
        .read("Global.s_att", None)
        .exit();
    b.end();
    b.fork(loader, a).fork(loader, bb);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let fifo = load("async-fifo").unwrap();
    let aug = Augmented::new(&t, &hb, &fifo.policies);
    let rules = aug
        .orders(a, bb)
        .expect("async-fifo orders a.js before b.js");
    assert_eq!(rules, vec!["prelude:20".to_string()], "{:?}", aug.edges);
    let none = load("init-user").unwrap();
    assert!(
        Augmented::new(&t, &hb, &none.policies)
            .orders(a, bb)
            .is_none()
    );
}

/// Scenario B of the gallery: a click after init.js registered the listener but before
/// script.js declared loadThumbs. init-user postpones the click until DOMContentLoaded, which
/// comes after script.js.
#[test]
fn init_user_orders_a_click_after_the_page_is_parsed() {
    let mut b = TraceBuilder::new();
    let init = b.begin(ActionType::Unknown, "script", "doc/script@init.js#1");
    b.enter("script:external https://g.test/init.js", None)
        .write("BUTTON[3].click", None)
        .exit();
    b.end();
    let click = b.begin(
        ActionType::UserInterface,
        "event:click",
        "doc/event:click@#g1#1",
    );
    b.enter("fire:click @ BUTTON[3]", None)
        .read("Global.loadThumbs", Some("undefined"))
        .exit();
    b.end();
    let script = b.begin(ActionType::Unknown, "script", "doc/script@script.js#1");
    b.enter("script:external https://g.test/script.js", None)
        .write("Global.loadThumbs", Some("Function[9]"))
        .exit();
    b.end();
    let dcl = b.begin(
        ActionType::Unknown,
        "event:DOMContentLoaded",
        "doc/event:DOMContentLoaded@document#1",
    );
    b.enter("fire:DOMContentLoaded @ Document[1]", None).exit();
    b.end();
    b.join(init, script).join(script, dcl);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let aug = Augmented::new(&t, &hb, &load("init-user").unwrap().policies);
    // The click ran before script.js in this trace; under init-user it waits for DCL, so in
    // every schedule script.js (before DCL) runs first.
    assert!(
        aug.edges.is_empty(),
        "the trace is not valid under init-user: no edge is claimed from it"
    );
    assert!(aug.orders(script, click).is_none());
    // The same trace with the click after DOMContentLoaded: now the edge exists.
    let mut b = TraceBuilder::new();
    let script = b.begin(ActionType::Unknown, "script", "doc/script@script.js#1");
    b.enter("script:external https://g.test/script.js", None)
        .write("Global.loadThumbs", Some("Function[9]"))
        .exit();
    b.end();
    let dcl = b.begin(
        ActionType::Unknown,
        "event:DOMContentLoaded",
        "doc/event:DOMContentLoaded@document#1",
    );
    b.enter("fire:DOMContentLoaded @ Document[1]", None).exit();
    b.end();
    let click = b.begin(
        ActionType::UserInterface,
        "event:click",
        "doc/event:click@#g1#1",
    );
    b.enter("fire:click @ BUTTON[3]", None)
        .read("Global.loadThumbs", None)
        .exit();
    b.end();
    b.join(script, dcl);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let aug = Augmented::new(&t, &hb, &load("init-user").unwrap().policies);
    assert_eq!(
        aug.orders(script, click),
        Some(vec!["init-user:6".to_string()])
    );
    assert!(
        Augmented::new(&t, &hb, &load("async-fifo").unwrap().policies)
            .orders(script, click)
            .is_none()
    );
}

/// The parser's resources are events a policy names: external scripts by how they load,
/// inline scripts, images; the compiled form says what the proxy must make holdable and
/// what the runtime must watch the parser create.
#[test]
fn parser_resources_are_events_a_policy_names() {
    let src = "postpone inline-script on \"#boot\" until arrived(xhr url \"*/config\")\n\
               on fork img as v then img-next(v)\n\
               postpone script async url \"*/plugin.js\" until arrived(script async url \"*/lib.js\")\n\
               template img-next(u):\n  on fork img as w until arrived(u) once then order(u, w)\n";
    let (p, warnings) = parse_policy("site", "site.policy", src).unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let c = shepherd_policies::compile::compile(std::slice::from_ref(&p));
    assert!(
        c.gates.scripts && c.gates.inline_scripts && c.gates.images,
        "{:?}",
        c.gates
    );
    assert_eq!(c.json["parser"]["gates"]["inline"], true);
    let watch = c.json["parser"]["watch"].to_string();
    for k in ["img", "inline-script", "script"] {
        assert!(watch.contains(k), "{watch}");
    }
    let rules = c.json["policies"][0]["rules"].to_string();
    assert!(rules.contains(r#"{"loading":"async"}"#), "{rules}");
    assert!(rules.contains(r#""k":"inline-script""#), "{rules}");
    let text = shepherd_policies::explain::explain(&p);
    assert!(text.contains("loaded by the parser with async"), "{text}");
    // The shipped init-user-plus watches the parser's async scripts but holds nothing of
    // the parser's; async-fifo holds scripts.
    let plus = load("init-user-plus").unwrap().compile();
    assert!(!plus.gates.any(), "{:?}", plus.gates);
    assert!(plus.json["parser"]["watch"].to_string().contains("script"));
    let fifo = load("async-fifo").unwrap().compile();
    assert!(fifo.gates.scripts && !fifo.gates.inline_scripts && !fifo.gates.images);
    assert!(!load("init-user").unwrap().compile().gates.any());
    // Documents are made holdable only in the scope of a policy that may postpone them.
    let scoped = format!("scope \"https://a.test/*\"\n{src}");
    let (p, _) = parse_policy("site", "site.policy", &scoped).unwrap_or_else(|e| panic!("{e}"));
    let c = shepherd_policies::compile::compile(&[p]);
    assert_eq!(c.document_gates.for_page("https://a.test/shop"), c.gates);
    assert!(!c.document_gates.for_page("https://b.test/").any());
    assert!(fifo.document_gates.for_page("https://b.test/").scripts);
}

#[test]
fn parser_resource_filters_that_cannot_apply() {
    for (src, col, msg) in [
        (
            "postpone inline-script url \"*/a.js\"",
            10,
            "no URL of its own",
        ),
        ("postpone timer async", 10, "applies to script"),
        ("postpone img blocking", 10, "applies to script"),
        (
            "postpone fetch on \"img\"",
            10,
            "`on` needs an element target",
        ),
    ] {
        let e = parse_policy("t", "t.policy", src).expect_err(src);
        let first = &e.diagnostics[0];
        assert_eq!((first.span.line, first.span.col), (1, col), "{src}: {e}");
        assert!(e.rendered.contains(msg), "{src}: wanted {msg:?} in\n{e}");
    }
    let (_, w) =
        parse_policy("t", "t.policy", "postpone script blocking until parsed").expect("accepted");
    assert!(
        w.iter().any(|d| d.message.contains("parser cannot finish")),
        "{w:?}"
    );
    let (_, w) =
        parse_policy("t", "t.policy", "postpone script async until parsed").expect("accepted");
    assert!(w.is_empty(), "{w:?}");
}

/// The response of XHR 1 sends XHR 2 from its `load` listener (a request chain), and the
/// user clicks once XHR 2 answered. EventRaceCommander's observers expire after the awaited
/// event's handlers ran, so WAITREC(x1) sees the fork of x2 made by x1's own handler, and
/// init-user-plus orders x2's answer before the click (≤_P orders what the trace shows in the
/// order the policy allows: here the click came last).
#[test]
fn init_user_plus_waits_for_a_request_chain() {
    let mut b = TraceBuilder::new();
    let boot = b.begin(ActionType::Unknown, "script", "doc/script@#1#1");
    b.enter("script:inline #1", None).exit();
    b.end();
    let dcl = b.begin(
        ActionType::Unknown,
        "event:DOMContentLoaded",
        "doc/event:DOMContentLoaded@document#1",
    );
    b.enter("fire:DOMContentLoaded @ Document[1]", None).exit();
    b.end();
    let xhr = |b: &mut TraceBuilder, n: u32, ty: &str| {
        let a = b.begin(
            ActionType::Network,
            &format!("event:{ty}"),
            &format!("doc/xhr@/{n}#1/{ty}#1"),
        );
        b.enter(&format!("fire:{ty} @ XMLHttpRequest[{n}]"), None);
        if n == 6 && ty == "load" {
            b.write("Global.price", Some("12"));
        }
        b.exit();
        b.end();
        a
    };
    let rs1 = xhr(&mut b, 5, "readystatechange");
    let load1 = xhr(&mut b, 5, "load");
    let end1 = xhr(&mut b, 5, "loadend");
    let rs2 = xhr(&mut b, 6, "readystatechange");
    let load2 = xhr(&mut b, 6, "load");
    let end2 = xhr(&mut b, 6, "loadend");
    let click = b.begin(
        ActionType::UserInterface,
        "event:click",
        "doc/event:click@#buy#1",
    );
    b.enter("fire:click @ BUTTON[3]", None)
        .read("Global.price", Some("12"))
        .exit();
    b.end();
    b.join(boot, dcl);
    for a in [rs1, load1, end1] {
        b.fork(boot, a);
    }
    for a in [rs2, load2, end2] {
        b.fork(load1, a);
    }
    b.join(rs1, load1)
        .join(load1, end1)
        .join(rs2, load2)
        .join(load2, end2);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let plus = load("init-user-plus").unwrap();
    let aug = Augmented::new(&t, &hb, &plus.policies);
    assert!(
        aug.orders(load2, click).is_some(),
        "x2's answer before the click: {:?}",
        aug.edges
    );
    // The edge comes from x2's whole response (its last event), through the chain.
    assert!(aug.orders(end2, click).is_some(), "{:?}", aug.edges);
    assert!(
        Augmented::new(&t, &hb, &load("init-user").unwrap().policies)
            .orders(load2, click)
            .is_none()
    );
}

/// A parse chunk with two `<script async>` tags, lib.js created first: async-fifo orders
/// them in the order the parser created them (the order the chunk wrote their nodes), not
/// the order they ran or their fork arcs were written.
#[test]
fn async_fifo_orders_the_parsers_async_scripts_in_document_order() {
    // (lib first?) In both traces the fork arcs name plugin.js first.
    for lib_first in [true, false] {
        let mut b = TraceBuilder::new();
        let chunk = b.begin(ActionType::Unknown, "parse", "doc/parse#1");
        b.enter("parse HTML", None)
            .write("NodeTree:7", Some("DOMNode[7]"))
            .write("NodeTree:8", Some("DOMNode[8]"))
            .exit();
        b.end();
        let script = |b: &mut TraceBuilder, name: &str, node: u32, lib: bool| {
            let a = b.begin(
                ActionType::Unknown,
                "script",
                &format!("doc/script@{name}#1"),
            );
            b.read(&format!("NodeTree:{node}"), None);
            b.enter(&format!("script:async https://s.test/{name}"), None);
            if lib {
                b.write("Global.Lib", Some("Object[3]"));
            } else {
                b.read("Global.Lib", None);
            }
            b.exit();
            b.end();
            a
        };
        let (lib, plugin) = if lib_first {
            let l = script(&mut b, "lib.js", 7, true);
            (l, script(&mut b, "plugin.js", 8, false))
        } else {
            let p = script(&mut b, "plugin.js", 8, false);
            (script(&mut b, "lib.js", 7, true), p)
        };
        b.fork(chunk, plugin).fork(chunk, lib);
        let t = b.finish();
        let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
        let aug = Augmented::new(&t, &hb, &load("async-fifo").unwrap().policies);
        if lib_first {
            assert!(aug.orders(lib, plugin).is_some(), "{:?}", aug.edges);
        } else {
            // The trace took the order the policy forbids: nothing is claimed from it (in
            // fork-arc order, plugin.js would have been taken for the first).
            assert!(aug.edges.is_empty(), "{:?}", aug.edges);
        }
    }
}

/// A parser-blocking script the parser inserts after an inline script sent an XHR: the
/// network FIFO of async-fifo makes the script wait for the XHR's answer.
#[test]
fn async_fifo_holds_a_parser_blocking_script_until_an_earlier_xhr_answered() {
    let mut b = TraceBuilder::new();
    let chunk1 = b.begin(ActionType::Unknown, "parse", "doc/parse#1");
    b.enter("parse HTML", None).exit();
    b.end();
    let boot = b.begin(ActionType::Unknown, "script", "doc/script@#1#1");
    b.enter("script:inline #1", None).exit();
    b.end();
    let chunk2 = b.begin(ActionType::Unknown, "parse", "doc/parse#2");
    b.enter("parse HTML", None).exit();
    b.end();
    let answer = b.begin(
        ActionType::Network,
        "event:load",
        "doc/script@#1#1/xhr@/config#1/load#1",
    );
    b.enter("fire:load @ XMLHttpRequest[4]", None)
        .write("Global.config", Some("Object[9]"))
        .exit();
    b.end();
    let app = b.begin(ActionType::Unknown, "script", "doc/script@app.js#1");
    b.enter("script:external https://s.test/app.js", None)
        .read("Global.config", None)
        .exit();
    b.end();
    b.join(chunk1, boot).join(boot, chunk2).join(chunk2, app);
    b.fork(boot, answer);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let aug = Augmented::new(&t, &hb, &load("async-fifo").unwrap().policies);
    assert!(aug.orders(answer, app).is_some(), "{:?}", aug.edges);
    assert!(
        Augmented::new(&t, &hb, &load("init-user").unwrap().policies)
            .orders(answer, app)
            .is_none()
    );
}

/// The parser's images: a policy over `img` orders their loads in the order the parser
/// created them.
#[test]
fn image_loads_in_request_order() {
    let src = "on fork img as v then img-next(v)\n\
               template img-next(u):\n  on fork img as w until arrived(u) once then order(u, w)\n";
    let (p, _) = parse_policy("images", "images.policy", src).unwrap_or_else(|e| panic!("{e}"));
    let mut b = TraceBuilder::new();
    let chunk = b.begin(ActionType::Unknown, "parse", "doc/parse#1");
    b.enter("parse HTML", None)
        .write("NodeTree:4", Some("DOMNode[4]"))
        .write("NodeTree:5", Some("DOMNode[5]"))
        .exit();
    b.end();
    let first = b.begin(
        ActionType::Network,
        "event:load",
        "doc/parse#1/event:load#1",
    );
    b.read("NodeTree:4", None);
    b.enter("fire:load @ IMG[4]", None)
        .write("Global.firstDone", Some("true"))
        .exit();
    b.end();
    let second = b.begin(
        ActionType::Network,
        "event:load",
        "doc/parse#1/event:load#2",
    );
    b.read("NodeTree:5", None);
    b.enter("fire:load @ IMG[5]", None)
        .read("Global.firstDone", None)
        .exit();
    b.end();
    b.fork(chunk, second).fork(chunk, first);
    let t = b.finish();
    let hb: Vec<(u32, u32)> = t.arcs.iter().map(|a| (a.tail, a.head)).collect();
    let aug = Augmented::new(&t, &hb, std::slice::from_ref(&p));
    assert!(aug.orders(first, second).is_some(), "{:?}", aug.edges);
}
