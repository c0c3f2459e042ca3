//! Pages cannot steer the proxy. What a page can learn (its runtime's URL and source, its DOM)
//! opens its own origin's trace upload and instrument endpoints and nothing else: the control
//! surface is only on the control listener behind the operator secret, a page credential is
//! worthless on another origin, and a document id of one origin cannot be written from another.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::*;
use http::Request;
use http_body_util::{BodyExt, Full};
use std::time::Duration;

fn with_control(c: &mut shepherd_proxy::ProxyConfig) {
    c.control_listen = Some("127.0.0.1:0".parse().unwrap());
}

async fn post(client: &mut Client, url: &str, body: &'static [u8]) -> (u16, String) {
    let req = Request::post(url)
        .body(Full::new(Bytes::from_static(body)))
        .unwrap();
    let resp = client.send(req).await;
    let status = resp.status().as_u16();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_credentials_open_only_their_own_origin() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("r.rec");
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(
        Source::Record(rec.clone()),
        Some(&origin.ca_der),
        with_control,
    )
    .await;
    let a = format!("localhost:{}", origin.addr.port());
    let b = format!("127.0.0.1:{}", origin.addr.port());
    let token_a = proxy.page_token(&format!("https://{a}")).unwrap();
    let token_b = proxy.page_token(&format!("https://{b}")).unwrap();
    assert_ne!(token_a, token_b);
    let op = proxy.operator_secret().to_string();
    let mut client = Client::https(proxy.addr(), &a, &ca, &[b"h2"]).await;

    // The runtime is public and carries no secret.
    let (resp, body) = client
        .get(&format!(
            "https://{a}/__shepherd/runtime.js?t={token_a}&m=record"
        ))
        .await;
    assert_eq!(resp.status(), 200);
    assert!(!String::from_utf8_lossy(&body).contains(&op));

    // Trace uploads: no credential, B's credential on A, A's credential with B's document.
    let doc_a = format!("{}.page1", &token_a[..12]);
    let doc_b = format!("{}.page1", &token_b[..12]);
    let trace = |t: &str, doc: &str| format!("https://{a}/__shepherd/trace?t={t}&doc={doc}&seq=0");
    let line: &[u8] = b"{\"v\":2}\n";
    assert_eq!(post(&mut client, &trace("", &doc_a), line).await.0, 403);
    assert_eq!(
        post(&mut client, &trace(&token_b, &doc_a), line).await.0,
        403
    );
    assert_eq!(
        post(&mut client, &trace(&token_b, &doc_b), line).await.0,
        403
    );
    assert_eq!(
        post(&mut client, &trace(&token_a, &doc_b), line).await.0,
        403
    );
    assert_eq!(post(&mut client, &trace(&op, &doc_a), line).await.0, 403);
    assert_eq!(
        post(&mut client, &trace(&token_a, &doc_a), line).await.0,
        204
    );

    // The instrument endpoint likewise.
    let instrument = |t: &str| format!("https://{a}/__shepherd/instrument?t={t}&kind=script");
    assert_eq!(
        post(&mut client, &instrument(&token_b), b"x = 1").await.0,
        403
    );
    assert_eq!(
        post(&mut client, &instrument(&token_a), b"x = 1").await.0,
        200
    );

    // No control endpoint on an intercepted origin, whatever credential comes with it.
    proxy.holds().hold_matching("/never");
    for cred in ["", &token_a, &op] {
        for q in [format!("s={cred}"), format!("t={cred}")] {
            let (resp, body) = client
                .get(&format!("https://{a}/__shepherd/control/holds?{q}"))
                .await;
            assert_eq!(resp.status(), 404, "{q}");
            assert!(!String::from_utf8_lossy(&body).contains("/never"));
            for what in ["hold?all=1", "unhold", "release?all=1", "reset"] {
                let (status, _) = post(
                    &mut client,
                    &format!("https://{a}/__shepherd/control/{what}&{q}"),
                    b"",
                )
                .await;
                assert_eq!(status, 404, "{what} {q}");
            }
        }
    }
    let (status, _) = operator(&proxy, "GET", "/control/holds").await;
    assert_eq!(status, 200);
    // The hold rule set by the operator is still the only one: nothing released, nothing added.
    assert!(proxy.holds().should_hold("/never").is_some());
    assert!(proxy.holds().should_hold("/other").is_none());

    // The control listener: the operator secret only.
    for bearer in [None, Some(""), Some(token_a.as_str()), Some("wrong")] {
        let (status, _) = control_request(&proxy, "GET", "/control/holds", bearer).await;
        assert_eq!(status, 401, "{bearer:?}");
        let (status, _) = control_request(&proxy, "POST", "/control/reset", bearer).await;
        assert_eq!(status, 401, "{bearer:?}");
    }
    let (status, stats) = operator(&proxy, "GET", "/stats").await;
    assert_eq!(status, 200, "{stats}");
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert!(stats["rejected"].as_u64().unwrap() >= 6, "{stats}");
    assert_eq!(stats["source"], "live, recorded");

    proxy.shutdown().await;
    let r = shepherd_recording::Recording::open_readonly(&rec).unwrap();
    let docs: Vec<String> = r.traces().unwrap().into_iter().map(|t| t.doc).collect();
    assert_eq!(docs, [doc_a]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_mode_exposes_no_control_on_the_public_side() {
    let origin = Origin::start(true, true).await;
    let (proxy, _ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |c| {
        c.reverse = Some(
            format!("https://localhost:{}", origin.addr.port())
                .parse()
                .unwrap(),
        );
    })
    .await;
    proxy.holds().hold_matching("/secret-path");
    // The public side: plain HTTP in front of the HTTPS origin.
    for path in [
        "/__shepherd/control/holds",
        "/__shepherd/control/release?all=1",
        "/__shepherd/stats",
        "/stats",
    ] {
        let raw = raw_http(
            proxy.addr(),
            format!("GET {path} HTTP/1.1\r\nHost: staging\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(!raw.contains("/secret-path"), "{path}: {raw}");
        assert!(!raw.starts_with("HTTP/1.1 200"), "{path}: {raw}");
    }
    assert!(proxy.control_addr().is_none());
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(proxy.holds().pending().len(), 0);
}
