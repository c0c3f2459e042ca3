//! `spki_allow` makes Chromium accept a certificate chain by its public-key pin, which is how
//! it trusts the proxy's CA without installing it.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use base64::Engine as _;
use rcgen::PublicKeyData as _;
use serde_json::json;
use sha2::Digest as _;
use shepherd_browser::{Browser, Error, LaunchOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// An HTTPS server for one page with a fresh self-signed certificate; returns (port, pin).
async fn tls_server() -> (u16, String) {
    let certified = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let spki = certified.signing_key.subject_public_key_info();
    let pin = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(&spki));
    let cert = certified.cert.der().clone();
    let key =
        rustls::pki_types::PrivateKeyDer::try_from(certified.signing_key.serialize_der()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(sock).await else {
                    return;
                };
                let mut buf = Vec::new();
                let mut chunk = [0u8; 2048];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = "<title>pinned</title>";
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(resp.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (port, pin)
}

#[tokio::test]
async fn spki_pin_is_trusted_and_nothing_else_is() {
    let (port, pin) = tls_server().await;
    let url = format!("https://127.0.0.1:{port}/");

    let pinned = Browser::launch(LaunchOptions {
        spki_allow: vec![pin],
        ..LaunchOptions::default()
    })
    .await
    .unwrap();
    let page = pinned.new_page().await.unwrap();
    page.navigate(&url).await.unwrap();
    assert_eq!(
        page.evaluate("document.title").await.unwrap(),
        json!("pinned")
    );
    pinned.close().await.unwrap();

    // Without the pin the same certificate is rejected.
    let plain = Browser::launch(LaunchOptions::default()).await.unwrap();
    let page = plain.new_page().await.unwrap();
    match page.navigate(&url).await {
        Err(Error::Navigation { error, .. }) => assert!(error.contains("CERT"), "{error}"),
        Ok(_) => {
            let title = page.evaluate("document.title").await.unwrap();
            assert_ne!(title, json!("pinned"), "untrusted certificate accepted");
        }
        Err(other) => panic!("unexpected {other}"),
    }
    plain.close().await.unwrap();
}
