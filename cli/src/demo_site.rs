//! The demo site compiled into the binary (`cli/demo/`): a tiny shop page with the papers'
//! races, served by a loopback origin. `?delay=MS` on any URL holds the response that long, so
//! late scripts and out-of-order Ajax answers really happen in the recording.

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;

/// The embedded files: (path, content type, body).
const FILES: &[(&str, &str, &str)] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("../demo/index.html"),
    ),
    (
        "/index.html",
        "text/html; charset=utf-8",
        include_str!("../demo/index.html"),
    ),
    (
        "/slow.js",
        "text/javascript",
        include_str!("../demo/slow.js"),
    ),
    ("/app.js", "text/javascript", include_str!("../demo/app.js")),
    ("/style.css", "text/css", include_str!("../demo/style.css")),
];

/// Longest delay a request may ask for, so a typo cannot hang the demo.
const MAX_DELAY: Duration = Duration::from_secs(5);

/// A running demo origin; stops when dropped.
pub struct DemoSite {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl DemoSite {
    /// Starts the origin on `127.0.0.1:0`.
    pub async fn start() -> std::io::Result<DemoSite> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service_fn(serve))
                        .await;
                });
            }
        });
        Ok(DemoSite { addr, task })
    }

    /// The URL of the demo page.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for DemoSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let delay = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|kv| kv.strip_prefix("delay="))
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or_default()
        .min(MAX_DELAY);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let query = req.uri().query().unwrap_or("");
    if req.uri().path() == "/stock.txt" {
        // Each request version answers differently, so applying them out of order shows.
        let body = match query.split('&').find_map(|kv| kv.strip_prefix("v=")) {
            Some("old") => "3 in stock (old answer)",
            Some("new") => "12 in stock",
            _ => "7 in stock",
        };
        let response = Response::builder()
            .header("content-type", "text/plain; charset=utf-8")
            .header("cache-control", "no-store")
            .body(Full::new(Bytes::from_static(body.as_bytes())));
        return Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))));
    }
    let found = FILES.iter().find(|(path, _, _)| *path == req.uri().path());
    let response = match found {
        Some((_, ctype, body)) => Response::builder()
            .header("content-type", *ctype)
            .header("cache-control", "no-store")
            .body(Full::new(Bytes::from_static(body.as_bytes()))),
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header("content-type", "text/plain")
            .body(Full::new(Bytes::from_static(b"not found\n"))),
    };
    // Builder only fails on invalid header values, and ours are constants.
    Ok(response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))))
}
