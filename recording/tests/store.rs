//! Store round trips on real SQLite files.

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
    let mut ex = rec.begin_exchange(s, req("https://example.com/a?x=1")).unwrap();
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
