//! JSONL reader and writer: round trips, the documented example, strict errors, tolerance.

mod common;

use proptest::prelude::*;
use shepherd_trace::{
    ActionType, ArcKind, JsonlLoader, Op, Pos, ReadError, Trace, TraceBuilder, Val, read_jsonl,
    to_jsonl_bytes,
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn read_write_round_trip(t in common::trace()) {
        let bytes = to_jsonl_bytes(&t);
        let back = read_jsonl(&bytes[..]).unwrap();
        prop_assert_eq!(&back, &t);
        // And the canonical text is a fixed point.
        prop_assert_eq!(to_jsonl_bytes(&back), bytes);
    }
}

const EXAMPLE: &str = r#"{"format":"shepherd-trace","version":1,"page":"https://a.test/","extra":[1,2]}
["s",0,"script"]
["s",1,"doc/script:0"]
["b",0,0,0,1]
["s",2,"script:inline #0"]
["s",3,"https://a.test/:3:9"]
["e",2,3]
["s",4,"Global.init"]
["s",5,"false"]
["w",4,5]
["x"]
["n",0]
["s",6,"timer"]
["s",7,"doc/script:0/timer:0"]
["b",1,1,6,7]
["a",0,1,"f",100]
["r",4]
["s",8,"TypeError: x is \"undefined\"\u00e9\ud83e\udd80"]
["!",8]
["n",1]
 [ "b" , 2 , 2 , 6 , 7 ]
["a",0,2,"j"]
"#;

#[test]
fn reads_the_documented_records() {
    let t = read_jsonl(EXAMPLE.as_bytes()).unwrap();
    assert_eq!(t.header.version, 1);
    assert_eq!(t.header.page.as_deref(), Some("https://a.test/"));
    assert_eq!(t.actions.len(), 3);
    assert_eq!(t.actions[1].ty, ActionType::Timer);
    assert_eq!(t.strings.get(t.actions[1].kind), "timer");
    assert_eq!(t.arcs.len(), 2);
    assert_eq!(t.arcs[0].kind, ArcKind::Fork);
    assert_eq!(t.arcs[0].delay_ms, Some(100));
    assert_eq!(t.arcs[1].kind, ArcKind::Join);
    assert_eq!(t.arcs[1].delay_ms, None);
    let init = t.strings.lookup("Global.init").unwrap();
    let s = |x: &str| t.strings.lookup(x).unwrap();
    assert_eq!(
        t.ops_of(0),
        &[
            Op::Enter {
                scope: s("script:inline #0"),
                src: Some(s("https://a.test/:3:9"))
            },
            Op::Write {
                loc: init,
                value: Val::new(s("false")),
                pos: Pos::NONE
            },
            Op::Exit,
        ]
    );
    assert_eq!(
        t.ops_of(1),
        &[
            Op::Read {
                loc: init,
                value: Val::NONE,
                pos: Pos::NONE
            },
            Op::Exception {
                message: s("TypeError: x is \"undefined\"é🦀"),
                src: None
            },
        ]
    );
    // Action 2 was never ended (trace cut at unload): kept, with no ops.
    assert!(t.ops_of(2).is_empty());
}

#[test]
fn builder_and_reader_agree() {
    let mut b = TraceBuilder::new();
    b.page("https://a.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.enter("script:inline #0", Some("https://a.test/:3:9"));
    b.write("Global.init", Some("false"));
    b.exit();
    b.end();
    b.begin(ActionType::Timer, "timer", "doc/script:0/timer:0");
    b.read("Global.init", None);
    b.exception("TypeError: x is \"undefined\"é🦀", None);
    b.end();
    b.begin(ActionType::UserInterface, "timer", "doc/script:0/timer:0");
    b.fork_delay(0, 1, 100);
    b.join(0, 2);
    let mut built = b.finish();
    // EXAMPLE is a version-1 trace: version 2 readers still read it, and it says so.
    built.header.version = 1;
    assert_eq!(read_jsonl(EXAMPLE.as_bytes()).unwrap(), built);
}

/// Version 2: reads and writes with a source position, `null` standing for no value.
const EXAMPLE_V2: &str = r#"{"format":"shepherd-trace","version":2,"page":"https://a.test/"}
["s",0,"script"]
["s",1,"doc/script:0"]
["b",0,0,0,1]
["s",2,"Global.x"]
["s",3,"https://a.test/app.js:3:9"]
["r",2,null,3]
["s",4,"1"]
["s",5,"https://a.test/#inline-3fa2c:1:5"]
["w",2,4,5]
["r",2,4]
["w" , 2 , null , 5 ]
["n",0]
"#;

#[test]
fn reads_positions_of_accesses() {
    let t = read_jsonl(EXAMPLE_V2.as_bytes()).unwrap();
    assert_eq!(t.header.version, 2);
    let s = |x: &str| t.strings.lookup(x).unwrap();
    let (x, one) = (s("Global.x"), s("1"));
    let (app, inline) = (
        Pos::new(s("https://a.test/app.js:3:9")),
        Pos::new(s("https://a.test/#inline-3fa2c:1:5")),
    );
    assert_eq!(
        t.ops_of(0),
        &[
            Op::Read {
                loc: x,
                value: Val::NONE,
                pos: app
            },
            Op::Write {
                loc: x,
                value: Val::new(one),
                pos: inline
            },
            Op::Read {
                loc: x,
                value: Val::new(one),
                pos: Pos::NONE
            },
            Op::Write {
                loc: x,
                value: Val::NONE,
                pos: inline
            },
        ]
    );
    assert_eq!(t.ops_of(0)[0].pos(), Some(s("https://a.test/app.js:3:9")));
    // The builder makes the same trace, and the writer writes the canonical form of it.
    let mut b = TraceBuilder::new();
    b.page("https://a.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.read_at("Global.x", None, Some("https://a.test/app.js:3:9"));
    b.write_at(
        "Global.x",
        Some("1"),
        Some("https://a.test/#inline-3fa2c:1:5"),
    );
    b.read("Global.x", Some("1"));
    b.write_at("Global.x", None, Some("https://a.test/#inline-3fa2c:1:5"));
    b.end();
    let mut built = b.finish();
    built.header.version = 2;
    assert_eq!(t, built);
    // The writer writes the current version (the records are the same).
    let text = String::from_utf8(to_jsonl_bytes(&built)).unwrap();
    assert_eq!(
        text,
        EXAMPLE_V2
            .replace("[\"w\" , 2 , null , 5 ]", "[\"w\",2,null,5]")
            .replace(
                "\"version\":2",
                &format!("\"version\":{}", shepherd_trace::FORMAT_VERSION)
            )
    );
    // Malformed positions are errors like any other string reference.
    for (bad, want) in [
        (r#"["r",2,null,9]"#, "string 9 used before its definition"),
        (r#"["r",2,3,3,3]"#, "too many elements"),
        (r#"["r",2,nul,3]"#, "non-negative integer"),
        (r#"["w",2,null,null]"#, "non-negative integer"),
    ] {
        let text = format!(
            "{}\n{bad}\n",
            EXAMPLE_V2
                .trim_end()
                .trim_end_matches("[\"n\",0]")
                .trim_end()
        );
        let e = read_jsonl(text.as_bytes()).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

fn err(text: &str) -> (u64, u64, String) {
    match read_jsonl(text.as_bytes()) {
        Err(ReadError::Jsonl {
            line,
            offset,
            message,
        }) => (line, offset, message),
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// Version 3: node descriptions, anywhere after the header, with `null` for what is unknown.
const EXAMPLE_V3: &str = r##"{"format":"shepherd-trace","version":3,"page":"https://a.test/"}
["s",0,"script"]
["s",1,"doc/script:0"]
["b",0,0,0,1]
["s",2,"DOMNode[19].value"]
["w",2]
["s",3,"input"]
["s",4,"input#coupon"]
["s",5,"coupon"]
["d",19,3,4,5]
["s",6,"li"]
["s",7,"#todo-list > li:nth-child(1)"]
["s",8,"done editing"]
["d",20,6,7,null,8]
["n",0]
["s",9,"#text"]
["d",21,9]
["d",22,6,null]
["d",19,6]
"##;

#[test]
fn reads_node_descriptions() {
    let t = read_jsonl(EXAMPLE_V3.as_bytes()).unwrap();
    assert_eq!(t.header.version, 3);
    assert_eq!(t.ops_of(0).len(), 1, "a description is not an operation");
    let s = |x: &str| t.strings.lookup(x);
    let d = |node, tag, path: Option<&str>, id: Option<&str>, classes: Option<&str>| {
        shepherd_trace::NodeDesc {
            node,
            tag: s(tag).unwrap(),
            path: path.and_then(s),
            id: id.and_then(s),
            classes: classes.and_then(s),
        }
    };
    // The second description of node 19 (a batch sent again) is ignored.
    assert_eq!(
        t.nodes,
        vec![
            d(19, "input", Some("input#coupon"), Some("coupon"), None),
            d(
                20,
                "li",
                Some("#todo-list > li:nth-child(1)"),
                None,
                Some("done editing")
            ),
            d(21, "#text", None, None, None),
            d(22, "li", None, None, None),
        ]
    );
    // The builder makes the same trace; the writer puts descriptions after the actions.
    let mut b = TraceBuilder::new();
    b.page("https://a.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.write("DOMNode[19].value", None);
    b.end();
    b.node(19, "input", Some("input#coupon"), Some("coupon"), None);
    b.node(
        20,
        "li",
        Some("#todo-list > li:nth-child(1)"),
        None,
        Some("done editing"),
    );
    b.node(21, "#text", None, None, None);
    b.node(22, "li", None, None, None);
    let mut built = b.finish();
    built.header.version = 3;
    assert_eq!(t, built);
    let text = String::from_utf8(to_jsonl_bytes(&built)).unwrap();
    assert!(
        text.ends_with("[\"n\",0]\n[\"s\",3,\"input\"]\n[\"s\",4,\"input#coupon\"]\n[\"s\",5,\"coupon\"]\n[\"d\",19,3,4,5]\n[\"s\",6,\"li\"]\n[\"s\",7,\"#todo-list > li:nth-child(1)\"]\n[\"s\",8,\"done editing\"]\n[\"d\",20,6,7,null,8]\n[\"s\",9,\"#text\"]\n[\"d\",21,9]\n[\"d\",22,6]\n"),
        "{text}"
    );
    // Malformed descriptions are errors like any other record.
    for (bad, want) in [
        (r#"["d",1,99]"#, "string 99 used before its definition"),
        (r#"["d",1,3,4,5,5,5]"#, "too many elements"),
        (r#"["d",1]"#, "`,`"),
        (r#"["d",-1,3]"#, "non-negative integer"),
        (r#"["d",1,null]"#, "non-negative integer"),
        (r#"["d",4294967296,3]"#, "too large"),
    ] {
        let text = format!("{}{bad}\n", EXAMPLE_V3);
        match read_jsonl(text.as_bytes()) {
            Err(ReadError::Jsonl { line, message, .. }) => {
                assert_eq!(line, 20, "{bad}");
                assert!(message.contains(want), "{bad}: {message}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

/// Version 4: the controls a tool exercised, anywhere after the header; a later report of a
/// control replaces the earlier one.
const EXAMPLE_V4: &str = r##"{"format":"shepherd-trace","version":4,"page":"https://a.test/"}
["s",0,"script"]
["s",1,"doc/script:0"]
["b",0,0,0,1]
["s",2,"click,key-activate"]
["s",3,""]
["c",7,2,3]
["n",0]
["s",4,"key-choose,pointer-choose"]
["s",5,"key-choose"]
["c",9,4,5]
["s",6,"click"]
["c",7,2,6]
"##;

#[test]
fn reads_exercised_controls() {
    let t = read_jsonl(EXAMPLE_V4.as_bytes()).unwrap();
    assert_eq!(t.header.version, 4);
    assert_eq!(EXAMPLE_V4.lines().count(), 13);
    assert_eq!(t.ops_of(0).len(), 0, "a control is not an operation");
    let s = |x: &str| t.strings.lookup(x).unwrap();
    let c = |node, offered, done| shepherd_trace::Control {
        node,
        offered: s(offered),
        done: s(done),
    };
    assert_eq!(
        t.controls,
        vec![
            c(7, "click,key-activate", "click"),
            c(9, "key-choose,pointer-choose", "key-choose"),
        ]
    );
    // The builder makes the same trace; the writer puts controls last.
    let mut b = TraceBuilder::new();
    b.page("https://a.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.end();
    b.control(7, "click,key-activate", "");
    b.control(9, "key-choose,pointer-choose", "key-choose");
    b.control(7, "click,key-activate", "click");
    let built = b.finish();
    assert_eq!(
        t.controls.iter().map(|c| c.node).collect::<Vec<_>>(),
        built.controls.iter().map(|c| c.node).collect::<Vec<_>>()
    );
    let again = read_jsonl(to_jsonl_bytes(&built).as_slice()).unwrap();
    assert_eq!(again, built);
    let text = String::from_utf8(to_jsonl_bytes(&built)).unwrap();
    assert!(
        text.starts_with(&format!(
            "{{\"format\":\"shepherd-trace\",\"version\":{}",
            shepherd_trace::FORMAT_VERSION
        )),
        "{text}"
    );
    assert!(text.ends_with("[\"c\",9,4,5]\n"), "{text}");
    for (bad, want) in [
        (r#"["c",1,99,2]"#, "string 99 used before its definition"),
        (r#"["c",1,2]"#, "`,`"),
        (r#"["c",1,2,3,4]"#, "too many elements"),
        (r#"["c",-1,2,3]"#, "non-negative integer"),
        (r#"["c",1,null,3]"#, "non-negative integer"),
    ] {
        let text = format!("{EXAMPLE_V4}{bad}\n");
        match read_jsonl(text.as_bytes()) {
            Err(ReadError::Jsonl { line, message, .. }) => {
                assert_eq!(line, 14, "{bad}: the line after the example's 13");
                assert!(message.contains(want), "{bad}: {message}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
}

// Action 0 logs a scope, a read in it, an exception; its accesses of `Object[7].f` are logged
// late, while action 1 runs: a write after its first operation (inside the scope), a read and
// a write after its third (after the scope, before the exception).
const EXAMPLE_V5: &str = r##"{"format":"shepherd-trace","version":5,"page":"https://a.test/"}
["s",0,"script"]
["s",1,"doc/script:0"]
["b",0,0,0,1]
["s",2,"fire:click @ BUTTON[3]"]
["e",2]
["s",3,"Global.x"]
["r",3]
["x"]
["s",4,"boom"]
["!",4]
["n",0]
["s",5,"timer"]
["s",6,"doc/timer#1"]
["b",1,1,5,6]
["a",0,1,"f"]
["s",7,"Object[7].f"]
["s",8,"1"]
["R",0,3,7]
["W",0,1,7,8]
["s",9,"https://a.test/app.js:2:4"]
["W",0,3,7,null,9]
["r",7,null,9]
["n",1]
"##;

#[test]
fn late_operations_are_placed_where_they_happened() {
    let t = read_jsonl(EXAMPLE_V5.as_bytes()).unwrap();
    assert_eq!(t.header.version, 5);
    // The builder logs them in place; the two traces are the same.
    let mut b = TraceBuilder::new();
    b.page("https://a.test/");
    b.begin(ActionType::Unknown, "script", "doc/script:0");
    b.enter("fire:click @ BUTTON[3]", None);
    b.write("Object[7].f", Some("1"));
    b.read("Global.x", None);
    b.exit();
    b.read("Object[7].f", None);
    b.write_at("Object[7].f", None, Some("https://a.test/app.js:2:4"));
    b.exception("boom", None);
    b.end();
    let timer = b.begin(ActionType::Timer, "timer", "doc/timer#1");
    b.fork(0, timer);
    b.read_at("Object[7].f", None, Some("https://a.test/app.js:2:4"));
    b.end();
    let built = b.finish();
    let names = |t: &Trace, a: u32| -> Vec<String> {
        t.ops_of(a)
            .iter()
            .map(|o| match *o {
                Op::Read { loc, .. } => format!("r {}", t.strings.get(loc)),
                Op::Write { loc, .. } => format!("w {}", t.strings.get(loc)),
                Op::Enter { scope, .. } => format!("e {}", t.strings.get(scope)),
                Op::Exit => "x".into(),
                Op::Exception { .. } => "!".into(),
            })
            .collect()
    };
    assert_eq!(
        names(&t, 0),
        [
            "e fire:click @ BUTTON[3]",
            "w Object[7].f",
            "r Global.x",
            "x",
            "r Object[7].f",
            "w Object[7].f",
            "!"
        ]
    );
    assert_eq!(names(&t, 1), ["r Object[7].f"]);
    assert_eq!(names(&t, 0), names(&built, 0));
    assert_eq!(names(&t, 1), names(&built, 1));
    // Values and positions too.
    let texts = |t: &Trace, a: u32| -> Vec<(Option<String>, Option<String>)> {
        t.ops_of(a)
            .iter()
            .map(|o| match *o {
                Op::Read { value, pos, .. } | Op::Write { value, pos, .. } => (
                    value.get().map(|v| t.strings.get(v).to_owned()),
                    pos.get().map(|p| t.strings.get(p).to_owned()),
                ),
                _ => (None, None),
            })
            .collect()
    };
    assert_eq!(texts(&t, 0), texts(&built, 0));
    assert_eq!(texts(&t, 1), texts(&built, 1));
    // The writer logs every operation in place: read back, the same trace again.
    let again = read_jsonl(to_jsonl_bytes(&t).as_slice()).unwrap();
    assert_eq!(again, t);
    assert!(
        !String::from_utf8(to_jsonl_bytes(&t))
            .unwrap()
            .contains("[\"R\"")
    );
    // In parts, cut at every line: the same.
    for (i, _) in EXAMPLE_V5.match_indices('\n') {
        let parts = shepherd_trace::read_jsonl_parts(EXAMPLE_V5.as_bytes(), &[i as u64 + 1]);
        assert_eq!(parts.unwrap(), t, "cut after byte {i}");
    }
    let before_end = EXAMPLE_V5.trim_end().trim_end_matches("[\"n\",1]");
    for (bad, want) in [
        (
            r#"["R",2,0,7]"#,
            "late operation of action 2, which has not begun",
        ),
        (
            r#"["W",0,5,7]"#,
            "late operation after 5 operations of action 0, which logged 4",
        ),
        // Action 1 has logged one operation so far.
        (
            r#"["R",1,2,7]"#,
            "late operation after 2 operations of action 1, which logged 1",
        ),
        (r#"["R",0,1]"#, "`,`"),
        (r#"["R",0,1,99]"#, "string 99 used before its definition"),
        (r#"["W",0,-1,7]"#, "non-negative integer"),
    ] {
        let text = format!("{before_end}{bad}\n");
        let e = read_jsonl(text.as_bytes()).unwrap_err().to_string();
        assert!(e.contains(want), "{bad}: {e}");
    }
}

const H: &str = "{\"format\":\"shepherd-trace\",\"version\":1}\n"; // 40 bytes

#[test]
fn errors_name_line_and_offset() {
    assert_eq!(H.len(), 40);
    // (body after the header, line, the text the offset must point at (last occurrence), message)
    let cases: &[(&str, u64, &str, &str)] = &[
        ("[\"q\",1]\n", 2, "\"q\"", "unknown record tag"),
        ("[\"bb\",1]\n", 2, "\"bb\"", "unknown tag"),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,1]\n",
            3,
            "1]",
            "string 1 used before",
        ),
        ("[\"s\",1,\"k\"]\n", 2, "1,\"k", "out of order"),
        (
            "[\"s\",0,\"k\"]\n[\"s\",0,\"j\"]\n",
            3,
            "0,\"j",
            "redefined",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",1,0,0,0]\n",
            3,
            "1,0,0,0",
            "action 1 begins out of order",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,9,0,0]\n",
            3,
            "9,",
            "unknown action type 9",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"b\",1,0,0,0]\n[\"a\",1,1,\"f\"]\n",
            5,
            "1,1,",
            "tail must be smaller",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"a\",0,1,\"f\"]\n",
            4,
            "1,\"f",
            "has not begun",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"a\",0,1,\"z\"]\n",
            4,
            "\"z",
            "unknown arc kind",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"r\",0]\n",
            3,
            "\"r",
            "outside an action",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"n\",0]\n[\"w\",0]\n",
            5,
            "\"w",
            "outside an action",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"n\",3]\n",
            4,
            "3]",
            "while action 0 is open",
        ),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"x\",1]\n",
            4,
            ",1]",
            "too many elements",
        ),
        ("[\"s\",0,\"k\"]\n[\"b\",0,0,0]\n", 3, "]\n", "`,`"),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,-1]\n",
            3,
            "-1",
            "non-negative integer",
        ),
        ("[\"s\",0,\"k\"]\n[\"b\",0,0,0,0.5]\n", 3, "0.5", "integer"),
        (
            "[\"s\",0,\"k\"]\n[\"b\",0,0,0,99999999999]\n",
            3,
            "99999999999",
            "too large",
        ),
        ("[\"s\",0,\"k\\q\"]\n", 2, "\\q", "invalid escape"),
        ("[\"s\",0,\"k\n", 2, "\"k", "unterminated"),
        ("[\"s\",0,\"\\ud800\"]\n", 2, "\\ud800", "surrogate"),
        ("[\"s\",0,\"k\"] x\n", 2, "x\n", "after the record"),
        ("nonsense\n", 2, "nonsense", "expected a record"),
        (
            "{\"format\":\"shepherd-trace\",\"version\":7}\n",
            2,
            "{",
            "version 7",
        ),
    ];
    for (body, line, needle, msg) in cases {
        let got = err(&format!("{H}{body}"));
        let offset = (H.len() + body.rfind(needle).unwrap()) as u64;
        assert_eq!((got.0, got.1), (*line, offset), "{body:?}: {}", got.2);
        assert!(got.2.contains(msg), "{body:?}: {:?} lacks {msg:?}", got.2);
    }
}

#[test]
fn header_is_required_and_checked() {
    assert!(err("").2.contains("no header"));
    assert!(err("[\"x\"]\n").2.contains("no header"));
    assert!(
        err("{\"format\":\"other\",\"version\":1}\n")
            .2
            .contains("not a shepherd trace")
    );
    assert!(err("{\"version\":1}\n").2.contains("bad header"));
    // Invalid UTF-8 in a string names its byte.
    let mut bytes = H.as_bytes().to_vec();
    bytes.extend_from_slice(b"[\"s\",0,\"ab\xff\"]\n");
    match read_jsonl(&bytes[..]) {
        Err(ReadError::Jsonl {
            offset, message, ..
        }) => {
            assert_eq!(offset, 40 + 10);
            assert!(message.contains("UTF-8"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tolerates_what_the_runtime_can_produce() {
    // Concatenated upload batches (repeated header, re-sent identical string definitions,
    // blank lines, CRLF), repeated reads, an action begun while another was never ended.
    let text = concat!(
        "{\"format\":\"shepherd-trace\",\"version\":1,\"page\":\"p\"}\r\n",
        "[\"s\",0,\"k\"]\r\n",
        "[\"b\",0,0,0,0]\n",
        "[\"r\",0]\n",
        "[\"r\",0]\n",
        "\n",
        "{\"format\":\"shepherd-trace\",\"version\":1,\"page\":\"other\"}\n",
        "[\"s\",0,\"k\"]\n",
        "[\"s\",1,\"k\"]\n",
        "[\"b\",1,0,1,0]\n",
        "[\"w\",1]\n",
        "[\"n\",1]",
    );
    let t = read_jsonl(text.as_bytes()).unwrap();
    assert_eq!(t.header.page.as_deref(), Some("p"));
    assert_eq!(t.actions.len(), 2);
    assert_eq!(t.ops_of(0).len(), 2);
    // String 1 duplicates string 0's text: both numbers resolve to the same interned id.
    assert_eq!(
        t.ops_of(1),
        &[Op::Write {
            loc: 0,
            value: Val::NONE,
            pos: Pos::NONE
        }]
    );
    assert_eq!(t.strings.len(), 1);
}

#[test]
fn loader_takes_batches() {
    let t0 = read_jsonl(EXAMPLE.as_bytes()).unwrap();
    let mut l = JsonlLoader::new();
    for line in EXAMPLE.lines() {
        l.line(line.as_bytes()).unwrap();
    }
    assert_eq!(l.finish().unwrap(), t0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Lines straddling buffer fills are reassembled: any buffer size reads the same trace.
    #[test]
    fn any_buffer_size_reads_the_same(t in common::trace(), cap in 1usize..64) {
        let bytes = to_jsonl_bytes(&t);
        let r = std::io::BufReader::with_capacity(cap, &bytes[..]);
        prop_assert_eq!(read_jsonl(r).unwrap(), t);
    }
}

#[test]
fn errors_in_later_buffer_fills_keep_absolute_offsets() {
    let mut text = String::from(H);
    text.push_str("[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n");
    for _ in 0..50 {
        text.push_str("[\"r\",0]\n");
    }
    let bad_at = text.len();
    text.push_str("[\"r\",7]\n[\"n\",0]\n");
    for cap in [3, 16, 4096] {
        let r = std::io::BufReader::with_capacity(cap, text.as_bytes());
        match read_jsonl(r) {
            Err(ReadError::Jsonl { line, offset, .. }) => {
                assert_eq!(line, 54);
                assert_eq!(offset, (bad_at + 5) as u64);
            }
            other => panic!("{other:?}"),
        }
    }
    // The same through JsonlLoader::line.
    let mut l = JsonlLoader::new();
    let mut got = None;
    for line in text.split_inclusive('\n') {
        if let Err(e) = l.line(line.as_bytes()) {
            got = Some(e);
            break;
        }
    }
    assert_eq!(got.and_then(|e| e.offset()), Some((bad_at + 5) as u64));
}
