//! HAR 1.2 import (a devtools-style fixture) and export → import round trips.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;
use std::io::Write;

const CHROME: &str = include_str!("fixtures/chrome.har");

fn import_fixture(dir: &std::path::Path) -> (Recording, SessionId) {
    let rec = Recording::open(dir.join("chrome.rec")).unwrap();
    let (s, n) = har::import(&rec, &mut CHROME.as_bytes(), "har import chrome.har").unwrap();
    assert_eq!(n, 4);
    (rec, s)
}

#[test]
fn imports_a_devtools_har() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, s) = import_fixture(dir.path());
    let ex = rec.exchanges(Some(s)).unwrap();
    assert_eq!(ex.len(), 4);
    assert_eq!(
        rec.sessions().unwrap()[0].started_unix_us,
        1_714_641_153_456_000,
        "session starts at the earliest entry"
    );

    let doc = &ex[0];
    assert_eq!(doc.request.method, "GET");
    assert_eq!(doc.request.url, "https://shop.test/");
    assert_eq!(doc.request.http_version, "HTTP/2");
    assert!(
        doc.request.headers.iter().all(|h| !h.name.starts_with(':')),
        "pseudo-headers dropped"
    );
    assert_eq!(
        header_value(&doc.request.headers, "cookie"),
        Some(&b"sid=abc; theme=dark"[..])
    );
    let resp = doc.response.as_ref().unwrap();
    assert_eq!(resp.status, 200);
    // HAR text is decoded: the stored response must not claim gzip any more.
    assert_eq!(header_value(&resp.headers, "content-encoding"), None);
    let html = rec.body_bytes(doc.id, Part::Response, 1 << 20).unwrap();
    assert_eq!(
        html,
        b"<!doctype html><title>Shop</title><script src=app.js></script>"
    );
    assert_eq!(
        header_value(&resp.headers, "content-length"),
        Some(html.len().to_string().as_bytes())
    );
    assert_eq!(doc.timings.started_unix_us, 1_714_641_153_456_000);
    assert_eq!(doc.timings.blocked_us, Some(1_200));
    assert_eq!(doc.timings.dns_us, None);
    assert_eq!(doc.timings.wait_us, 38_900);

    let png = rec.body_bytes(ex[1].id, Part::Response, 1 << 20).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "base64 image decoded");
    assert_eq!(png.len(), 33);

    let post = &ex[2];
    assert_eq!(post.request.method, "POST");
    assert_eq!(
        rec.body_bytes(post.id, Part::Request, 1024).unwrap(),
        br#"{"item":42,"qty":1}"#
    );
    assert_eq!(post.response.as_ref().unwrap().status, 201);
    assert_eq!(
        post.timings.started_unix_us, 1_714_641_153_600_000,
        "offset timestamps normalised to UTC"
    );

    let failed = &ex[3];
    assert_eq!(failed.response, None);
    assert_eq!(failed.error.as_deref(), Some("net::ERR_CONNECTION_REFUSED"));
}

#[test]
fn imported_har_replays_through_the_matcher() {
    let dir = tempfile::tempdir().unwrap();
    let (rec, _) = import_fixture(dir.path());
    let mut m = Matcher::new(
        rec.replay_requests(1 << 20).unwrap(),
        MatchConfig::default(),
    );
    assert_eq!(m.len(), 3, "the failed request is not replayable");
    let hit = m
        .find(&LiveRequest {
            method: "GET",
            url: "https://shop.test/img/dot.png?v=3",
            headers: &[],
            body: b"",
        })
        .unwrap();
    assert_eq!(hit.tier, Tier::Exact);
}

fn timings(ms: i64) -> Timings {
    Timings {
        started_unix_us: 1_714_641_153_000_000 + ms * 1000,
        blocked_us: Some(250),
        dns_us: Some(1_000),
        connect_us: Some(3_000),
        ssl_us: Some(2_000),
        send_us: 100,
        wait_us: 20_000,
        receive_us: 1_500,
    }
}

#[test]
fn export_then_import_keeps_bytes_headers_status_and_timings() {
    let dir = tempfile::tempdir().unwrap();
    let src = Recording::open(dir.path().join("src.rec")).unwrap();
    let s = src.begin_session("record").unwrap();

    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(b"body { color: red }\n".repeat(50).as_slice())
        .unwrap();
    let gz = gz.finish().unwrap();
    let binary: Vec<u8> = (0..=255u8).rev().collect();

    let mut a = src
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: "https://site.test/style.css?x=1&y=%20".into(),
                http_version: "HTTP/2".into(),
                headers: vec![
                    Header::new("accept-encoding", "gzip"),
                    Header::new("cookie", "a=1"),
                    Header::new("cookie", "b=2"),
                ],
            },
        )
        .unwrap();
    a.response_head(ResponseHead {
        status: 200,
        reason: String::new(),
        http_version: "HTTP/2".into(),
        headers: vec![
            Header::new("content-type", "text/css"),
            Header::new("content-encoding", "gzip"),
            Header::new("set-cookie", "k=v; Path=/"),
        ],
    });
    a.response_body(&gz).unwrap();
    a.finish(timings(0)).unwrap();

    let mut b = src
        .begin_exchange(
            s,
            RequestHead {
                method: "PUT".into(),
                url: "http://site.test/upload".into(),
                http_version: "HTTP/1.1".into(),
                headers: vec![Header::new("Content-Type", "application/octet-stream")],
            },
        )
        .unwrap();
    b.request_body(&binary).unwrap();
    b.response_head(ResponseHead {
        status: 418,
        reason: "I'm a teapot".into(),
        http_version: "HTTP/1.1".into(),
        headers: vec![Header::new("Content-Type", "application/octet-stream")],
    });
    b.response_body(&binary).unwrap();
    b.finish(timings(7)).unwrap();

    let mut c = src
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: "https://down.test/".into(),
                http_version: "HTTP/1.1".into(),
                headers: vec![],
            },
        )
        .unwrap();
    c.set_error("connect: refused");
    c.finish(Timings {
        blocked_us: None,
        dns_us: None,
        connect_us: None,
        ssl_us: None,
        ..timings(9)
    })
    .unwrap();

    let mut w = src
        .begin_exchange(
            s,
            RequestHead {
                method: "GET".into(),
                url: "wss://site.test/live".into(),
                http_version: "HTTP/1.1".into(),
                headers: vec![Header::new("Upgrade", "websocket")],
            },
        )
        .unwrap();
    w.response_head(ResponseHead {
        status: 101,
        reason: "Switching Protocols".into(),
        http_version: "HTTP/1.1".into(),
        headers: vec![Header::new("Upgrade", "websocket")],
    });
    w.set_websocket();
    w.finish(timings(11)).unwrap();
    src.flush().unwrap();

    let mut har_bytes = Vec::new();
    har::export(&src, None, &mut har_bytes).unwrap();
    let har: serde_json::Value = serde_json::from_slice(&har_bytes).unwrap();
    assert_eq!(har["log"]["version"], "1.2");
    let css = &har["log"]["entries"][0]["response"]["content"];
    assert_eq!(
        css["text"].as_str().unwrap(),
        "body { color: red }\n".repeat(50),
        "HAR text is the decoded body"
    );
    assert_eq!(css["encoding"], serde_json::Value::Null);
    assert_eq!(
        har["log"]["entries"][1]["response"]["content"]["encoding"],
        "base64"
    );
    assert_eq!(
        har["log"]["entries"][1]["request"]["postData"]["_encoding"],
        "base64"
    );
    assert_eq!(har["log"]["entries"][0]["timings"]["wait"], 20.0);

    let dst = Recording::open(dir.path().join("dst.rec")).unwrap();
    let (_, n) = har::import(&dst, &mut har_bytes.as_slice(), "round trip").unwrap();
    assert_eq!(n, 4);
    let before = src.exchanges(None).unwrap();
    let after = dst.exchanges(None).unwrap();
    for (x, y) in before.iter().zip(&after) {
        assert_eq!(x.request, y.request);
        assert_eq!(x.response, y.response);
        assert_eq!(x.timings, y.timings);
        assert_eq!(x.websocket, y.websocket);
        assert_eq!(x.error, y.error);
        assert_eq!(x.request_body, y.request_body, "request body digest");
        assert_eq!(x.response_body, y.response_body, "response body digest");
        for part in [Part::Request, Part::Response] {
            assert_eq!(
                src.body_bytes(x.id, part, 1 << 20).unwrap(),
                dst.body_bytes(y.id, part, 1 << 20).unwrap()
            );
        }
    }
    assert_eq!(before.len(), after.len());
}

#[test]
fn malformed_har_is_rejected_without_writing() {
    let dir = tempfile::tempdir().unwrap();
    let rec = Recording::open(dir.path().join("x.rec")).unwrap();
    for bad in [
        &b"{not json"[..],
        br#"{"log":{}}"#,
        br#"{"log":{"entries":[{"request":{"method":"GET"},"response":{"status":200}}]}}"#,
        br#"{"log":{"entries":[{"request":{"method":"GET","url":"https://a/"},"response":{"status":200,"content":{"text":"%%%","encoding":"base64"}}}]}}"#,
    ] {
        let err = har::import(&rec, &mut &bad[..], "bad");
        assert!(err.is_err());
    }
    rec.flush().unwrap();
    assert!(rec.sessions().unwrap().is_empty());
    assert_eq!(rec.exchange_count().unwrap(), 0);
}
