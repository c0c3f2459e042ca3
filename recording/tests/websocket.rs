//! WebSocket messages: stored in order with both directions, read back per exchange, copied by
//! merge with the new exchange id; version-2 files (no message table) still open read-only.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;

fn ws_exchange(rec: &Recording, s: SessionId, url: &str) -> ExchangeId {
    let mut ex = rec
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: url.into(),
                http_version: "HTTP/1.1".into(),
                headers: vec![Header::new("Upgrade", "websocket")],
            },
        )
        .unwrap();
    ex.response_head(ResponseHead {
        status: 101,
        reason: String::new(),
        http_version: "HTTP/1.1".into(),
        headers: vec![Header::new("Upgrade", "websocket")],
    });
    ex.set_websocket();
    ex.finish(Timings::starting_now()).unwrap()
}

fn msg(from_client: bool, kind: WsKind, at_us: i64, data: &[u8]) -> WsMessage {
    WsMessage {
        from_client,
        kind,
        at_us,
        data: data.to_vec(),
    }
}

fn conversation() -> Vec<WsMessage> {
    vec![
        msg(false, WsKind::Text, 10, b"welcome"),
        msg(true, WsKind::Text, 200, b"hello"),
        msg(false, WsKind::Text, 250, b"hello"),
        msg(true, WsKind::Binary, 900, &[0, 1, 2, 255]),
        msg(false, WsKind::Binary, 950, &[0, 1, 2, 255]),
        msg(true, WsKind::Close, 1000, &[3, 232]),
    ]
}

#[test]
fn messages_round_trip_in_order_and_merge_copies_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.rec");
    let id = {
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("record").unwrap();
        let first = ws_exchange(&rec, s, "wss://chat.test/socket");
        let other = ws_exchange(&rec, s, "wss://chat.test/other");
        // Stored out of order: seq decides.
        let msgs = conversation();
        for (seq, m) in msgs.iter().enumerate().rev() {
            rec.append_ws_message(first, seq as u64, m.clone()).unwrap();
        }
        rec.append_ws_message(other, 0, msg(true, WsKind::Text, 1, b"x"))
            .unwrap();
        // A retried seq is ignored.
        rec.append_ws_message(first, 0, msg(true, WsKind::Text, 1, b"dup"))
            .unwrap();
        rec.flush().unwrap();
        first
    };
    let rec = Recording::open_readonly(&path).unwrap();
    assert_eq!(rec.ws_messages(id).unwrap(), conversation());
    assert_eq!(rec.websocket_exchanges().unwrap().len(), 2);
    assert_eq!(rec.ws_messages(ExchangeId(999)).unwrap(), vec![]);

    let merged = dir.path().join("merged.rec");
    merge(&[&path, &path], &merged).unwrap();
    let m = Recording::open_readonly(&merged).unwrap();
    let ids = m.websocket_exchanges().unwrap();
    assert_eq!(ids.len(), 4);
    assert_eq!(m.ws_messages(ids[0]).unwrap(), conversation());
    assert_eq!(m.ws_messages(ids[2]).unwrap(), conversation());
    assert_eq!(m.ws_messages(ids[3]).unwrap().len(), 1);
}

#[test]
fn version_two_files_open_read_only_without_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.rec");
    let id = {
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("record").unwrap();
        let id = ws_exchange(&rec, s, "wss://chat.test/socket");
        rec.flush().unwrap();
        id
    };
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE ws_messages; UPDATE meta SET value = '2' WHERE key = 'schema_version';",
        )
        .unwrap();
    }
    let rec = Recording::open_readonly(&path).unwrap();
    assert_eq!(rec.schema_version().unwrap(), 2);
    assert_eq!(rec.ws_messages(id).unwrap(), vec![]);
    drop(rec);
    // Opening it writable migrates it.
    let rec = Recording::open(&path).unwrap();
    assert_eq!(rec.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(rec.ws_messages(id).unwrap(), vec![]);
}

#[test]
fn har_round_trip_keeps_messages_and_reads_chromes_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws.rec");
    {
        let rec = Recording::open(&path).unwrap();
        let s = rec.begin_session("record").unwrap();
        let id = ws_exchange(&rec, s, "wss://chat.test/socket");
        for (seq, m) in conversation().into_iter().enumerate() {
            rec.append_ws_message(id, seq as u64, m).unwrap();
        }
        rec.flush().unwrap();
    }
    let mut har = Vec::new();
    har::export(&Recording::open_readonly(&path).unwrap(), None, &mut har).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&har).unwrap();
    let entry = &doc["log"]["entries"][0];
    assert_eq!(entry["_resourceType"], "websocket");
    let msgs = entry["_webSocketMessages"].as_array().unwrap();
    assert_eq!(msgs.len(), 6);
    assert_eq!(msgs[0]["type"], "receive");
    assert_eq!(msgs[0]["data"], "welcome");
    assert_eq!(msgs[1]["type"], "send");
    assert_eq!(msgs[3]["opcode"], 2);

    let back = dir.path().join("back.rec");
    let rec = Recording::open(&back).unwrap();
    har::import(&rec, &mut &har[..], "har import").unwrap();
    let ids = rec.websocket_exchanges().unwrap();
    assert_eq!(rec.ws_messages(ids[0]).unwrap(), conversation());

    // Chrome's devtools write `time` in epoch seconds and no `_atUs`.
    let chrome = serde_json::json!({"log": {"version": "1.2", "entries": [{
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 1.0,
        "_resourceType": "websocket",
        "request": {"method": "GET", "url": "wss://echo.test/", "httpVersion": "HTTP/1.1",
                    "headers": [], "cookies": [], "queryString": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1",
                     "headers": [], "cookies": [], "content": {"size": 0, "mimeType": ""},
                     "redirectURL": "", "headersSize": -1, "bodySize": 0},
        "cache": {},
        "timings": {"send": 0, "wait": 0, "receive": 0},
        "_webSocketMessages": [
            {"type": "send", "time": 1767225600.5, "opcode": 1, "data": "hi"},
            {"type": "receive", "time": 1767225600.75, "opcode": 2, "data": "AAE="}
        ]
    }]}});
    let bytes = serde_json::to_vec(&chrome).unwrap();
    let (_, n) = har::import(&rec, &mut &bytes[..], "chrome").unwrap();
    assert_eq!(n, 1);
    let ids = rec.websocket_exchanges().unwrap();
    let got = rec.ws_messages(*ids.last().unwrap()).unwrap();
    assert_eq!(
        got,
        vec![
            msg(true, WsKind::Text, 500_000, b"hi"),
            msg(false, WsKind::Binary, 750_000, &[0, 1]),
        ]
    );
}
