//! Merging recordings into one (renumbering), and learning patterns across the merged sessions.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;

fn record(rec: &Recording, s: SessionId, url: &str, body: &[u8], ctype: &str) -> ExchangeId {
    let mut ex = rec
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: url.into(),
                http_version: "HTTP/1.1".into(),
                headers: vec![],
            },
        )
        .unwrap();
    ex.response_head(ResponseHead {
        status: 200,
        reason: "OK".into(),
        http_version: "HTTP/1.1".into(),
        headers: vec![Header::new("Content-Type", ctype)],
    });
    ex.response_body(body).unwrap();
    ex.finish(Timings::starting_now()).unwrap()
}

/// One browsing session of the app: a page, its feed polled twice with a timestamp.
fn browse(path: &std::path::Path, sid: &str, t0: u64) {
    let rec = Recording::open(path).unwrap();
    let s = rec.begin_session(&format!("record sid={sid}")).unwrap();
    record(&rec, s, "https://app.test/", b"<html>", "text/html");
    for i in 0..2 {
        let url = format!("https://app.test/api/feed?session={sid}&t={}", t0 + i);
        let body = format!(r#"{{"items":["{sid}-{i}"]}}"#);
        record(&rec, s, &url, body.as_bytes(), "application/json");
    }
    rec.append_trace_batch(s, "d1", 0, b"[\"s\",0,\"x\"]\n")
        .unwrap();
    rec.set_host_protocol(s, "app.test:443", "h2").unwrap();
    rec.flush().unwrap();
}

#[test]
fn merge_renumbers_and_copies_everything() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.rec");
    let b = dir.path().join("b.rec");
    browse(&a, "s1", 1000);
    browse(&a, "s2", 2000);
    browse(&b, "s3", 3000);
    // A chunked body in b.
    {
        let rec = Recording::open(&b).unwrap();
        let s = rec.sessions().unwrap()[0].id;
        let big: Vec<u8> = (0..INLINE_MAX * 2 + 3).map(|i| (i % 199) as u8).collect();
        record(
            &rec,
            s,
            "https://app.test/big.bin",
            &big,
            "application/octet-stream",
        );
    }
    let out = dir.path().join("merged.rec");
    let report = merge(&[a.as_path(), b.as_path()], &out).unwrap();
    assert_eq!(
        report,
        MergeReport {
            sessions: 3,
            exchanges: 10,
            traces: 3
        }
    );
    let m = Recording::open_readonly(&out).unwrap();
    let sessions = m.sessions().unwrap();
    assert_eq!(
        sessions
            .iter()
            .map(|s| s.label.as_str())
            .collect::<Vec<_>>(),
        vec!["record sid=s1", "record sid=s2", "record sid=s3"]
    );
    let all = m.exchanges(None).unwrap();
    let ids: Vec<i64> = all.iter().map(|e| e.id.0).collect();
    assert_eq!(
        ids,
        (1..=10).collect::<Vec<_>>(),
        "renumbered densely in input order"
    );
    assert!(all[4].request.url.contains("session=s2"));
    assert_eq!(all[6].session, sessions[2].id);
    let src_b = Recording::open_readonly(&b).unwrap();
    let big_src = src_b.exchanges(None).unwrap()[3].clone();
    let big_dst = &all[9];
    assert_eq!(big_dst.response_body, big_src.response_body);
    assert_eq!(
        m.body_bytes(big_dst.id, Part::Response, u64::MAX).unwrap(),
        src_b
            .body_bytes(big_src.id, Part::Response, u64::MAX)
            .unwrap()
    );
    assert_eq!(m.traces().unwrap().len(), 3);
    assert_eq!(
        m.trace_jsonl(sessions[1].id, "d1").unwrap(),
        b"[\"s\",0,\"x\"]\n"
    );
    assert_eq!(m.host_protocols().unwrap().len(), 3);
}

#[test]
fn patterns_learned_from_two_merged_sessions_match_new_ids() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.rec");
    let b = dir.path().join("b.rec");
    browse(&a, "9f8e7d", 1_714_641_000_000);
    browse(&b, "1a2b3c", 1_714_642_000_000);
    let out = dir.path().join("merged.rec");
    merge(&[a.as_path(), b.as_path()], &out).unwrap();
    let rec = Recording::open_readonly(&out).unwrap();

    let mut single = Matcher::new(
        Recording::open_readonly(&a)
            .unwrap()
            .replay_requests(1 << 20)
            .unwrap(),
        MatchConfig {
            fuzzy: false,
            ..MatchConfig::default()
        },
    );
    let fresh = "https://app.test/api/feed?session=77aa00&t=1714650000000";
    let req = LiveRequest {
        method: "GET",
        url: fresh,
        headers: &[],
        body: b"",
    };
    assert!(
        single.find(&req).is_err(),
        "one session: session id is a key"
    );

    let mut m = Matcher::new(
        rec.replay_requests(1 << 20).unwrap(),
        MatchConfig {
            fuzzy: false,
            ..MatchConfig::default()
        },
    );
    let hit = m.find(&req).unwrap();
    assert_eq!(hit.tier, Tier::Learned);
    let body = rec.body_bytes(hit.exchange, Part::Response, 1024).unwrap();
    assert_eq!(
        body, br#"{"items":["9f8e7d-0"]}"#,
        "first recording of the operation"
    );
    let hit = m.find(&req).unwrap();
    let body = rec.body_bytes(hit.exchange, Part::Response, 1024).unwrap();
    assert_eq!(
        body, br#"{"items":["9f8e7d-1"]}"#,
        "second occurrence, second recording"
    );
}

#[test]
fn response_class_sees_through_gzip_json() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("c.rec")).unwrap();
    let s = rec.begin_session("record").unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(br#"{"name":"x","tags":[1,2]}"#).unwrap();
    let gz = gz.finish().unwrap();
    let mut ex = rec
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: "https://app.test/api/user".into(),
                http_version: "HTTP/2".into(),
                headers: vec![],
            },
        )
        .unwrap();
    ex.response_head(ResponseHead {
        status: 200,
        reason: String::new(),
        http_version: "HTTP/2".into(),
        headers: vec![
            Header::new("content-type", "application/json; charset=utf-8"),
            Header::new("content-encoding", "gzip"),
        ],
    });
    ex.response_body(&gz).unwrap();
    ex.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    let reqs = rec.replay_requests(1024).unwrap();
    assert_eq!(
        reqs[0].response_class,
        "200 application/json {name:str,tags:[num]}"
    );
}
