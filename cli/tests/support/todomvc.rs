//! Shared by `tests/todomvc.rs` and `benches/todomvc.rs`: the `todomvc@0.1.1` npm package
//! (`shepherd_testkit::todomvc`, fetched into the target directory, never committed), a static
//! file server for it on loopback, and the `shepherd` binary started as a proxy in a given mode.
#![allow(dead_code)]
// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A static file server for a directory on 127.0.0.1 (one thread per connection, one request
/// per connection). Stops when dropped.
pub struct StaticServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl StaticServer {
    /// Serves `root` on a fresh loopback port.
    pub fn start(root: PathBuf) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let root = root.clone();
                std::thread::spawn(move || {
                    let _ = serve_one(conn, &root);
                });
            }
        });
        StaticServer { addr, stop }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" => "application/javascript; charset=utf-8",
        // What node's `mime` (and so most dev servers) answer; JSXTransformer fetches these
        // with XHR and compiles them itself.
        "jsx" => "text/jsx; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        _ => "application/octet-stream",
    }
}

fn serve_one(mut conn: TcpStream, root: &Path) -> std::io::Result<()> {
    conn.set_read_timeout(Some(shepherd_testkit::patience(Duration::from_secs(10))))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut content_length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            content_length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; content_length];
    reader.read_exact(&mut body)?;
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    // Absolute-form targets arrive when a proxy forwards verbatim.
    let path = match target.find("://") {
        Some(i) => target[i + 3..]
            .find('/')
            .map(|j| &target[i + 3 + j..])
            .unwrap_or("/"),
        None => target,
    };
    let path = path.split(['?', '#']).next().unwrap_or("/");
    let mut file = root.to_path_buf();
    let rel = Path::new(path.trim_start_matches('/'));
    let safe = rel.components().all(|c| matches!(c, Component::Normal(_)));
    for c in rel.components() {
        file.push(c);
    }
    if file.is_dir() {
        file.push("index.html");
    }
    let (status, ctype, data) = match std::fs::read(&file) {
        Ok(data) if safe && (method == "GET" || method == "HEAD") => {
            ("200 OK", content_type(&file), data)
        }
        _ => ("404 Not Found", "text/plain", b"not found\n".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        data.len()
    );
    conn.write_all(head.as_bytes())?;
    if method != "HEAD" {
        conn.write_all(&data)?;
    }
    conn.flush()
}

/// Which proxy the `shepherd` binary runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyMode {
    /// `shepherd record --listen`: scripts instrumented, runtime tracing.
    Record,
    /// `shepherd serve --listen` (repair): only the runtime injected.
    Repair,
    /// `shepherd serve --listen --policy P`: the runtime injected with repair policies.
    Policy(&'static str),
}

/// The `shepherd` binary running as a proxy; killed when dropped.
pub struct ShepherdProxy {
    child: Child,
    /// `127.0.0.1:PORT` the proxy listens on.
    pub addr: String,
    /// The per-run secret handed to the runtime's controller.
    pub secret: String,
    /// The recording (record mode only).
    pub recording: PathBuf,
    _home: tempfile::TempDir,
}

impl ShepherdProxy {
    /// The proxy's process id (benchmarks read its CPU time from `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Starts `bin` (the `shepherd` executable) as a proxy on a fresh loopback port.
    pub fn start(bin: &str, mode: ProxyMode) -> ShepherdProxy {
        let home = tempfile::tempdir().unwrap();
        let recording = home.path().join("todomvc.rec");
        let secret = "todomvc-test-secret".to_string();
        let mut cmd = Command::new(bin);
        cmd.arg("--home").arg(home.path());
        match mode {
            ProxyMode::Record => {
                cmd.arg("record").arg("--out").arg(&recording);
            }
            ProxyMode::Repair => {
                cmd.arg("serve");
            }
            ProxyMode::Policy(p) => {
                cmd.args(["serve", "--policy", p]);
            }
        }
        cmd.args(["--listen", "127.0.0.1:0", "--secret", &secret])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(addr) = line.strip_prefix("shepherd: listening on ") {
                    let _ = tx.send(addr.trim().to_string());
                    sent = true;
                } else if std::env::var_os("TODOMVC_PROXY_LOG").is_some() {
                    eprintln!("[proxy] {line}");
                }
            }
        });
        let limit = shepherd_testkit::patience(Duration::from_secs(30));
        let addr = match rx.recv_timeout(limit) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                panic!("shepherd did not print its listening address within {limit:?}");
            }
        };
        ShepherdProxy {
            child,
            addr,
            secret,
            recording,
            _home: home,
        }
    }
}

impl Drop for ShepherdProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The unpacked package root (`…/package`, holding `examples/` and `learn.json`), fetched on
/// first use; panics when it cannot be fetched.
pub fn package_root() -> PathBuf {
    shepherd_testkit::todomvc(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// Polls `expr` (a boolean expression) in `page` until it is true or `limit` (times the
/// patience factor) passes.
pub async fn wait_for(page: &shepherd_browser::Page, expr: &str, limit: Duration) -> bool {
    let limit = shepherd_testkit::patience(limit);
    let start = std::time::Instant::now();
    loop {
        if let Ok(serde_json::Value::Bool(true)) = page.evaluate(expr).await {
            return true;
        }
        if start.elapsed() > limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
/// Todos the benchmarks' workload adds, completes and deletes.
pub const ITEMS: usize = 100;

/// Adds, completes and deletes ITEMS todos through the app's own listeners (`change` on the
/// input, delegated `click` on toggles and destroy buttons); returns the in-page time in ms and
/// the item count seen at each checkpoint, so a broken app cannot look fast.
///
/// vanillajs names a todo by `new Date().getTime()`: todos added within one millisecond share
/// an id, and a toggle then flips another item (a plain run saw 50 of 100 completed). After
/// each add the workload waits for the clock to move (at most 5 ms) and leaves that wait out
/// of the measured time, so every todo has its own id and the counts are exact in every mode.
pub fn workload() -> String {
    format!(
        r#"(() => {{
    const input = document.querySelector('#new-todo');
    const list = () => document.querySelectorAll('#todo-list > li');
    const t0 = performance.now();
    let waited = 0;
    for (let i = 0; i < {ITEMS}; i++) {{
        input.value = 'todo ' + i;
        input.dispatchEvent(new Event('change', {{ bubbles: true }}));
        const w0 = performance.now();
        const now = Date.now();
        while (Date.now() === now && performance.now() - w0 < 5) {{}}
        waited += performance.now() - w0;
    }}
    const added = list().length;
    for (let i = 0; i < {ITEMS}; i++) {{
        document.querySelectorAll('#todo-list > li .toggle')[i].click();
    }}
    const completed = document.querySelectorAll('#todo-list > li.completed').length;
    for (let i = 0; i < {ITEMS}; i++) {{
        document.querySelector('#todo-list > li .destroy').click();
    }}
    const left = list().length;
    void document.body.offsetHeight;
    return {{ ms: performance.now() - t0 - waited, added, completed, left }};
}})()"#
    )
}

/// Panics unless the workload's result `r` saw every todo added, completed and deleted.
pub fn check_workload(r: &serde_json::Value, label: &str) {
    let n = ITEMS as u64;
    assert!(
        r["added"].as_u64() == Some(n)
            && r["completed"].as_u64() == Some(n)
            && r["left"].as_u64() == Some(0),
        "workload did not run as intended ({label}): {r}"
    );
}

/// Sorts `v` and returns its median.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Load time (navigation to the load event, wall clock) and workload time (in page), ms.
pub async fn timed_round(
    browser: &shepherd_browser::Browser,
    url: &str,
    proxy: Option<&ShepherdProxy>,
    label: &str,
) -> (f64, f64) {
    let page = browser
        .new_isolated_page(proxy.map(|p| p.addr.as_str()), proxy.map(|_| "<-loopback>"))
        .await
        .unwrap();
    let t0 = std::time::Instant::now();
    page.navigate(url).await.unwrap();
    let load = t0.elapsed().as_secs_f64() * 1000.0;
    let _ = page
        .wait_quiet(
            Duration::from_millis(200),
            shepherd_testkit::patience(Duration::from_secs(10)),
        )
        .await;
    let r = page.evaluate(&workload()).await.unwrap();
    check_workload(&r, label);
    let ms = r["ms"].as_f64().unwrap();
    let _ = page.close().await;
    (load, ms)
}
