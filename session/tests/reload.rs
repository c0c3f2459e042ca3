//! Which of the parser's resources a document makes holdable follows the policies in force for
//! that page: policies put in force on a running stack (`Stack::set_policy`, what `shepherd
//! serve` does on SIGHUP) change it for documents served after the reload, and a policy's
//! `scope` keeps other pages' documents unmarked (their runtime enforces nothing, so nothing
//! would release a hold before the limit).

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

/// The response to a GET of `url` through the stack: its head (lower-cased) and body.
async fn fetch(stack: &Stack, url: &str) -> (String, String) {
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
    (
        head,
        String::from_utf8_lossy(&out[split + 4..]).into_owned(),
    )
}

/// The document at `url` as the stack serves it.
async fn document(stack: &Stack, url: &str) -> String {
    fetch(stack, url).await.1
}

/// The runtime's URL in `doc`, absolute on `origin`.
fn runtime_url(doc: &str, origin: std::net::SocketAddr) -> String {
    let start = doc
        .find("/__shepherd/runtime.js?")
        .expect("the runtime's tag");
    let end = start + doc[start..].find('"').expect("the end of its URL");
    let path = doc[start..end].replace("&amp;", "&");
    format!("http://{origin}{}", path.split('#').next().unwrap())
}

/// A serve stack with `policy` in force.
async fn serve(policy: shepherd_policies::PolicySet) -> Stack {
    let ca = Arc::new(CertificateAuthority::ephemeral().unwrap());
    let opts = StackOptions {
        policy: Some(policy),
        ..StackOptions::default()
    };
    Stack::start(
        Run::Serve {
            trust: UpstreamTrust::OnlyRoots(vec![]),
        },
        opts,
        ca,
    )
    .await
    .unwrap()
}

/// A policy file holding the parser's app.js until an XHR answered, on pages in `scope`.
fn scoped_policy(dir: &std::path::Path, scope: &str) -> shepherd_policies::PolicySet {
    let file = dir.join("app-after-xhr.policy");
    std::fs::write(
        &file,
        format!("scope \"{scope}\"\npostpone script url \"*/app.js\" until arrived(xhr)\n"),
    )
    .unwrap();
    shepherd_policies::load(file.to_str().unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reloaded_policy_changes_what_documents_make_holdable() {
    let origin = html_origin().await;
    let url = format!("http://{origin}/");
    let stack = serve(shepherd_policies::load("init-user").unwrap()).await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_pages_in_a_policys_scope_are_made_holdable() {
    let origin = html_origin().await;
    let url = format!("http://{origin}/");
    let dir = tempfile::tempdir().unwrap();
    let stack = serve(scoped_policy(dir.path(), "http://elsewhere.test/*")).await;
    let outside = document(&stack, &url).await;
    assert!(!outside.contains("__shepherd_hold"), "{outside}");

    stack.set_policy(Some(&scoped_policy(
        dir.path(),
        &format!("http://{origin}/*"),
    )));
    let inside = document(&stack, &url).await;
    assert!(
        inside.contains("<script src=\"app.js?__shepherd_hold="),
        "the page in scope is marked: {inside}"
    );
    stack.shutdown().await;
}

/// The runtime's URL names its version: the browser may keep the script (and V8 its compiled
/// code) across pages, since that URL serves that text only. A reload of the policies makes
/// another text, hence another URL; the old one is answered with the current text, kept by
/// no cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtimes_url_names_its_version_and_only_that_one_is_kept() {
    let origin = html_origin().await;
    let url = format!("http://{origin}/");
    let stack = serve(shepherd_policies::load("init-user").unwrap()).await;
    let first = runtime_url(&document(&stack, &url).await, origin);
    assert!(first.contains("&v="), "{first}");
    let (head, body) = fetch(&stack, &first).await;
    assert!(
        head.contains("cache-control: private, max-age=31536000, immutable"),
        "{head}"
    );
    assert!(body.len() > 100_000, "the runtime itself");
    assert!(
        body.starts_with(shepherd_runtime::COMPILE_HINT),
        "a page's runtime starts with V8's compile hint"
    );
    // The same text, the same URL.
    assert_eq!(runtime_url(&document(&stack, &url).await, origin), first);

    stack.set_policy(None);
    let second = runtime_url(&document(&stack, &url).await, origin);
    assert_ne!(second, first, "another runtime, another URL");
    let (old_head, old_body) = fetch(&stack, &first).await;
    assert!(old_head.contains("cache-control: no-store"), "{old_head}");
    let (new_head, new_body) = fetch(&stack, &second).await;
    assert!(new_head.contains("immutable"), "{new_head}");
    assert_eq!(old_body, new_body, "an old URL gets the current runtime");
    assert!(
        new_body.starts_with(shepherd_runtime::COMPILE_HINT),
        "a reload keeps the hint"
    );
    assert_ne!(old_body, body, "the reload changed the runtime");
    stack.shutdown().await;
}
