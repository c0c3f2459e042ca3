//! SIGKILL during recording: every exchange committed before the kill survives, the file opens
//! cleanly, and chunks of exchanges that were in flight are cleaned up.
//!
//! The test re-executes its own binary with `SHEPHERD_CRASH_CHILD=<path>`; in that mode the test
//! function acts as the recording proxy, reporting each flushed exchange on stdout, until the
//! parent kills it.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const CHILD_ENV: &str = "SHEPHERD_CRASH_CHILD";

fn body_for(i: u64) -> Vec<u8> {
    // Every 7th exchange has a body large enough to be chunked.
    let len = if i.is_multiple_of(7) {
        3 * INLINE_MAX / 2
    } else {
        100 + i as usize
    };
    (0..len)
        .map(|j| ((j as u64 * 31 + i) % 256) as u8)
        .collect()
}

fn head(i: u64) -> RequestHead {
    RequestHead {
        method: "GET".into(),
        url: format!("https://example.com/item/{i}"),
        http_version: "HTTP/1.1".into(),
        headers: vec![Header::new("X-N", i.to_string())],
    }
}

fn run_child(path: &str) -> ! {
    let rec = Recording::open(path).expect("open");
    let s = rec.begin_session("crash").expect("session");
    // An exchange that never completes: its chunks must not survive.
    let mut in_flight = rec.begin_exchange(s, head(u64::MAX)).expect("begin");
    in_flight
        .response_body(&vec![1u8; INLINE_MAX * 4])
        .expect("chunks");
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let mut ex = rec.begin_exchange(s, head(i)).expect("begin");
        ex.response_head(ResponseHead {
            status: 200,
            reason: "OK".into(),
            http_version: "HTTP/1.1".into(),
            headers: vec![],
        });
        ex.response_body(&body_for(i)).expect("body");
        ex.finish(Timings::starting_now()).expect("finish");
        if i.is_multiple_of(5) {
            rec.flush().expect("flush");
            writeln!(out, "committed {i}").expect("stdout");
            out.flush().expect("stdout");
        }
    }
    unreachable!()
}

#[test]
fn sigkill_loses_only_in_flight_exchanges() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        run_child(&path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.rec");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sigkill_loses_only_in_flight_exchanges",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut last_committed = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            let n: u64 = n.parse().unwrap();
            last_committed = Some(n);
            if n >= 120 {
                break;
            }
        }
    }
    // Child::kill is SIGKILL on Unix: no destructors, no final commit, no checkpoint.
    child.kill().unwrap();
    child.wait().unwrap();
    let last = last_committed.expect("child reported progress");

    let rec = Recording::open(&path).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let all = rec.exchanges(None).unwrap();
    assert!(
        all.len() as u64 > last,
        "{} exchanges, {last} reported",
        all.len()
    );
    for (n, ex) in all.iter().enumerate() {
        let n = n as u64;
        assert_eq!(ex.request, head(n), "exchanges are contiguous, in order");
        let body = rec.body_bytes(ex.id, Part::Response, u64::MAX).unwrap();
        assert_eq!(body, body_for(n), "body of exchange {n}");
    }
    // The in-flight exchange's chunks were removed when the file was reopened for writing.
    let referenced: i64 = conn
        .query_row(
            "SELECT count(*) FROM body_chunks WHERE blob NOT IN
               (SELECT resp_body_blob FROM exchanges WHERE resp_body_blob IS NOT NULL)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(referenced, 0);
    // And the reopened file keeps recording.
    let s = rec.begin_session("after").unwrap();
    let mut ex = rec.begin_exchange(s, head(10_000)).unwrap();
    ex.response_body(b"fine").unwrap();
    let id = ex.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    assert_eq!(rec.exchange(id).unwrap().request, head(10_000));
}
