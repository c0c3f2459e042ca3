//! Store round trips on real SQLite files.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;

fn req(url: &str) -> RequestHead {
    RequestHead {
        method: "GET".into(),
        url: url.into(),
        http_version: "HTTP/1.1".into(),
        headers: vec![
            Header::new("Host", "example.com"),
            Header::new("X-Raw", vec![0xff, 0x00, b'a']),
            Header::new("Cookie", "a=1"),
            Header::new("Cookie", "b=2"),
        ],
    }
}

fn resp(status: u16) -> ResponseHead {
    ResponseHead {
        status,
        reason: "OK".into(),
        http_version: "HTTP/2".into(),
        headers: vec![
            Header::new("Content-Type", "text/html"),
            Header::new("Content-Encoding", "gzip"),
        ],
    }
}

#[test]
fn exchange_round_trip_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.rec");
    let rec = Recording::open(&path).unwrap();
    let s = rec.begin_session("record").unwrap();
    let mut ex = rec
        .begin_exchange(s, req("https://example.com/a?x=1"))
        .unwrap();
    ex.request_body(b"hello ").unwrap();
    ex.request_body(b"world").unwrap();
    ex.response_head(resp(200));
    ex.response_body(&[0x1f, 0x8b, 0, 1, 2]).unwrap();
    let timings = Timings {
        started_unix_us: 1_700_000_000_000_000,
        connect_us: Some(5),
        send_us: 1,
        wait_us: 2,
        receive_us: 3,
        ..Timings::default()
    };
    let id = ex.finish(timings).unwrap();
    rec.set_host_protocol(s, "example.com:443", "h2").unwrap();
    rec.flush().unwrap();
    drop(rec);

    let rec = Recording::open_readonly(&path).unwrap();
    let all = rec.exchanges(None).unwrap();
    assert_eq!(all.len(), 1);
    let e = &all[0];
    assert_eq!(e.id, id);
    assert_eq!(e.session, s);
    assert_eq!(e.request, req("https://example.com/a?x=1"));
    assert_eq!(e.response.as_ref().unwrap(), &resp(200));
    assert_eq!(e.timings, timings);
    assert_eq!(e.request_body.len, 11);
    assert_eq!(
        rec.body_bytes(id, Part::Request, 100).unwrap(),
        b"hello world"
    );
    assert_eq!(
        rec.body_bytes(id, Part::Response, 100).unwrap(),
        vec![0x1f, 0x8b, 0, 1, 2]
    );
    assert!(matches!(
        rec.body_bytes(id, Part::Request, 5),
        Err(Error::TooLarge(5))
    ));
    assert_eq!(
        rec.host_protocols().unwrap(),
        vec![HostProtocol {
            session: s,
            authority: "example.com:443".into(),
            alpn: "h2".into()
        }]
    );
    assert_eq!(rec.schema_version().unwrap(), SCHEMA_VERSION);
}

fn ok_exchange(rec: &Recording, s: SessionId, url: &str, body: &[u8]) -> ExchangeId {
    let mut ex = rec.begin_exchange(s, req(url)).unwrap();
    ex.response_head(resp(200));
    ex.response_body(body).unwrap();
    ex.finish(Timings::starting_now()).unwrap()
}

#[test]
fn large_body_streams_in_chunks_and_reads_back_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.rec");
    let rec = Recording::open(&path).unwrap();
    let s = rec.begin_session("record").unwrap();
    let mut ex = rec
        .begin_exchange(s, req("https://example.com/big"))
        .unwrap();
    ex.response_head(resp(200));
    // 5 MiB in odd-sized pieces, content depends on position so misordering shows.
    let total = 5 * 1024 * 1024 + 17;
    let data: Vec<u8> = (0..total).map(|i| (i % 251) as u8).collect();
    for piece in data.chunks(10_007) {
        ex.response_body(piece).unwrap();
    }
    let id = ex.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    let mut reader = rec.response_body(id).unwrap();
    assert_eq!(reader.len(), total as u64);
    let mut chunks = 0;
    let mut back = Vec::new();
    while let Some(c) = reader.next_chunk().unwrap() {
        assert!(c.len() <= CHUNK_SIZE, "chunk of {} bytes", c.len());
        chunks += 1;
        back.extend_from_slice(&c);
    }
    assert!(chunks > 1);
    assert_eq!(back, data);
    let info = rec.exchange(id).unwrap().response_body;
    use sha2::Digest;
    let expect: [u8; 32] = sha2::Sha256::digest(&data).into();
    assert_eq!(info.sha256, expect);
    // io::Read view gives the same bytes.
    let mut via_read = Vec::new();
    std::io::Read::read_to_end(&mut rec.response_body(id).unwrap(), &mut via_read).unwrap();
    assert_eq!(via_read, data);
}

#[test]
fn dropped_exchange_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.rec");
    let rec = Recording::open(&path).unwrap();
    let s = rec.begin_session("record").unwrap();
    let mut ex = rec
        .begin_exchange(s, req("https://example.com/cancelled"))
        .unwrap();
    ex.response_head(resp(200));
    ex.response_body(&vec![7u8; INLINE_MAX * 3]).unwrap();
    drop(ex);
    let kept = ok_exchange(&rec, s, "https://example.com/kept", b"ok");
    rec.flush().unwrap();
    let all = rec.exchanges(None).unwrap();
    assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![kept]);
    drop(rec);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let chunks: i64 = conn
        .query_row("SELECT count(*) FROM body_chunks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(chunks, 0, "chunks of the dropped exchange were discarded");
}

#[test]
fn reopen_appends_with_increasing_ids_and_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.rec");
    let (s1, a) = {
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("first").unwrap();
        (s, ok_exchange(&rec, s, "https://example.com/1", b"1"))
    };
    let rec = Recording::open(&path).unwrap();
    let s2 = rec.begin_session("second").unwrap();
    let b = ok_exchange(&rec, s2, "https://example.com/2", b"2");
    rec.flush().unwrap();
    assert!(s2 > s1 && b > a);
    let sessions = rec.sessions().unwrap();
    assert_eq!(
        sessions
            .iter()
            .map(|s| s.label.as_str())
            .collect::<Vec<_>>(),
        vec!["first", "second"]
    );
    assert_eq!(rec.exchanges(Some(s2)).unwrap().len(), 1);
    assert_eq!(rec.exchange_count().unwrap(), 2);
}

#[test]
fn a_trace_ends_at_a_missing_batch() {
    // Batch 1 never arrived (its upload was lost): batch 2's records belong to an action whose
    // begin is in batch 1, so no reader could place them.
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("t.rec")).unwrap();
    let s = rec.begin_session("record").unwrap();
    rec.append_trace_batch(s, "doc", 0, b"[\"s\",0,\"x\"]\n")
        .unwrap();
    rec.append_trace_batch(s, "doc", 2, b"[\"w\",0,0]\n")
        .unwrap();
    rec.append_trace_batch(s, "doc", 3, b"[\"n\",0]\n").unwrap();
    rec.flush().unwrap();
    let text = String::from_utf8(rec.trace_jsonl(s, "doc").unwrap()).unwrap();
    assert_eq!(text, "[\"s\",0,\"x\"]\n");
}

#[test]
fn traces_are_appended_in_seq_order_and_retries_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.rec");
    let rec = Recording::open(&path).unwrap();
    let s = rec.begin_session("record").unwrap();
    let header = br#"{"format":"shepherd-trace","version":1,"page":"https://example.com/"}"#;
    let mut b0 = header.to_vec();
    b0.extend_from_slice(b"\n[\"s\",0,\"x\"]\n");
    rec.append_trace_batch(s, "doc1", 2, b"[\"n\",0]").unwrap();
    rec.append_trace_batch(s, "doc1", 0, &b0).unwrap();
    rec.append_trace_batch(s, "doc1", 1, b"[\"b\",0,1,0,0]\n")
        .unwrap();
    rec.append_trace_batch(s, "doc1", 1, b"[\"dup\"]\n")
        .unwrap();
    rec.append_trace_batch(s, "doc2", 0, b"[\"s\",0,\"y\"]\n")
        .unwrap();
    rec.flush().unwrap();
    let traces = rec.traces().unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[0].doc, "doc1");
    assert_eq!(traces[0].page_url.as_deref(), Some("https://example.com/"));
    assert_eq!(traces[0].batches, 3);
    assert_eq!(traces[1].page_url, None);
    let text = String::from_utf8(rec.trace_jsonl(s, "doc1").unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines,
        vec![
            std::str::from_utf8(header).unwrap(),
            "[\"s\",0,\"x\"]",
            "[\"b\",0,1,0,0]",
            "[\"n\",0]"
        ]
    );
    assert!(matches!(
        rec.trace_jsonl(s, "nope"),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn handle_is_shared_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Recording>();
    assert_send_sync::<ExchangeWriter>();
    assert_send_sync::<BodyReader>();
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("m.rec")).unwrap();
    let s = rec.begin_session("record").unwrap();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let rec = rec.clone();
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| ok_exchange(&rec, s, &format!("https://example.com/{t}/{i}"), b"x"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut handed_out: Vec<i64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .map(|id| id.0)
        .collect();
    handed_out.sort();
    rec.flush().unwrap();
    let all = rec.exchanges(None).unwrap();
    assert_eq!(all.len(), 200);
    // The ids the writers were given are distinct and are the ids stored.
    let stored: Vec<i64> = all.iter().map(|e| e.id.0).collect();
    assert_eq!(handed_out, stored, "ids handed out = ids stored");
    handed_out.dedup();
    assert_eq!(handed_out.len(), 200, "ids unique");
    // Readers run in parallel from a pool of connections.
    let readers: Vec<_> = (0..4)
        .map(|t| {
            let rec = rec.clone();
            let all = all.clone();
            std::thread::spawn(move || {
                for e in all.iter().skip(t).step_by(4) {
                    assert_eq!(rec.body_bytes(e.id, Part::Response, 10).unwrap(), b"x");
                }
            })
        })
        .collect();
    for h in readers {
        h.join().unwrap();
    }
}

#[test]
fn rejects_foreign_and_newer_files() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign.db");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE t (x)").unwrap();
    }
    assert!(matches!(Recording::open(&foreign), Err(Error::Format(_))));
    let newer = dir.path().join("newer.rec");
    drop(Recording::open(&newer).unwrap());
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.execute(
            "UPDATE meta SET value = '999' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
    }
    let err = Recording::open(&newer).err().unwrap().to_string();
    assert!(err.contains("999"), "{err}");
    assert!(Recording::open_readonly(&newer).is_err());
    let garbage = dir.path().join("garbage.rec");
    std::fs::write(
        &garbage,
        b"this is not sqlite at all, just text ............",
    )
    .unwrap();
    assert!(Recording::open(&garbage).is_err());
    assert!(matches!(
        Recording::open_readonly(dir.path().join("missing.rec")),
        Err(Error::NotFound(_))
    ));
}

#[test]
fn readonly_handle_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ro.rec");
    drop(Recording::open(&path).unwrap());
    let rec = Recording::open_readonly(&path).unwrap();
    assert!(matches!(rec.begin_session("x"), Err(Error::ReadOnly)));
    assert!(rec.flush().is_ok());
}

#[test]
fn failed_exchange_keeps_error_and_no_response() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("f.rec")).unwrap();
    let s = rec.begin_session("record").unwrap();
    let mut ex = rec.begin_exchange(s, req("https://down.example/")).unwrap();
    ex.set_error("connection refused");
    let id = ex.finish(Timings::starting_now()).unwrap();
    let mut ws = rec
        .begin_exchange(s, req("wss://example.com/socket"))
        .unwrap();
    ws.response_head(resp(101));
    ws.set_websocket();
    let wid = ws.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    let e = rec.exchange(id).unwrap();
    assert_eq!(e.response, None);
    assert_eq!(e.error.as_deref(), Some("connection refused"));
    assert!(rec.exchange(wid).unwrap().websocket);
    assert!(rec.replay_requests(1024).unwrap().is_empty());
}

#[test]
fn closed_recording_is_a_single_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.rec");
    {
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("record").unwrap();
        ok_exchange(&rec, s, "https://example.com/", b"x");
    }
    {
        let rec = Recording::open_readonly(&path).unwrap();
        assert_eq!(rec.exchange_count().unwrap(), 1);
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["one.rec"]);
}

#[test]
fn second_writer_on_the_same_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lock.rec");
    let first = Recording::open(&path).unwrap();
    let err = Recording::open(&path).err().expect("second writer refused");
    assert!(err.to_string().contains("another recorder"), "{err}");
    // Readers are fine alongside the writer.
    assert!(Recording::open_readonly(&path).is_ok());
    drop(first);
    assert!(Recording::open(&path).is_ok(), "lock released on close");
}

#[test]
fn decoded_response_body_undoes_content_encoding() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("dec.rec")).unwrap();
    let s = rec.begin_session("record").unwrap();
    let text = b"function f() { return 1; }\n".repeat(100);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    let mut ids = Vec::new();
    for (coding, body) in [
        (Some("gzip"), gz.clone()),
        (None, text.clone()),
        (Some("compress"), gz.clone()),
    ] {
        let mut ex = rec
            .begin_exchange(s, req("https://example.com/a.js"))
            .unwrap();
        let mut head = resp(200);
        head.headers
            .retain(|h| !h.name.eq_ignore_ascii_case("content-encoding"));
        if let Some(c) = coding {
            head.headers.push(Header::new("Content-Encoding", c));
        }
        ex.response_head(head);
        ex.response_body(&body).unwrap();
        ids.push(ex.finish(Timings::starting_now()).unwrap());
    }
    let mut failed = rec.begin_exchange(s, req("https://example.com/x")).unwrap();
    failed.set_error("refused");
    let failed = failed.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    let limit = 1 << 20;
    assert_eq!(
        rec.decoded_response_body(ids[0], limit).unwrap(),
        Some(text.clone())
    );
    assert_eq!(
        rec.decoded_response_body(ids[1], limit).unwrap(),
        Some(text.clone())
    );
    assert_eq!(
        rec.decoded_response_body(ids[2], limit).unwrap(),
        None,
        "unknown coding"
    );
    assert_eq!(
        rec.decoded_response_body(ids[0], 100).unwrap(),
        None,
        "decoded over limit"
    );
    assert_eq!(rec.decoded_response_body(failed, limit).unwrap(), None);
    assert!(rec.decoded_response_body(ExchangeId(9999), limit).is_err());
}
