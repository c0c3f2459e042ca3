//! Replay offers each origin's recorded protocol: an origin that spoke HTTP/1.1 is served with
//! ALPN `http/1.1` only, an h2 origin with `h2` (and the `http/1.1` fallback), also for
//! recordings without a `hosts` row (HAR imports), judged by their exchanges.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use shepherd_proxy::ReplayOptions;
use shepherd_recording::{Header, Recording, RequestHead, ResponseHead, Timings};

async fn negotiated(
    proxy: std::net::SocketAddr,
    authority: &str,
    ca: &impl TrustRoot,
    offer: &[&[u8]],
) -> Option<Vec<u8>> {
    let host = authority.rsplit_once(':').unwrap().0;
    let tls = connect_tls(proxy, authority, host, ca, offer).await;
    tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_offers_the_protocol_each_origin_spoke() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("site.rec");
    let mut h2_origin = Origin::start(true, true).await;
    let mut h1_origin = Origin::start(true, false).await;
    let h2_auth = format!("localhost:{}", h2_origin.addr.port());
    let h1_auth = format!("localhost:{}", h1_origin.addr.port());
    {
        // The browser offers both (and gets h2 from the proxy) for both origins.
        let trust = UpstreamTrustBoth(h2_origin.ca_der.clone(), h1_origin.ca_der.clone());
        let (proxy, ca) = start_proxy(Source::Record(rec.clone()), None, |c| {
            c.source = shepherd_proxy::ResponseSource::Live {
                trust: trust.into_trust(),
                record: Some(rec.clone()),
            };
        })
        .await;
        for auth in [&h2_auth, &h1_auth] {
            let mut client = Client::https(proxy.addr(), auth, &ca, &[b"h2", b"http/1.1"]).await;
            assert!(
                matches!(client, Client::H2(_)),
                "record offers h2 to browsers"
            );
            let (resp, _) = client.get(&format!("https://{auth}/hello")).await;
            assert_eq!(resp.status(), 200);
        }
        proxy.shutdown().await;
    }
    h2_origin.stop().await;
    h1_origin.stop().await;

    let stored = Recording::open_readonly(&rec)
        .unwrap()
        .host_protocols()
        .unwrap();
    let alpn_of = |auth: &str| {
        stored
            .iter()
            .find(|h| h.authority == auth)
            .map(|h| h.alpn.clone())
    };
    assert_eq!(alpn_of(&h2_auth).as_deref(), Some("h2"), "{stored:?}");
    assert_eq!(alpn_of(&h1_auth).as_deref(), Some("http/1.1"), "{stored:?}");

    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    let both: &[&[u8]] = &[b"h2", b"http/1.1"];
    assert_eq!(
        negotiated(proxy.addr(), &h2_auth, &ca, both)
            .await
            .as_deref(),
        Some(&b"h2"[..])
    );
    assert_eq!(
        negotiated(proxy.addr(), &h1_auth, &ca, both)
            .await
            .as_deref(),
        Some(&b"http/1.1"[..])
    );
    // An h2 origin still accepts an HTTP/1.1-only client.
    assert_eq!(
        negotiated(proxy.addr(), &h2_auth, &ca, &[b"http/1.1"])
            .await
            .as_deref(),
        Some(&b"http/1.1"[..])
    );
    // Origins the recording never saw keep the default offer.
    assert_eq!(
        negotiated(proxy.addr(), "unknown.test:443", &ca, both)
            .await
            .as_deref(),
        Some(&b"h2"[..])
    );
    // And the h1 origin is served over the protocol it got.
    let mut client = Client::https(proxy.addr(), &h1_auth, &ca, both).await;
    assert!(matches!(client, Client::H1(_)));
    let (resp, body) = client.get(&format!("https://{h1_auth}/hello")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(&body[..], b"hello from origin");
    assert_eq!(proxy.upstream_connects(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_host_rows_the_exchanges_decide() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("imported.rec");
    {
        let r = Recording::open(&rec).unwrap();
        let session = r.begin_session("har import").unwrap();
        for (url, version) in [
            ("https://old.test/", "HTTP/1.1"),
            ("https://new.test/", "HTTP/2"),
        ] {
            let mut ex = r
                .begin_exchange(
                    session,
                    RequestHead {
                        method: "GET".into(),
                        url: url.into(),
                        http_version: version.into(),
                        headers: vec![],
                    },
                )
                .unwrap();
            ex.response_head(ResponseHead {
                status: 200,
                reason: String::new(),
                http_version: version.into(),
                headers: vec![Header::new("content-type", "text/plain")],
            });
            ex.response_body(b"ok").unwrap();
            ex.finish(Timings::starting_now()).unwrap();
        }
        r.flush().unwrap();
        assert!(r.host_protocols().unwrap().is_empty());
    }
    let (proxy, ca) = start_proxy(
        Source::Replay(rec.clone(), ReplayOptions::default()),
        None,
        |_| {},
    )
    .await;
    let both: &[&[u8]] = &[b"h2", b"http/1.1"];
    assert_eq!(
        negotiated(proxy.addr(), "old.test:443", &ca, both)
            .await
            .as_deref(),
        Some(&b"http/1.1"[..])
    );
    assert_eq!(
        negotiated(proxy.addr(), "new.test:443", &ca, both)
            .await
            .as_deref(),
        Some(&b"h2"[..])
    );
}

/// Upstream trust for two test origins with different CAs.
struct UpstreamTrustBoth(
    rustls_pki_types::CertificateDer<'static>,
    rustls_pki_types::CertificateDer<'static>,
);

impl UpstreamTrustBoth {
    fn into_trust(self) -> shepherd_proxy::UpstreamTrust {
        shepherd_proxy::UpstreamTrust::OnlyRoots(vec![self.0, self.1])
    }
}
