//! Policies put in force on a running stack (`Stack::set_policy`, what `shepherd serve` does on
//! SIGHUP) also change which of the parser's resources documents make holdable: a document
//! served after the reload carries the hold markers the new policies need, and none once no
//! policy postpones the parser's scripts.

// Test code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_proxy::{CertificateAuthority, UpstreamTrust};
use shepherd_session::{Run, Stack, StackOptions};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGE: &str = "<!doctype html><html><head><script src=\"app.js\"></script></head>\
                    <body><p>hi</p></body></html>";

/// A plain-HTTP origin that answers every request with [`PAGE`].
async fn html_origin() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                    PAGE.len()
                );
                let _ = tcp.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

/// The document at `url` as the stack serves it.
async fn document(stack: &Stack, url: &str) -> String {
    let host = url.split('/').nth(2).unwrap();
    let mut tcp = tokio::net::TcpStream::connect(stack.proxy().addr())
        .await
        .unwrap();
    let request = format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    tcp.read_to_end(&mut out).await.unwrap();
    let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&out[..split]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200"), "{head}");
    String::from_utf8_lossy(&out[split + 4..]).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_policy_changes_what_documents_make_holdable() {
    let origin = html_origin().await;
    let url = format!("http://{origin}/");
    let ca = Arc::new(CertificateAuthority::ephemeral().unwrap());
    let opts = StackOptions {
        policy: Some(shepherd_policies::load("init-user").unwrap()),
        ..StackOptions::default()
    };
    let stack = Stack::start(
        Run::Serve {
            trust: UpstreamTrust::OnlyRoots(vec![]),
        },
        opts,
        ca,
    )
    .await
    .unwrap();
    // init-user postpones input only: the parser's script is left as it is.
    let before = document(&stack, &url).await;
    assert!(before.contains("<script src=\"app.js\">"), "{before}");
    assert!(!before.contains("__shepherd_hold"), "{before}");

    // async-fifo may hold a parser-blocking script behind an earlier request.
    stack.set_policy(Some(&shepherd_policies::load("async-fifo").unwrap()));
    let fifo = document(&stack, &url).await;
    assert!(
        fifo.contains("<script src=\"app.js?__shepherd_hold="),
        "the script is marked with the document's hold token: {fifo}"
    );

    stack.set_policy(None);
    let none = document(&stack, &url).await;
    assert!(!none.contains("__shepherd_hold"), "{none}");
    stack.shutdown().await;
}
