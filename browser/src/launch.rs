//! Starting Chromium with a fresh profile, finding its DevTools endpoint, and killing it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::connection::{Connection, EventStream};
use crate::error::{Error, Result};
use crate::page::Page;

/// The executable used when neither [`LaunchOptions::executable`] nor `SHEPHERD_CHROMIUM` is set.
pub const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// Hosts only Chromium itself talks to (sign-in, component and model updates, variations,
/// safe browsing), seen going through the proxy from Chromium 156 despite the
/// background-networking flags. `accounts.google.com` can also be a page's own frame
/// (Google sign-in); such frames then bypass the recording.
pub const BROWSER_SERVICE_HOSTS: &[&str] = &[
    "accounts.google.com",
    "update.googleapis.com",
    "clients2.google.com",
    "clientservices.googleapis.com",
    "optimizationguide-pa.googleapis.com",
    "content-autofill.googleapis.com",
    "safebrowsing.googleapis.com",
    "android.clients.google.com",
    "redirector.gvt1.com",
    "edgedl.me.gvt1.com",
];

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 40;

/// How to start Chromium.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// `--headless` (the default). Headful needs a display.
    pub headless: bool,
    /// `--proxy-server=<host:port>`: every request goes through this HTTP proxy.
    pub proxy: Option<String>,
    /// Base64 SHA-256 SPKI hashes for `--ignore-certificate-errors-spki-list` (the proxy's CA key).
    pub spki_allow: Vec<String>,
    /// `--proxy-bypass-list=<-loopback>`: send loopback hosts through the proxy too (Chromium
    /// bypasses the proxy for them by default).
    pub bypass_loopback_proxy: bool,
    /// With a proxy, let Chromium's own service hosts ([`BROWSER_SERVICE_HOSTS`]) bypass it, so
    /// sign-in, update and model-manifest requests the browser makes by itself stay out of
    /// recordings (they go direct, and fail when offline). On by default.
    pub browser_services_direct: bool,
    /// More command-line flags, appended last.
    pub extra_args: Vec<String>,
    /// Window (and so viewport) size in CSS pixels.
    pub window_size: (u32, u32),
    /// The executable; `None` means `$SHEPHERD_CHROMIUM`, else [`DEFAULT_CHROMIUM`].
    pub executable: Option<PathBuf>,
    /// Limit for Chromium to print its DevTools URL.
    pub startup_timeout: Duration,
    /// Default limit for each DevTools command and each wait of pages from this browser.
    pub command_timeout: Duration,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            headless: true,
            proxy: None,
            spki_allow: Vec::new(),
            bypass_loopback_proxy: false,
            browser_services_direct: true,
            extra_args: Vec::new(),
            window_size: (1280, 800),
            executable: None,
            startup_timeout: Duration::from_secs(20),
            command_timeout: Duration::from_secs(20),
        }
    }
}

impl LaunchOptions {
    /// The executable this launch would use.
    pub fn resolved_executable(&self) -> PathBuf {
        if let Some(p) = &self.executable {
            return p.clone();
        }
        match std::env::var_os("SHEPHERD_CHROMIUM") {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from(DEFAULT_CHROMIUM),
        }
    }

    /// [`LaunchOptions::resolved_executable`], or [`Error::ChromiumMissing`] (which says how to
    /// install it) when no executable file is there.
    pub fn checked_executable(&self) -> Result<PathBuf> {
        let exe = self.resolved_executable();
        if is_executable(&exe) {
            Ok(exe)
        } else {
            Err(Error::ChromiumMissing {
                path: exe.display().to_string(),
            })
        }
    }

    /// The full argument list (without the executable) for a profile directory.
    pub fn args(&self, profile: &Path) -> Vec<String> {
        let mut args = self.browser_flags();
        for flag in ["--remote-debugging-port=0", "--remote-allow-origins=*"] {
            args.push(flag.into());
        }
        args.push(format!("--user-data-dir={}", profile.display()));
        args.push("about:blank".into());
        args
    }

    /// The flags that make Chromium behave as Shepherd needs (headless, no background traffic,
    /// the proxy, its bypass list, the accepted CA keys, the window size, callers' extras),
    /// without what only a launch from here sets (profile directory, DevTools port, first
    /// page): for a browser someone else starts, such as a Selenium Grid node's driver
    /// (`goog:chromeOptions.args`).
    pub fn browser_flags(&self) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        if self.headless {
            args.push("--headless".into());
        }
        for flag in [
            // Root in a container: the setuid/namespace sandbox cannot start.
            "--no-sandbox",
            "--disable-gpu",
            // The proxy speaks HTTP/1.1 and HTTP/2 over TCP only.
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-breakpad",
            "--disable-dev-shm-usage",
            "--metrics-recording-only",
            "--password-store=basic",
            "--use-mock-keychain",
            "--mute-audio",
            "--hide-scrollbars",
        ] {
            args.push(flag.into());
        }
        // Chromium honours only the last --disable-features, so callers' lists are merged in.
        // NetworkTimeServiceQuerying: otherwise clients2.google.com/time goes through the
        // proxy on every start; AutofillServerCommunication: a page with a form asks
        // content-autofill.googleapis.com for field types (a request the page never made, and
        // a miss in every replay); the WebUI omnibox popups and the preloading of the
        // window's other WebUI: Chromium 156's headless windows load them (one renderer per
        // browser context, `chrome://omnibox-popup.top-chrome/`), and in each of the explorer's
        // executions that renderer took about as much CPU as the page under test.
        let mut disabled: Vec<&str> = vec![
            "Translate",
            "MediaRouter",
            "OptimizationHints",
            "DialMediaRouteProvider",
            "NetworkTimeServiceQuerying",
            "AutofillServerCommunication",
            "WebUIOmniboxPopup",
            "WebUIOmniboxFullPopup",
            "WebUIOmniboxAimPopup",
            "PreloadTopChromeWebUI",
        ];
        for extra in &self.extra_args {
            if let Some(list) = extra.strip_prefix("--disable-features=") {
                disabled.extend(list.split(',').filter(|f| !f.is_empty()));
            }
        }
        args.push(format!("--disable-features={}", disabled.join(",")));
        args.push(format!(
            "--window-size={},{}",
            self.window_size.0, self.window_size.1
        ));
        if let Some(p) = &self.proxy {
            args.push(format!("--proxy-server={p}"));
        }
        // Chromium honours only the last --proxy-bypass-list: one list, callers' entries merged.
        let mut bypass: Vec<&str> = Vec::new();
        if self.bypass_loopback_proxy {
            bypass.push("<-loopback>");
        }
        if self.proxy.is_some() && self.browser_services_direct {
            bypass.extend(BROWSER_SERVICE_HOSTS);
        }
        for extra in &self.extra_args {
            if let Some(list) = extra.strip_prefix("--proxy-bypass-list=") {
                bypass.extend(list.split(';').filter(|h| !h.is_empty()));
            }
        }
        if !bypass.is_empty() {
            args.push(format!("--proxy-bypass-list={}", bypass.join(";")));
        }
        if !self.spki_allow.is_empty() {
            args.push(format!(
                "--ignore-certificate-errors-spki-list={}",
                self.spki_allow.join(",")
            ));
        }
        args.extend(
            self.extra_args
                .iter()
                .filter(|a| {
                    !a.starts_with("--disable-features=") && !a.starts_with("--proxy-bypass-list=")
                })
                .cloned(),
        );
        args
    }
}

/// A running Chromium. Dropping it kills the whole process group and removes the profile.
pub struct Browser {
    conn: Connection,
    process: Process,
    command_timeout: Duration,
    ws_url: String,
}

/// The child process and its profile; killed and removed on drop, also when launch fails.
struct Process {
    child: Option<Child>,
    profile: PathBuf,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Browser {
    /// Start Chromium and connect to it.
    pub async fn launch(opts: LaunchOptions) -> Result<Browser> {
        let exe = opts.checked_executable()?;
        sweep_stale_profiles();
        let profile = make_profile_dir()?;
        let mut cmd = Command::new(&exe);
        cmd.args(opts.args(&profile))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, so Drop can kill renderers and helpers with one signal.
            .process_group(0);
        // SAFETY: the closure runs in the forked child before exec and only calls prctl(2),
        // which is async-signal-safe; it allocates nothing and touches no shared state.
        unsafe {
            // If we die without running Drop (SIGKILL, abort), Chromium is killed too. The
            // signal follows the spawning *thread*, hence the process-long spawner thread.
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                Ok(())
            });
        }
        let mut child = match spawn_from_spawner(cmd).await {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&profile);
                return Err(Error::Io {
                    context: format!("spawning {}", exe.display()),
                    source: e,
                });
            }
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
        if let Some(pipe) = child.stderr.take() {
            let tail = stderr_tail.clone();
            // A plain thread: it must keep draining stderr for the browser's whole life, or
            // Chromium blocks on a full pipe.
            std::thread::spawn(move || read_stderr(pipe, tail, url_tx));
        }
        let process = Process {
            child: Some(child),
            profile,
            stderr: stderr_tail,
        };
        let ws_url = match tokio::time::timeout(opts.startup_timeout, url_rx).await {
            Ok(Ok(url)) => url,
            Ok(Err(_)) => {
                let stderr = process.stderr_tail();
                let reason = if !opts.headless && stderr.contains("Missing X server") {
                    "a headful Chromium needs a display: set DISPLAY (or run under xvfb-run), \
                     or launch headless"
                        .to_string()
                } else {
                    "Chromium exited before printing its DevTools URL".to_string()
                };
                return Err(Error::Launch { reason, stderr });
            }
            Err(_) => {
                return Err(Error::Launch {
                    reason: format!(
                        "no DevTools URL on stderr within {:?}",
                        opts.startup_timeout
                    ),
                    stderr: process.stderr_tail(),
                });
            }
        };
        let conn = Connection::connect(&ws_url, opts.startup_timeout).await?;
        Ok(Browser {
            conn,
            process,
            command_timeout: opts.command_timeout,
            ws_url,
        })
    }

    /// Connects to a browser that is already running (a remote browser, a grid node) at its
    /// browser-level DevTools websocket URL (`ws://host:port/devtools/browser/…`). Nothing is
    /// launched, and closing or dropping the handle only disconnects.
    pub async fn connect(ws_url: &str, command_timeout: Duration) -> Result<Browser> {
        let conn = Connection::connect(ws_url, command_timeout).await?;
        Ok(Browser {
            conn,
            process: Process {
                child: None,
                profile: PathBuf::new(),
                stderr: Arc::new(Mutex::new(VecDeque::new())),
            },
            command_timeout,
            ws_url: ws_url.to_string(),
        })
    }

    /// The browser's DevTools websocket URL.
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The browser process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.process.child.as_ref().map(Child::id)
    }

    /// The temporary profile directory (removed on drop).
    pub fn profile_dir(&self) -> &Path {
        &self.process.profile
    }

    /// The raw connection, for protocol commands without a typed helper.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Send a browser-level command with the default time limit.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.conn
            .call(None, method, params, self.command_timeout)
            .await
    }

    /// Browser-level events (for example `Target.targetCreated` after `Target.setDiscoverTargets`).
    pub fn events(&self, methods: &[&str]) -> EventStream {
        self.conn.subscribe(None, methods)
    }

    /// Chromium's product string, for example `Chrome/156.0.8078.79`.
    pub async fn version(&self) -> Result<String> {
        let v = self.call("Browser.getVersion", json!({})).await?;
        Ok(v.get("product")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string())
    }

    /// Open a new tab (in the default browser context) at `about:blank`.
    pub async fn new_page(&self) -> Result<Page> {
        Page::create(self.conn.clone(), None, self.command_timeout).await
    }

    /// Open a new tab in a fresh, isolated browser context (own cookies and cache), optionally
    /// with its own proxy (`host:port`) and bypass list. The context is disposed when the page
    /// is closed.
    pub async fn new_isolated_page(
        &self,
        proxy: Option<&str>,
        proxy_bypass_list: Option<&str>,
    ) -> Result<Page> {
        let mut params = json!({ "disposeOnDetach": true });
        if let Some(p) = proxy {
            params["proxyServer"] = Value::String(p.to_string());
        }
        if let Some(b) = proxy_bypass_list {
            params["proxyBypassList"] = Value::String(b.to_string());
        }
        let ctx = self.call("Target.createBrowserContext", params).await?;
        let id = ctx
            .get("browserContextId")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::BadResponse {
                method: "Target.createBrowserContext".into(),
                detail: "no browserContextId".into(),
            })?
            .to_string();
        Page::create(self.conn.clone(), Some(id), self.command_timeout).await
    }

    /// The last lines Chromium wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail()
    }

    /// Kill Chromium (its whole process group) and remove the profile. Equivalent to drop;
    /// there is no graceful exit because the profile is thrown away anyway.
    pub async fn close(mut self) -> Result<()> {
        self.process.shutdown();
        Ok(())
    }
}

impl Process {
    fn stderr_tail(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    fn shutdown(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
        }
        if !self.profile.as_os_str().is_empty() {
            // Helpers may still be flushing the profile for a moment after the signal.
            for _ in 0..5 {
                match std::fs::remove_dir_all(&self.profile) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    _ => break,
                }
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.shutdown();
    }
}

type SpawnRequest = (Command, std::sync::mpsc::Sender<std::io::Result<Child>>);

/// Spawn on one thread that lives as long as the process: `PR_SET_PDEATHSIG` fires when the
/// thread that forked exits, and an async task may run on a thread that ends long before the
/// browser should (a test thread, a blocking-pool thread).
async fn spawn_from_spawner(cmd: Command) -> std::io::Result<Child> {
    static SPAWNER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<SpawnRequest>>> =
        std::sync::OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<SpawnRequest>();
        let spawned = std::thread::Builder::new()
            .name("shepherd-chromium-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("no spawner thread ({e}); Chromium will not die with us on SIGKILL");
        }
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = std::sync::mpsc::channel();
    let request = (cmd, reply_tx);
    let failed = {
        let tx = sender.lock().unwrap_or_else(|p| p.into_inner());
        tx.send(request).err()
    };
    if let Some(std::sync::mpsc::SendError((mut cmd, _))) = failed {
        // No spawner thread: spawn here rather than not at all.
        return cmd.spawn();
    }
    // fork+exec takes milliseconds; waiting on a blocking-pool thread keeps the runtime free.
    tokio::task::spawn_blocking(move || reply_rx.recv())
        .await
        .map_err(std::io::Error::other)?
        .map_err(|_| std::io::Error::other("spawner thread stopped"))?
}

fn kill_group(pid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals the process group we created with
    // process_group(0); it touches no memory of ours.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Prefix of our profile directories in the temporary directory; the owner's pid follows.
const PROFILE_PREFIX: &str = "shepherd-chromium-";

/// Remove profile directories left by processes that no longer exist (killed before their
/// drop ran). Directories of live processes are never touched.
fn sweep_stale_profiles() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PROFILE_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn make_profile_dir() -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut last_err = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!(
            "{PROFILE_PREFIX}{}-{n}-{nanos:x}",
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last_err = Some(e),
        }
    }
    Err(Error::Io {
        context: format!("creating a profile directory in {}", base.display()),
        source: last_err.unwrap_or_else(|| std::io::Error::other("no attempt made")),
    })
}

fn read_stderr(
    pipe: std::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    url_tx: tokio::sync::oneshot::Sender<String>,
) {
    let mut url_tx = Some(url_tx);
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_string();
        if let Some(rest) = text.strip_prefix("DevTools listening on ")
            && let Some(tx) = url_tx.take()
        {
            let _ = tx.send(rest.trim().to_string());
        }
        // D-Bus complaints are noise in a container; keep the lines that explain failures.
        if text.contains("dbus") || text.is_empty() {
            continue;
        }
        let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
        if t.len() == STDERR_TAIL {
            t.pop_front();
        }
        t.push_back(text);
    }
}
