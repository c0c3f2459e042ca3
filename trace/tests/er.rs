//! ER_actionlog export and import: exact bytes for a small trace, round trips (with and without
//! our trailer), EventRacer-style inputs, and malformed files.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use proptest::prelude::*;
use shepherd_trace::er::{read_er, to_er_bytes};
use shepherd_trace::{ActionType, ArcKind, Op, ReadError, Trace, TraceBuilder};

/// An op with its strings resolved, for comparing traces whose string numbering differs.
#[derive(Debug, PartialEq, Eq, Clone)]
enum R {
    Read(String, Option<String>, Option<String>),
    Write(String, Option<String>, Option<String>),
    Enter(String, Option<String>),
    Exit,
    Exception(String, Option<String>),
}

fn resolve(t: &Trace, op: &Op) -> R {
    let s = |id: u32| t.strings.get(id).replace('\0', "\u{FFFD}");
    let o = |id: Option<u32>| id.map(s);
    match *op {
        Op::Read { loc, value, pos } => R::Read(s(loc), o(value.get()), o(pos.get())),
        Op::Write { loc, value, pos } => R::Write(s(loc), o(value.get()), o(pos.get())),
        Op::Enter { scope, src } => R::Enter(s(scope), o(src)),
        Op::Exit => R::Exit,
        Op::Exception { message, src } => R::Exception(s(message), o(src)),
    }
}

/// A node description with its strings resolved.
type RNode = (u32, String, Option<String>, Option<String>, Option<String>);

type Resolved = (
    Option<String>,
    Vec<(ActionType, String, String, Vec<R>)>,
    Vec<(u32, u32, ArcKind, Option<u32>)>,
    Vec<RNode>,
);

fn everything(t: &Trace) -> Resolved {
    let s = |id: u32| t.strings.get(id).replace('\0', "\u{FFFD}");
    (
        t.header.page.as_ref().map(|p| p.replace('\0', "\u{FFFD}")),
        t.actions
            .iter()
            .map(|a| {
                let ops = t.ops_of(a.id).iter().map(|o| resolve(t, o)).collect();
                (a.ty, s(a.kind), s(a.stable), ops)
            })
            .collect(),
        t.arcs
            .iter()
            .map(|a| (a.tail, a.head, a.kind, a.delay_ms))
            .collect(),
        t.nodes
            .iter()
            .map(|d| {
                let o = |id: Option<u32>| id.map(s);
                (d.node, s(d.tag), o(d.path), o(d.id), o(d.classes))
            })
            .collect(),
    )
}

/// The happens-before graph (arcs with delays, no kinds) and the accesses of each action.
type HbAndAccesses = (Vec<(u32, u32, Option<u32>)>, Vec<Vec<R>>);

fn hb_and_accesses(t: &Trace) -> HbAndAccesses {
    (
        t.arcs
            .iter()
            .map(|a| (a.tail, a.head, a.delay_ms))
            .collect(),
        t.actions
            .iter()
            .map(|a| {
                t.ops_of(a.id)
                    .iter()
                    .filter_map(|o| match resolve(t, o) {
                        // Positions live in our trailer only.
                        R::Read(l, v, _) => Some(R::Read(l, v, None)),
                        R::Write(l, v, _) => Some(R::Write(l, v, None)),
                        _ => None,
                    })
                    .collect()
            })
            .collect(),
    )
}

/// Cuts our trailer off, leaving what EventRacer itself would write.
fn strip_trailer(bytes: &[u8]) -> &[u8] {
    let at = bytes.windows(8).rposition(|w| w == b"SHEPHERD").unwrap();
    &bytes[..at]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn exact_round_trip_with_trailer(t in common::trace()) {
        let bytes = to_er_bytes(&t);
        let back = read_er(&bytes).unwrap();
        prop_assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        prop_assert_eq!(everything(&back.trace), everything(&t));
        prop_assert_eq!(back.original_ids, (0..t.actions.len() as i64).collect::<Vec<_>>());
        // A trace built action by action (all strings used, none with a NUL) comes back
        // identical, string numbers included.
        if back.trace.strings.len() == t.strings.len()
            && !(0..t.strings.len() as u32).any(|i| t.strings.get(i).contains('\0'))
        {
            prop_assert_eq!(&back.trace, &t);
        }
    }

    #[test]
    fn hb_graph_and_accesses_survive_without_trailer(t in common::trace()) {
        let bytes = to_er_bytes(&t);
        let back = read_er(strip_trailer(&bytes)).unwrap();
        prop_assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        prop_assert_eq!(hb_and_accesses(&back.trace), hb_and_accesses(&t));
        for (a, b) in back.trace.actions.iter().zip(&t.actions) {
            prop_assert_eq!(a.ty, b.ty);
            prop_assert_eq!(back.trace.strings.get(a.stable), format!("er:{}", a.id));
        }
        // Forks are recognised from TRIGGER_ARC commands (or a delay), joins stay joins unless
        // a fork links the same pair.
        for (a, b) in back.trace.arcs.iter().zip(&t.arcs) {
            let forked = t.arcs.iter().any(|x| x.kind == ArcKind::Fork && (x.tail, x.head) == (b.tail, b.head));
            prop_assert_eq!(a.kind == ArcKind::Fork, forked || b.delay_ms.is_some());
        }
    }

    #[test]
    fn truncations_and_corruptions_never_panic(t in common::trace(), cut in any::<prop::sample::Index>(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4)) {
        let bytes = to_er_bytes(&t);
        let n = cut.index(bytes.len() + 1);
        if let Err(e) = read_er(&bytes[..n]) {
            prop_assert!(e.offset().unwrap() <= n as u64);
        }
        let mut bad = bytes.clone();
        for (i, v) in flips {
            let i = i.index(bad.len());
            bad[i] = v;
        }
        if let Err(e) = read_er(&bad) {
            prop_assert!(e.offset().unwrap() <= bad.len() as u64);
        }
    }
}

/// Little-endian encoder for hand-made files.
#[derive(Default)]
struct Enc(Vec<u8>);
impl Enc {
    fn i(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn table(&mut self, strings: &[&str], buckets: i32) -> &mut Self {
        let data: Vec<u8> = strings.iter().flat_map(|s| s.bytes().chain([0])).collect();
        self.i(data.len() as i32);
        self.0.extend_from_slice(&data);
        self.i(buckets)
    }
}

#[test]
fn exported_bytes_are_exactly_eventracer_layout() {
    let mut b = TraceBuilder::new();
    let a = b.begin(ActionType::Unknown, "script", "s0");
    b.enter("script:inline #0", Some("u:1:1"));
    b.write("Global.x", Some("1"));
    b.exit();
    b.end();
    let t = b.begin(ActionType::Timer, "timer", "s1");
    b.read("Global.x", None);
    b.exception("boom", None);
    b.end();
    b.fork_delay(a, t, 10);
    let trace = b.finish();
    let bytes = to_er_bytes(&trace);

    let mut e = Enc::default();
    e.table(&["Global.x"], 3); // vars: 1 string, 2n+1 buckets
    e.table(&["script:inline #0 @@ u:1:1", "!exception: boom"], 5); // scopes
    e.i(2).i(1); // actions, arcs
    e.i(0).i(1).i(10); // arc 0 -> 1, 10 ms
    // action 0: ENTER(0) WRITE(0) VALUE(0) EXIT TRIGGER_ARC(1)
    e.i(0).i(0).i(5);
    e.i(0).i(0).i(3).i(0).i(5).i(0).i(1).i(-1).i(4).i(1);
    // action 1: READ(0) ENTER(26) EXIT
    e.i(1).i(1).i(3);
    e.i(2).i(0).i(0).i(26).i(1).i(-1);
    e.table(&[], 1); // js
    e.table(&["1"], 3); // values
    let expected_er = e.0.clone();
    assert_eq!(&bytes[..expected_er.len()], &expected_er[..]);
    assert_eq!(
        &bytes[expected_er.len()..expected_er.len() + 8],
        b"SHEPHERD"
    );
}

#[test]
fn reads_an_eventracer_style_file() {
    // Sparse ids (3, 7, 9), action 5 only an arc endpoint, a backwards arc, no optional tables
    // at all, a string id inside a string, a TRIGGER_ARC, a stray MEMORY_VALUE.
    let mut e = Enc::default();
    e.table(&["Global.a", "NodeTree:0x1"], 5);
    e.table(
        &[
            "fire:click @ TARGET",
            "Exec (fn=1 #0) line 1-2 http://x/a.js",
        ],
        5,
    );
    e.i(3).i(4);
    e.i(3).i(7).i(-1); // 3 -> 7 untimed: join unless triggered
    e.i(3).i(9).i(25); // timed: fork
    e.i(5).i(7).i(-1); // 5 is only an arc end
    e.i(9).i(7).i(-1); // backwards: dropped with a warning
    e.i(3).i(0).i(3);
    e.i(3).i(0).i(4).i(9).i(5).i(0); // WRITE Global.a, TRIGGER_ARC 9, stray MEMORY_VALUE
    e.i(7).i(2).i(4);
    e.i(0).i(0).i(2).i(9).i(1).i(-1).i(2).i(2); // ENTER fire:click, READ NodeTree:0x1, EXIT, READ "obal.a"
    e.i(9).i(1).i(0);
    let imp = read_er(&e.0).unwrap();
    let t = &imp.trace;
    assert_eq!(imp.original_ids, vec![3, 5, 7, 9]);
    assert_eq!(t.actions.len(), 4);
    let stables: Vec<_> = t.actions.iter().map(|a| t.strings.get(a.stable)).collect();
    assert_eq!(stables, ["er:3", "er:5", "er:7", "er:9"]);
    assert_eq!(t.actions[2].ty, ActionType::UserInterface);
    assert_eq!(t.strings.get(t.actions[2].kind), "fire:click @ TARGET");
    assert_eq!(t.actions[1].ops.len(), 0);
    let arcs: Vec<_> = t
        .arcs
        .iter()
        .map(|a| (a.tail, a.head, a.kind, a.delay_ms))
        .collect();
    assert_eq!(
        arcs,
        vec![
            (0, 2, ArcKind::Join, None),
            (0, 3, ArcKind::Fork, Some(25)),
            (1, 2, ArcKind::Join, None)
        ]
    );
    let ops: Vec<_> = t.ops_of(2).iter().map(|o| resolve(t, o)).collect();
    assert_eq!(
        ops,
        vec![
            R::Enter("fire:click @ TARGET".into(), None),
            R::Read("NodeTree:0x1".into(), None, None),
            R::Exit,
            R::Read("obal.a".into(), None, None),
        ]
    );
    assert_eq!(
        t.ops_of(0)
            .iter()
            .map(|o| resolve(t, o))
            .collect::<Vec<_>>(),
        vec![R::Write("Global.a".into(), None, None)]
    );
    assert_eq!(imp.warnings.len(), 2, "{:?}", imp.warnings);
    assert!(imp.warnings.iter().any(|w| w.contains("9 -> 7")));
    assert!(imp.warnings.iter().any(|w| w.contains("MEMORY_VALUE")));
}

#[test]
fn trigger_arc_marks_forks_without_trailer() {
    let mut e = Enc::default();
    e.table(&[], 1).table(&[], 1);
    e.i(2).i(1).i(0).i(1).i(-1);
    e.i(0).i(0).i(1).i(4).i(1);
    e.i(1).i(3).i(0);
    e.table(&[], 1).table(&[], 1);
    let t = read_er(&e.0).unwrap().trace;
    assert_eq!(t.arcs[0].kind, ArcKind::Fork);
    assert_eq!(t.actions[1].ty, ActionType::Network);
}

fn er_err(bytes: &[u8]) -> (u64, String) {
    match read_er(bytes) {
        Err(ReadError::Er { offset, message }) => (offset, message),
        other => panic!("expected an ER error, got {other:?}"),
    }
}

#[test]
fn malformed_files_name_the_offset() {
    // Empty file.
    let (o, m) = er_err(b"");
    assert_eq!(o, 0);
    assert!(m.contains("vars table size"), "{m}");
    // Table size larger than the file: rejected before allocating.
    let (o, m) = er_err(&Enc::default().i(i32::MAX).0);
    assert_eq!(o, 0);
    assert!(m.contains("only 0 are left"), "{m}");
    // Negative size.
    let (_, m) = er_err(&Enc::default().i(-4).0);
    assert!(m.contains("negative"), "{m}");
    // Table without the final NUL.
    let mut e = Enc::default();
    e.i(3);
    e.0.extend_from_slice(b"abc");
    e.i(3);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 6);
    assert!(m.contains("NUL"), "{m}");
    // A huge arc count in a tiny file.
    let mut e = Enc::default();
    e.table(&[], 1).table(&[], 1).i(0).i(i32::MAX);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 20);
    assert!(m.contains("arc count"), "{m}");
    // A huge command count.
    let mut e = Enc::default();
    e.table(&[], 1).table(&[], 1).i(1).i(0).i(0).i(0).i(1 << 28);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 32);
    assert!(m.contains("command count"), "{m}");
    // A vars id outside the table.
    let mut e = Enc::default();
    e.table(&["x"], 3)
        .table(&[], 1)
        .i(1)
        .i(0)
        .i(0)
        .i(0)
        .i(1)
        .i(2)
        .i(2);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 42);
    assert!(m.contains("vars id 2 outside"), "{m}");
    // Unknown command.
    let mut e = Enc::default();
    e.table(&[], 1)
        .table(&[], 1)
        .i(1)
        .i(0)
        .i(0)
        .i(0)
        .i(1)
        .i(9)
        .i(0);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 36);
    assert!(m.contains("unknown command kind 9"), "{m}");
    // Duplicate action id.
    let mut e = Enc::default();
    e.table(&[], 1)
        .table(&[], 1)
        .i(2)
        .i(0)
        .i(4)
        .i(0)
        .i(0)
        .i(4)
        .i(0)
        .i(0);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 36);
    assert!(m.contains("twice"), "{m}");
    // Truncated in the middle of the log.
    let mut e = Enc::default();
    e.table(&[], 1).table(&[], 1).i(1).i(0).i(0).i(0);
    let (o, m) = er_err(&e.0);
    assert_eq!(o, 32);
    assert!(m.contains("command count"), "{m}");
}

/// Reads an export the way EventRacer's C++ loader does and checks what it relies on.
fn eventracer_would_accept(bytes: &[u8]) -> Result<(), String> {
    let mut pos = 0usize;
    let i32_at = |pos: &mut usize| -> Result<i32, String> {
        let b = bytes
            .get(*pos..*pos + 4)
            .ok_or(format!("short read at {pos}"))?;
        *pos += 4;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    // StringSet::loadFromFile + rehashAll: the string starts, and a free bucket must remain.
    let table = |pos: &mut usize| -> Result<Vec<i32>, String> {
        let n = i32_at(pos)? as usize;
        let data = bytes.get(*pos..*pos + n).ok_or("table data")?;
        *pos += n;
        let buckets = i32_at(pos)?;
        let mut starts = Vec::new();
        let mut p = 0;
        while p < data.len() {
            starts.push(p as i32);
            p += data[p..]
                .iter()
                .position(|&b| b == 0)
                .ok_or("unterminated")?
                + 1;
        }
        if !starts.is_empty() && buckets as usize <= starts.len() {
            return Err(format!("{buckets} buckets for {} strings", starts.len()));
        }
        Ok(starts)
    };
    let vars = table(&mut pos)?;
    let scopes = table(&mut pos)?;
    let n_actions = i32_at(&mut pos)?;
    let n_arcs = i32_at(&mut pos)?;
    for _ in 0..n_arcs {
        let (t, h, d) = (i32_at(&mut pos)?, i32_at(&mut pos)?, i32_at(&mut pos)?);
        if t >= h || d < -1 {
            return Err(format!("arc {t} -> {h} ({d})"));
        }
    }
    let mut cmds = Vec::new();
    let mut last_id = -1;
    for _ in 0..n_actions {
        let id = i32_at(&mut pos)?;
        let ty = i32_at(&mut pos)?;
        if id <= last_id || !(0..=4).contains(&ty) {
            return Err(format!("action {id} type {ty}"));
        }
        last_id = id;
        let n = i32_at(&mut pos)?;
        for _ in 0..n {
            cmds.push((id, i32_at(&mut pos)?, i32_at(&mut pos)?));
        }
    }
    // `!feof(f)` after the log: both optional tables are there.
    let _js = table(&mut pos)?;
    let values = table(&mut pos)?;
    let mut prev = -1;
    for &(id, kind, loc) in &cmds {
        let ok = match kind {
            0 => scopes.binary_search(&loc).is_ok(),
            1 => loc == -1,
            2 | 3 => vars.binary_search(&loc).is_ok(),
            4 => loc > id && loc < n_actions,
            5 => (prev == 2 || prev == 3) && values.binary_search(&loc).is_ok(),
            _ => false,
        };
        if !ok {
            return Err(format!("command {kind} {loc} in action {id} after {prev}"));
        }
        prev = kind;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn exports_satisfy_eventracer_loader(t in common::trace()) {
        prop_assert_eq!(eventracer_would_accept(&to_er_bytes(&t)), Ok(()));
    }
}

#[test]
fn access_positions_travel_in_the_trailer() {
    let mut b = TraceBuilder::new();
    b.begin(ActionType::Unknown, "script", "s0");
    b.write_at("Global.x", Some("1"), Some("https://a.test/app.js:2:5"));
    b.read("Global.y", None);
    b.end();
    b.begin(ActionType::Timer, "timer", "s1");
    b.read_at("Global.x", None, Some("https://a.test/#inline-3fa2c:1:1"));
    b.end();
    let t = b.finish();
    let bytes = to_er_bytes(&t);
    let at = bytes.windows(8).rposition(|w| w == b"SHEPHERD").unwrap() + 8;
    assert_eq!(&bytes[at..at + 4], &2i32.to_le_bytes(), "trailer version 2");
    // The list ends the file: 2 × (access ordinal, meta id), ordinals 0 and 2.
    let tail = &bytes[bytes.len() - 20..];
    assert_eq!(&tail[..4], &2i32.to_le_bytes());
    assert_eq!(&tail[4..8], &0i32.to_le_bytes());
    assert_eq!(&tail[12..16], &2i32.to_le_bytes());
    assert_eq!(read_er(&bytes).unwrap().trace, t);

    // A trace without positions keeps the version-1 trailer.
    let mut b = TraceBuilder::new();
    b.begin(ActionType::Unknown, "script", "s0");
    b.write("Global.x", None);
    b.end();
    let plain = to_er_bytes(&b.finish());
    let at = plain.windows(8).rposition(|w| w == b"SHEPHERD").unwrap() + 8;
    assert_eq!(&plain[at..at + 4], &1i32.to_le_bytes());

    // Out of order or beyond the last access: rejected at the entry.
    let n = bytes.len();
    let mut bad = bytes.clone();
    bad[n - 8..n - 4].copy_from_slice(&0i32.to_le_bytes());
    let (o, m) = er_err(&bad);
    assert_eq!(o, (n - 8) as u64);
    assert!(m.contains("out of order"), "{m}");
    let mut bad = bytes.clone();
    bad[n - 8..n - 4].copy_from_slice(&3i32.to_le_bytes());
    let (o, m) = er_err(&bad);
    assert_eq!(o, (n - 8) as u64);
    assert!(m.contains("the log has 3 accesses"), "{m}");
    let mut bad = bytes.clone();
    bad[n - 4..].copy_from_slice(&(-7i32).to_le_bytes());
    assert!(read_er(&bad).is_err());
    // Truncated list.
    let (_, m) = er_err(&bytes[..n - 2]);
    assert!(m.contains("position"), "{m}");
}

#[test]
fn node_descriptions_travel_in_the_trailer() {
    let mut b = TraceBuilder::new();
    b.begin(ActionType::Unknown, "script", "s0");
    b.write("DOMNode[19].value", Some("\"x\""));
    b.end();
    b.node(19, "input", Some("input#coupon"), Some("coupon"), None);
    b.node(u32::MAX, "#text", None, None, Some("a b"));
    let t = b.finish();
    let bytes = to_er_bytes(&t);
    let at = bytes.windows(8).rposition(|w| w == b"SHEPHERD").unwrap() + 8;
    assert_eq!(&bytes[at..at + 4], &3i32.to_le_bytes(), "trailer version 3");
    // The file ends with: 0 positions, 2 nodes × 5 words.
    let n = bytes.len();
    assert_eq!(&bytes[n - 48..n - 44], &0i32.to_le_bytes());
    assert_eq!(&bytes[n - 44..n - 40], &2i32.to_le_bytes());
    assert_eq!(&bytes[n - 40..n - 36], &19i32.to_le_bytes());
    assert_eq!(&bytes[n - 24..n - 20], &(-1i32).to_le_bytes(), "no classes");
    assert_eq!(read_er(&bytes).unwrap().trace, t);
    // Described twice: rejected at the second entry.
    let mut bad = bytes.clone();
    bad[n - 20..n - 16].copy_from_slice(&19i32.to_le_bytes());
    let (o, m) = er_err(&bad);
    assert_eq!(o, (n - 20) as u64);
    assert!(m.contains("node 19 described twice"), "{m}");
    // A string id outside the meta table.
    let mut bad = bytes.clone();
    bad[n - 16..n - 12].copy_from_slice(&999_999i32.to_le_bytes());
    assert_eq!(er_err(&bad).0, (n - 16) as u64);
    // Truncated list.
    let (_, m) = er_err(&bytes[..n - 2]);
    assert!(m.contains("node"), "{m}");
}

#[test]
fn exercised_controls_travel_in_the_trailer() {
    let mut b = TraceBuilder::new();
    b.begin(ActionType::Unknown, "script", "s0");
    b.end();
    b.node(19, "select", Some("select#size"), Some("size"), None);
    b.control(19, "key-choose,pointer-choose", "key-choose");
    b.control(u32::MAX, "click", "");
    let t = b.finish();
    let bytes = to_er_bytes(&t);
    let at = bytes.windows(8).rposition(|w| w == b"SHEPHERD").unwrap() + 8;
    assert_eq!(&bytes[at..at + 4], &4i32.to_le_bytes(), "trailer version 4");
    // The file ends with: 2 controls × 3 words.
    let n = bytes.len();
    assert_eq!(&bytes[n - 28..n - 24], &2i32.to_le_bytes());
    assert_eq!(&bytes[n - 24..n - 20], &19i32.to_le_bytes());
    assert_eq!(
        &bytes[n - 12..n - 8],
        &(-1i32).to_le_bytes(),
        "u32::MAX's bits"
    );
    assert_eq!(read_er(&bytes).unwrap().trace, t);
    // Listed twice: rejected at the second entry.
    let mut bad = bytes.clone();
    bad[n - 12..n - 8].copy_from_slice(&19i32.to_le_bytes());
    let (o, m) = er_err(&bad);
    assert_eq!(o, (n - 12) as u64);
    assert!(m.contains("control 19 listed twice"), "{m}");
    // A string id outside the meta table.
    let mut bad = bytes.clone();
    bad[n - 4..].copy_from_slice(&999_999i32.to_le_bytes());
    assert_eq!(er_err(&bad).0, (n - 4) as u64);
    // Truncated list.
    let (_, m) = er_err(&bytes[..n - 2]);
    assert!(m.contains("control"), "{m}");
}
