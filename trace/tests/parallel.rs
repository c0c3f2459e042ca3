//! The JSONL reader in parts (`read_jsonl_parts`, and `load_bytes`/`load_path`, which cut
//! large inputs themselves) against the sequential reader: for any input and any cuts, the
//! same trace, or the same error (line, byte offset and message).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Rng;

use proptest::prelude::*;
use serde_json::{Value, json};
use shepherd_trace::{
    ActionType, Format, ReadError, Trace, TraceBuilder, load_bytes, load_path_with_progress,
    read_jsonl, read_jsonl_parts, to_jsonl_bytes,
};

/// The trace, or the error as the CLI shows it (line, byte offset, message).
fn outcome(r: Result<Trace, ReadError>) -> Result<Trace, String> {
    r.map_err(|e| match e {
        ReadError::Jsonl { .. } => e.to_string(),
        other => panic!("not a format error: {other}"),
    })
}

fn same(bytes: &[u8], cuts: &[u64]) -> Result<(), TestCaseError> {
    let seq = outcome(read_jsonl(bytes));
    let par = outcome(read_jsonl_parts(bytes, cuts));
    prop_assert_eq!(par, seq, "cuts {:?}", cuts);
    Ok(())
}

/// Every line start as a single cut, a cut inside each of a few lines, and a few random sets
/// of up to four cuts.
fn same_for_all_cuts(bytes: &[u8], rng: &mut Rng) -> Result<(), TestCaseError> {
    let len = bytes.len() as u64;
    same(bytes, &[])?;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' {
            same(bytes, &[i as u64 + 1])?;
        }
    }
    for _ in 0..4 {
        let mut cuts: Vec<u64> = (0..1 + rng.below(4))
            .map(|_| rng.below(bytes.len() + 2) as u64)
            .collect();
        cuts.sort_unstable();
        same(bytes, &cuts)?;
    }
    same(bytes, &[0, len / 2, len, len + 10])
}

/// The positions of string references in a record (after the tag).
fn refs(tag: &str, len: usize) -> std::ops::Range<usize> {
    match tag {
        "b" => 3..len.min(5),
        "r" | "w" | "e" | "!" => 1..len,
        "R" | "W" => 3..len,
        "d" | "c" => 2..len,
        _ => 0..0,
    }
}

/// `canonical` (our writer's output) as the runtime may upload it: in batches, each with its
/// header again (another page, which the readers ignore) and maybe a blank line, re-sending
/// strings and node descriptions; some texts defined twice under two numbers, references using
/// either; a later, different description of a node (ignored); some `n` records lost, the last
/// action maybe left open; some `\r\n` line ends; some reads and writes logged late (version 5:
/// `["R",A,I,…]` after their action ended, inside the next action or after the last). Reads
/// back as the same trace.
fn batched(canonical: &[u8], rng: &mut Rng) -> Vec<u8> {
    let text = std::str::from_utf8(canonical).unwrap();
    let mut lines = text.lines();
    let mut out: Vec<String> = vec![lines.next().unwrap().to_owned()];
    // Canonical string number -> its numbers here.
    let mut numbers: Vec<Vec<u64>> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let mut descriptions: Vec<Value> = Vec::new();
    // The open action and how many of its operations were logged in place; its operations
    // held back to be logged late; those of ended actions, logged after the next `b`.
    let mut open: Option<u64> = None;
    let mut own = 0u64;
    let mut held: Vec<String> = Vec::new();
    let mut later: Vec<String> = Vec::new();
    for line in lines {
        if rng.one_in(6) {
            if rng.one_in(2) {
                out.push(String::new());
            }
            out.push(
                r#"{"format":"shepherd-trace","version":3,"page":"https://later.test/"}"#.into(),
            );
            for _ in 0..rng.below(3) {
                if !texts.is_empty() {
                    let k = rng.below(texts.len());
                    out.push(json!(["s", k, texts[k]]).to_string());
                }
            }
            if !descriptions.is_empty() && rng.one_in(2) {
                out.push(descriptions[rng.below(descriptions.len())].to_string());
            }
        }
        let mut v: Value = serde_json::from_str(line).unwrap();
        let arr = v.as_array_mut().unwrap();
        let tag = arr[0].as_str().unwrap().to_owned();
        if tag == "s" {
            let text = arr[2].as_str().unwrap().to_owned();
            let mut here = Vec::new();
            for _ in 0..1 + usize::from(rng.one_in(4)) {
                here.push(texts.len() as u64);
                out.push(json!(["s", texts.len(), text]).to_string());
                texts.push(text.clone());
            }
            numbers.push(here);
            continue;
        }
        if tag == "n" {
            later.append(&mut held);
            open = None;
            if rng.one_in(5) {
                continue;
            }
        }
        for i in refs(&tag, arr.len()) {
            if let Some(n) = arr[i].as_u64() {
                let here = &numbers[n as usize];
                arr[i] = json!(here[rng.below(here.len())]);
            }
        }
        if let Some(a) = open.filter(|_| (tag == "r" || tag == "w") && rng.one_in(3)) {
            let mut late = vec![json!(tag.to_uppercase()), json!(a), json!(own)];
            late.extend(arr.iter().skip(1).cloned());
            held.push(Value::Array(late).to_string());
            continue;
        }
        if matches!(tag.as_str(), "r" | "w" | "e" | "x" | "!") {
            own += 1;
        }
        out.push(v.to_string());
        if tag == "b" {
            open = v[1].as_u64();
            own = 0;
            out.append(&mut later);
        }
        if tag == "d" {
            descriptions.push(v.clone());
            if rng.one_in(3) {
                // Described again, differently: the first description stands.
                let mut other = v.clone();
                other[2] = json!(rng.below(texts.len()));
                out.push(other.to_string());
            }
        }
    }
    out.append(&mut later);
    out.append(&mut held);
    let mut bytes = Vec::new();
    for line in out {
        bytes.extend_from_slice(line.as_bytes());
        bytes.extend_from_slice(if rng.one_in(10) { b"\r\n" } else { b"\n" });
    }
    bytes
}

/// Breaks `bytes` once or twice at random lines: garbage, numbers out of range, lines lost,
/// swapped or out of place, strings redefined, ops outside an action, bad headers, a cut.
fn corrupt(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    for _ in 0..1 + rng.below(2) {
        let i = rng.below(lines.len());
        let insert = |lines: &mut Vec<Vec<u8>>, s: &str| lines.insert(i, format!("{s}\n").into());
        match rng.below(13) {
            0 => {
                if let Some(line) = lines.get_mut(i).filter(|l| !l.is_empty()) {
                    let j = rng.below(line.len());
                    line[j] = b"[]{},\"\\0123456789xn \t\x01\xff"[rng.below(23)];
                }
            }
            1 => {
                if let Some(line) = lines.get_mut(i) {
                    // The last number of the line made large: a string, an action or a head
                    // that does not exist yet.
                    let s = String::from_utf8_lossy(line).into_owned();
                    if let Some(j) = s.rfind(|c: char| c.is_ascii_digit()) {
                        let big = ["99999", "4294967295", "4294967296", "7"][rng.below(4)];
                        *line = format!("{}{big}{}", &s[..=j], &s[j + 1..]).into_bytes();
                    }
                }
            }
            2 => insert(&mut lines, r#"["r",0]"#),
            3 => insert(&mut lines, &format!(r#"["n",{}]"#, rng.below(5))),
            4 => {
                if i < lines.len() {
                    lines.remove(i);
                }
            }
            5 => {
                if i + 1 < lines.len() {
                    lines.swap(i, i + 1);
                }
            }
            6 => insert(&mut lines, &format!(r#"["s",{},"zzz"]"#, rng.below(8))),
            7 => insert(&mut lines, &format!(r#"["a",0,{},"f"]"#, rng.below(20))),
            8 => insert(&mut lines, &format!(r#"["b",{},1,0,0]"#, rng.below(20))),
            9 => insert(
                &mut lines,
                [
                    r#"{"format":"other","version":1}"#,
                    r#"{"format":"shepherd-trace","version":99}"#,
                    r#"{"format":"shepherd-trace""#,
                ][rng.below(3)],
            ),
            10 => insert(
                &mut lines,
                &format!(r#"["d",{},{}]"#, rng.below(5), rng.below(30)),
            ),
            // A late operation of an action not begun yet, or after more operations than
            // its action logged.
            11 => insert(
                &mut lines,
                &format!(r#"["R",{},{},0]"#, rng.below(8), rng.below(12)),
            ),
            _ => {
                let all: usize = lines.iter().map(Vec::len).sum();
                let mut keep = rng.below(all + 1);
                lines.retain_mut(|l| {
                    let k = keep.min(l.len());
                    l.truncate(k);
                    keep -= k;
                    !l.is_empty()
                });
            }
        }
    }
    lines.concat()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Batched uploads read the same in parts, wherever the cuts fall: inside an action (its
    /// operations and its `n` in the next part), between a `b` and its arcs, after a string's
    /// definition and before its uses, around repeated headers, strings and descriptions.
    #[test]
    fn parts_read_what_the_sequential_reader_reads(t in common::trace(), seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let bytes = batched(&to_jsonl_bytes(&t), &mut rng);
        // The batches still are the trace.
        prop_assert_eq!(&read_jsonl(&bytes[..]).unwrap(), &t);
        same_for_all_cuts(&bytes, &mut rng)?;
    }

    /// A broken input fails with the same error (the first in the file) wherever the cuts
    /// fall, whether the break is in the first part or a later one.
    #[test]
    fn parts_fail_as_the_sequential_reader_fails(t in common::trace(), seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let bytes = corrupt(&batched(&to_jsonl_bytes(&t), &mut rng), &mut rng);
        same_for_all_cuts(&bytes, &mut rng)?;
    }
}

#[test]
fn odd_inputs_read_the_same_in_parts() {
    let h = r#"{"format":"shepherd-trace","version":3}"#;
    let cases = [
        String::new(),
        "\n\n".into(),
        h.to_string(),
        format!("{h}\n"),
        format!("\n\n{h}\n"),
        format!(r#"["s",0,"a"]{}{h}"#, "\n"),
        format!("{h}\n{h}\n"),
        // No header before the first record of a later part.
        format!("\n\n\n\n{h}\n[\"s\",0,\"a\"]\n"),
        // An action left open, its ops continuing in the next part, ended there.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"r\",0]\n[\"w\",0,0,0]\n[\"n\",0]\n"),
        // Ops after the end of the open action.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"n\",0]\n[\"r\",0]\n"),
        // An arc to an action of the next part.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"a\",0,1,\"f\"]\n[\"b\",1,0,0,0]\n"),
        // A text defined twice; the second number used in a later part.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"s\",1,\"k\"]\n[\"b\",0,0,1,0]\n[\"r\",1,0,1]\n"),
        // A string re-sent with another text.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"s\",0,\"j\"]\n"),
        // Late operations of the action open at a cut: one after more operations than it had
        // logged by then (an error, though it logs enough later), one in place.
        format!(
            "{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"r\",0]\n[\"R\",0,2,0]\n[\"r\",0]\n[\"r\",0]\n"
        ),
        format!(
            "{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"r\",0]\n[\"W\",0,1,0]\n[\"r\",0]\n[\"n\",0]\n[\"R\",0,2,0,0]\n"
        ),
        // A late operation before the part's first action, of an action of that part.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"R\",0,0,0]\n[\"b\",0,0,0,0]\n[\"n\",0]\n"),
        // The last line without its newline, cut inside.
        format!("{h}\n[\"s\",0,\"k\"]\n[\"b\",0,0,0,0]\n[\"r\",0]"),
    ];
    let mut rng = Rng::new(1);
    for case in &cases {
        same_for_all_cuts(case.as_bytes(), &mut rng).unwrap();
        for i in 0..=case.len() {
            same(case.as_bytes(), &[i as u64]).unwrap();
        }
    }
}

/// A trace of more than the size from which `load_bytes` and `load_path` read in parts.
fn large() -> Trace {
    let mut b = TraceBuilder::new();
    b.page("https://large.test/");
    let mut r = Rng::new(7);
    for id in 0..45_000u32 {
        b.begin(ActionType::Timer, "timer", &format!("doc/timer:{id}"));
        if id > 0 {
            b.fork(id - 1 - r.below(id.min(20) as usize) as u32, id);
        }
        b.enter(&format!("fire:timeout @ Window[{}]", r.below(50)), None);
        for _ in 0..4 {
            let loc = format!("Global.v{}", r.below(30_000));
            let v = format!("{}", r.below(100));
            if r.one_in(2) {
                b.read_at(&loc, Some(&v), Some("https://large.test/app.js:1:2"));
            } else {
                b.write(&loc, Some(&v));
            }
        }
        b.exit();
        b.end();
    }
    b.node(3, "input", Some("#coupon"), Some("coupon"), None);
    b.finish()
}

#[test]
fn large_inputs_are_read_in_parts_with_progress() {
    let t = large();
    let bytes = to_jsonl_bytes(&t);
    assert!(bytes.len() > 5 << 20, "{} bytes", bytes.len());
    let loaded = load_bytes(&bytes, &mut |_, _| {}).unwrap();
    assert_eq!(loaded.format, Format::Jsonl);
    assert_eq!(loaded.trace, t);

    let path = std::env::temp_dir().join(format!("shepherd-parallel-{}.jsonl", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let mut seen: Vec<(u64, u64)> = Vec::new();
    let r = load_path_with_progress(&path, &mut |done, total| seen.push((done, total)));
    let _ = std::fs::remove_file(&path);
    assert_eq!(r.unwrap().trace, t);
    let len = bytes.len() as u64;
    assert!(seen.len() > 2, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    assert!(
        seen.iter()
            .all(|&(done, total)| total == len && done <= len)
    );
    assert_eq!(seen.last(), Some(&(len, len)));

    // Errors in the second half are found where the sequential reader finds them.
    let mut rng = Rng::new(3);
    for _ in 0..6 {
        let mut bad = bytes.clone();
        let mut at = bytes.len() / 2 + rng.below(bytes.len() / 2);
        while bad[at] != b'\n' {
            at -= 1;
        }
        let line = [
            &br#"["r",99999999]"#[..],
            br#"["b",3,0,0,0]"#,
            br#"["s",2,"changed"]"#,
            br#"["d",1"#,
        ][rng.below(4)];
        bad.splice(at + 1..at + 1, line.iter().copied().chain([b'\n']));
        let seq = read_jsonl(&bad[..]).unwrap_err().to_string();
        let par = load_bytes(&bad, &mut |_, _| {}).unwrap_err().to_string();
        assert_eq!(par, seq);
    }
}
