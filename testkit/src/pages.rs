//! Fixed pages on a tiny loopback HTTP server, and a Chromium shared by the tests of one
//! binary: what the DevTools client's and the exerciser's tests drive.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shepherd_browser::{Browser, LaunchOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One fixed answer.
#[derive(Clone)]
pub struct Route {
    /// The `Content-Type` header.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
    /// How long to wait before answering.
    pub delay: Duration,
}

/// An HTML page, answered at once.
pub fn html(body: &str) -> Route {
    Route {
        content_type: "text/html; charset=utf-8",
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

/// Any content, answered after `delay_ms`.
pub fn delayed(content_type: &'static str, body: &str, delay_ms: u64) -> Route {
    Route {
        content_type,
        body: body.to_string(),
        delay: Duration::from_millis(delay_ms),
    }
}

/// A loopback server answering `routes` by path (404 otherwise) and recording request lines.
pub struct Server {
    /// The loopback port it listens on.
    pub port: u16,
    /// Request lines seen so far.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{}", self.port, path)
    }

    /// Request lines seen so far (`GET /x HTTP/1.1`).
    pub fn request_lines(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

/// Starts a server answering `routes` on a fresh loopback port.
pub async fn serve(routes: Vec<(&'static str, Route)>) -> Server {
    let routes: Arc<HashMap<String, Route>> = Arc::new(
        routes
            .into_iter()
            .map(|(p, r)| (p.to_string(), r))
            .collect(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let routes = routes.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).to_string();
                let line = head.lines().next().unwrap_or("").to_string();
                log.lock().unwrap().push(line.clone());
                // Absolute-form targets arrive when we act as the proxy.
                let target = line.split(' ').nth(1).unwrap_or("/");
                let path = match url::Url::parse(target) {
                    Ok(u) => u.path().to_string(),
                    Err(_) => target.split('?').next().unwrap_or("/").to_string(),
                };
                let (status, ctype, body, delay) = match routes.get(&path) {
                    Some(r) => ("200 OK", r.content_type, r.body.clone(), r.delay),
                    None => (
                        "404 Not Found",
                        "text/plain",
                        "not found".into(),
                        Duration::ZERO,
                    ),
                };
                tokio::time::sleep(delay).await;
                let resp = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Server { port, requests }
}

/// A runtime shared by the tests of one binary (the shared browser's tasks live on it).
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

/// One browser shared by the tests of a binary that run at the same time: it is launched on
/// first use and dropped (killed, profile removed) when the last running test lets go.
async fn shared_browser() -> Arc<Browser> {
    static SLOT: std::sync::OnceLock<tokio::sync::Mutex<std::sync::Weak<Browser>>> =
        std::sync::OnceLock::new();
    let slot = SLOT.get_or_init(|| tokio::sync::Mutex::new(std::sync::Weak::new()));
    let mut slot = slot.lock().await;
    if let Some(b) = slot.upgrade() {
        return b;
    }
    let b = Arc::new(launch().await);
    *slot = Arc::downgrade(&b);
    b
}

/// Run a test body with the shared browser.
pub fn with_browser<F, Fut>(f: F)
where
    F: FnOnce(Arc<Browser>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    runtime().block_on(async move {
        let browser = shared_browser().await;
        f(browser).await
    });
}

/// A fresh Chromium with an 8 s command limit; panics when it cannot start. The command and
/// startup limits are multiplied by the patience factor: both wait for an answer.
pub async fn launch() -> Browser {
    launch_with(LaunchOptions::default()).await
}

/// [`launch`] with other options.
pub async fn launch_with(opts: LaunchOptions) -> Browser {
    Browser::launch(LaunchOptions {
        command_timeout: crate::patience(Duration::from_secs(8)),
        startup_timeout: crate::patience(opts.startup_timeout),
        ..opts
    })
    .await
    // Display, not Debug: a missing Chromium says how to install it.
    .unwrap_or_else(|e| panic!("launching Chromium: {e}"))
}
