//! Live proxying over real sockets and real TLS: h1/h2 on both sides, encodings, chunked and
//! large streamed bodies, WebSocket, IP literals, plain HTTP, limits, the reserved namespace.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use common::*;
use http::Request;
use http_body_util::{BodyExt, Full};
use shepherd_proxy::{HtmlStream, ResponseMeta, RewriteKind, Rewriter};
use shepherd_recording::codec::{Coding, decode_all};
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h1_and_h2_clients_to_h2_and_h1_origins() {
    for origin_h2 in [true, false] {
        let origin = Origin::start(true, origin_h2).await;
        let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
        let authority = format!("localhost:{}", origin.addr.port());
        for alpn in [
            &[b"h2" as &[u8], b"http/1.1"][..],
            &[b"http/1.1" as &[u8]][..],
        ] {
            let mut client = Client::https(proxy.addr(), &authority, &ca, alpn).await;
            let want_h2 = alpn[0] == b"h2";
            assert_eq!(matches!(client, Client::H2(_)), want_h2);
            for _ in 0..3 {
                let (resp, body) = client.get(&format!("https://{authority}/hello")).await;
                assert_eq!(resp.status(), 200);
                assert_eq!(&body[..], b"hello from origin");
                let origin_version = resp.headers()["x-origin-version"].to_str().unwrap();
                let expect = if origin_h2 { "HTTP/2.0" } else { "HTTP/1.1" };
                assert_eq!(origin_version, expect, "origin h2={origin_h2}");
            }
        }
        // Keep-alive and pooling: far fewer origin connections than requests.
        assert!(origin.connections.load(std::sync::atomic::Ordering::SeqCst) <= 2);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encodings_pass_through_untouched_without_rewriter() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    for (path, coding) in [
        ("gzip", Coding::Gzip),
        ("br", Coding::Brotli),
        ("zstd", Coding::Zstd),
        ("deflate", Coding::Deflate),
    ] {
        let (resp, body) = client.get(&format!("https://{authority}/{path}")).await;
        assert_eq!(resp.headers()["content-encoding"], path);
        let text = decode_all(&[coding], &body).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), compressible_text());
    }
}

/// Upper-cases HTML as it streams and appends a marker to scripts.
struct Upper;
struct UpperStream;
impl HtmlStream for UpperStream {
    fn feed(&mut self, chunk: &[u8]) -> Vec<u8> {
        chunk.to_ascii_uppercase()
    }
    fn finish(&mut self) -> Vec<u8> {
        b"<!--END-->".to_vec()
    }
}
impl Rewriter for Upper {
    fn plan(&self, _meta: &ResponseMeta<'_>, headers: &mut http::HeaderMap) -> RewriteKind {
        headers.insert("x-rewritten", "1".parse().unwrap());
        match headers.get("content-type").and_then(|v| v.to_str().ok()) {
            Some(t) if t.starts_with("text/html") => RewriteKind::Html,
            _ => RewriteKind::None,
        }
    }
    fn html(
        &self,
        _meta: &ResponseMeta<'_>,
        _headers: &mut http::HeaderMap,
    ) -> Box<dyn HtmlStream> {
        Box::new(UpperStream)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewriter_sees_decoded_html_and_lengths_are_fixed() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |c| {
        c.rewriter = Some(Arc::new(Upper));
    })
    .await;
    let authority = format!("localhost:{}", origin.addr.port());
    for alpn in [&[b"h2" as &[u8]][..], &[b"http/1.1" as &[u8]][..]] {
        let mut client = Client::https(proxy.addr(), &authority, &ca, alpn).await;
        for path in ["gzip", "br", "zstd", "deflate", "page.html"] {
            let (resp, body) = client.get(&format!("https://{authority}/{path}")).await;
            assert_eq!(resp.status(), 200);
            assert_eq!(resp.headers()["x-rewritten"], "1");
            assert!(resp.headers().get("content-encoding").is_none(), "{path}");
            if let Some(len) = resp.headers().get("content-length") {
                assert_eq!(len.to_str().unwrap(), body.len().to_string());
            }
            let text = String::from_utf8(body.to_vec()).unwrap();
            assert!(text.ends_with("<!--END-->"), "{path}");
            let expected = if path == "page.html" {
                PAGE.to_ascii_uppercase()
            } else {
                compressible_text().to_ascii_uppercase()
            };
            assert_eq!(text.trim_end_matches("<!--END-->"), expected);
        }
        // Not HTML: untouched, even with a rewriter installed.
        let (_, body) = client.get(&format!("https://{authority}/hello")).await;
        assert_eq!(&body[..], b"hello from origin");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_and_post_bodies() {
    let origin = Origin::start(true, false).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, body) = client.get(&format!("https://{authority}/chunked")).await;
    assert_eq!(resp.status(), 200);
    let expect: String = (0..10).map(|i| format!("chunk{i};")).collect();
    assert_eq!(body, Bytes::from(expect));
    let payload = vec![7u8; 300_000];
    let req = Request::post(format!("https://{authority}/echo"))
        .body(Full::new(Bytes::from(payload.clone())))
        .unwrap();
    let resp = client.send(req).await;
    let got = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(got.len(), payload.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ip_literal_host_gets_an_ip_san() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("127.0.0.1:{}", origin.addr.port());
    // The client checks the leaf against the IP address: this fails without an IP SAN.
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, body) = client.get(&format!("https://{authority}/hello")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(&body[..], b"hello from origin");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_proxying_and_the_ca_page() {
    let origin = Origin::start(false, false).await;
    let (proxy, ca) = start_proxy(Source::Serve, None, |_| {}).await;
    let port = origin.addr.port();
    let out = raw_http(
        proxy.addr(),
        format!(
            "GET http://127.0.0.1:{port}/hello HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.ends_with("hello from origin"), "{out}");
    let page = raw_http(
        proxy.addr(),
        b"GET http://shepherd.ca/ HTTP/1.1\r\nHost: shepherd.ca\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(page.contains("Shepherd certificate authority"), "{page}");
    let pem = raw_http(
        proxy.addr(),
        b"GET http://shepherd.ca/__shepherd/ca.pem HTTP/1.1\r\nHost: shepherd.ca\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(pem.contains(ca.cert_pem().trim()), "{pem}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_get_400_and_the_proxy_keeps_serving() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    for garbage in [
        &b"GARBAGE \x01\x02 nonsense\r\n\r\n"[..],
        &b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..],
        &b"CONNECT HTTP/1.1\r\n\r\n"[..],
    ] {
        let out = raw_http(proxy.addr(), garbage).await;
        assert!(out.starts_with("HTTP/1.1 400"), "{garbage:?} -> {out}");
    }
    let huge = format!(
        "GET http://a.test/ HTTP/1.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(200_000)
    );
    let out = raw_http(proxy.addr(), huge.as_bytes()).await;
    // The proxy answers 431 and closes while the client is still sending; the kernel may then
    // reset the connection and drop that answer before the client reads it.
    assert!(out.starts_with("HTTP/1.1 431") || out.is_empty(), "{out}");
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, _) = client.get(&format!("https://{authority}/hello")).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reserved_namespace_is_never_forwarded() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let before = proxy.upstream_connects();
    for path in [
        "/__shepherd/runtime.js?m=record",
        "/__shepherd/ca",
        "/__shepherd/trace",
        "/__shepherd/control/holds",
        "/__shepherd/nothing",
    ] {
        let (resp, body) = client.get(&format!("https://{authority}{path}")).await;
        assert_ne!(resp.status(), 502, "{path}");
        if path.starts_with("/__shepherd/runtime.js") {
            assert_eq!(resp.status(), 200);
            assert_eq!(&body[..], b"/* runtime */");
        }
    }
    assert_eq!(
        proxy.upstream_connects(),
        before,
        "reserved requests went upstream"
    );
    assert_eq!(
        origin.connections.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_echo_through_the_proxy() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let tls = connect_tls(proxy.addr(), &authority, "localhost", &ca, &[b"http/1.1"]).await;
    let mut req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
        format!("wss://{authority}/ws"),
    )
    .unwrap();
    req.headers_mut()
        .insert("sec-websocket-extensions", "x-test-ext".parse().unwrap());
    let (mut ws, resp) = tokio_tungstenite::client_async(req, tls).await.unwrap();
    assert_eq!(resp.status(), 101);
    // Outside record mode the handshake reaches the origin untouched.
    assert_eq!(resp.headers()["x-origin-saw-extensions"], "x-test-ext");
    for i in 0..5 {
        ws.send(Message::text(format!("ping {i}"))).await.unwrap();
        let got = ws.next().await.unwrap().unwrap();
        assert_eq!(got.into_text().unwrap().as_str(), format!("ping {i}"));
    }
    ws.send(Message::binary(vec![1u8, 2, 3])).await.unwrap();
    let got = ws.next().await.unwrap().unwrap();
    assert_eq!(got.into_data().as_ref(), &[1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_body_streams_with_bounded_memory() {
    // Plain HTTP keeps the debug-build test fast; the streaming path is the same for TLS.
    let origin = Origin::start(false, false).await;
    let (proxy, _ca) = start_proxy(Source::Serve, None, |_| {}).await;
    let port = origin.addr.port();
    let tcp = tokio::net::TcpStream::connect(proxy.addr()).await.unwrap();
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    const MB: u64 = 200;
    let req = Request::get(format!("http://127.0.0.1:{port}/big?mb={MB}"))
        .header("host", format!("127.0.0.1:{port}"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let resp = send.send_request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    let base = rss_bytes();
    let mut peak = base;
    let mut total = 0u64;
    let mut body = resp.into_body();
    while let Some(frame) = body.frame().await {
        if let Ok(d) = frame.unwrap().into_data() {
            total += d.len() as u64;
            if total % (16 << 20) < d.len() as u64 {
                peak = peak.max(rss_bytes());
            }
        }
    }
    assert_eq!(total, MB << 20);
    let grown = peak.saturating_sub(base);
    assert!(
        grown < 64 << 20,
        "memory grew by {} MB while streaming {MB} MB",
        grown >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_loopback_needs_auth_and_auth_is_checked() {
    let ca = Arc::new(shepherd_proxy::CertificateAuthority::ephemeral().unwrap());
    let mut config = shepherd_proxy::ProxyConfig::new(shepherd_proxy::ResponseSource::live());
    config.listen = "0.0.0.0:0".parse().unwrap();
    assert!(matches!(
        shepherd_proxy::Proxy::start(config, ca.clone()).await,
        Err(shepherd_proxy::ProxyError::NeedsAuth(_))
    ));
    let origin = Origin::start(false, false).await;
    let (proxy, _) = start_proxy(Source::Serve, None, |c| {
        c.auth = Some(shepherd_proxy::ProxyAuth::parse("u:p").unwrap());
    })
    .await;
    let port = origin.addr.port();
    let req =
        format!("GET http://127.0.0.1:{port}/hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
    let out = raw_http(proxy.addr(), format!("{req}\r\n").as_bytes()).await;
    assert!(out.starts_with("HTTP/1.1 407"), "{out}");
    let out = raw_http(
        proxy.addr(),
        format!("{req}Proxy-Authorization: Basic dTpw\r\n\r\n").as_bytes(),
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_connections_mint_one_certificate() {
    let origin = Origin::start(true, true).await;
    let (proxy, ca) = start_proxy(Source::Serve, Some(&origin.ca_der), |_| {}).await;
    let authority = format!("localhost:{}", origin.addr.port());
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let ca = ca.clone();
        let authority = authority.clone();
        let addr = proxy.addr();
        tasks.push(tokio::spawn(async move {
            let mut c = Client::https(addr, &authority, &ca, &[b"h2"]).await;
            c.get(&format!("https://{authority}/hello"))
                .await
                .0
                .status()
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), 200);
    }
    assert_eq!(ca.minted_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_origin_is_a_502_with_a_reason() {
    let (proxy, ca) = start_proxy(Source::Serve, None, |_| {}).await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let authority = format!("localhost:{port}");
    let mut client = Client::https(proxy.addr(), &authority, &ca, &[b"h2"]).await;
    let (resp, _) = client.get(&format!("https://{authority}/x")).await;
    assert_eq!(resp.status(), 502);
    assert!(resp.headers().contains_key("x-shepherd-error"));
    // The h2 connection survives the failed stream.
    let (resp, _) = client.get(&format!("https://{authority}/y")).await;
    assert_eq!(resp.status(), 502);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_proxy_mode() {
    let origin = Origin::start(false, false).await;
    let port = origin.addr.port();
    let (proxy, _) = start_proxy(Source::Serve, None, |c| {
        c.reverse = Some(format!("http://127.0.0.1:{port}").parse().unwrap());
    })
    .await;
    let out = raw_http(
        proxy.addr(),
        b"GET /hello HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.ends_with("hello from origin"), "{out}");
    let out = raw_http(
        proxy.addr(),
        b"GET /redirect HTTP/1.1\r\nHost: proxy.test\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert!(out.starts_with("HTTP/1.1 302"), "{out}");
    assert!(
        out.to_ascii_lowercase().contains("location: /hello\r\n"),
        "{out}"
    );
}

/// A reverse proxy's visitors who start TLS on the listener get the site's own certificate
/// (not a leaf of the CA) and must send the credentials like plain-HTTP visitors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reverse_tls_visitors_get_the_site_certificate_and_need_the_credentials() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let origin = Origin::start(false, false).await;
    let port = origin.addr.port();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["site.test".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_pem, key_pem) = (cert.pem(), key.serialize_pem());
    let certs = shepherd_proxy::SiteCertificates::from_pem(&[(&cert_pem, &key_pem)]).unwrap();
    let (proxy, _) = start_proxy(Source::Serve, None, |c| {
        c.reverse = Some(format!("http://127.0.0.1:{port}").parse().unwrap());
        c.auth = Some(shepherd_proxy::ProxyAuth::parse("u:p").unwrap());
        c.site_certs = Arc::new(certs);
    })
    .await;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let get = |auth: &'static str| {
        let connector = connector.clone();
        let addr = proxy.addr();
        async move {
            let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
            let name = rustls::pki_types::ServerName::try_from("site.test").unwrap();
            // Verified against the site's certificate only: a CA leaf would fail here.
            let mut tls = connector.connect(name, tcp).await.unwrap();
            tls.write_all(
                format!(
                    "GET /hello HTTP/1.1\r\nHost: site.test\r\n{auth}Connection: close\r\n\r\n"
                )
                .as_bytes(),
            )
            .await
            .unwrap();
            let mut out = Vec::new();
            let _ = tls.read_to_end(&mut out).await;
            String::from_utf8_lossy(&out).into_owned()
        }
    };
    let out = get("").await;
    assert!(out.starts_with("HTTP/1.1 401"), "{out}");
    let out = get("Authorization: Basic dTpw\r\n").await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.ends_with("hello from origin"), "{out}");
}
