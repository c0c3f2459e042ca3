//! Shepherd as a user runs it: the `shepherd` binary of this workspace, in a home directory of
//! its own (its interception CA), as a recording proxy (`shepherd record --listen`) that
//! trusts the scenario origin's CA, and as the analyser (`shepherd races --json --all`).
//! The lanes drive the browser themselves, so the bad schedule's input can be sent while the
//! page loads.

use anyhow::{Context, Result, anyhow, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The `shepherd` binary and its home.
pub struct Shepherd {
    bin: PathBuf,
    home: PathBuf,
    /// SPKI hash of the home's interception CA (for Chromium's allow list).
    pub spki: String,
}

/// Where the binary is: `$SHEPHERD_BIN`, else `target/<profile>/shepherd` next to the test
/// executable (`target/<profile>/deps/…`), which `cargo test --workspace` builds.
fn locate() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SHEPHERD_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().context("locating the test executable")?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| anyhow!("unexpected test executable path {}", exe.display()))?;
    let bin = profile_dir.join("shepherd");
    if !bin.is_file() {
        bail!(
            "the shepherd binary is required at {} (build it: `cargo build -p shepherd`, or run \
             `cargo test --workspace`; or set SHEPHERD_BIN)",
            bin.display()
        );
    }
    Ok(bin)
}

impl Shepherd {
    /// Finds the binary and creates its CA in `home`.
    pub fn new(home: &Path) -> Result<Shepherd> {
        let bin = locate()?;
        let out = Command::new(&bin)
            .arg("--home")
            .arg(home)
            .args(["ca", "spki"])
            .output()
            .with_context(|| format!("running {}", bin.display()))?;
        if !out.status.success() {
            bail!(
                "shepherd ca spki failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let spki = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Shepherd {
            bin,
            home: home.to_path_buf(),
            spki,
        })
    }

    /// Starts `shepherd record --listen 127.0.0.1:0` writing `out`, trusting `upstream_ca`
    /// (PEM) for origins, with the control secret `secret`.
    pub fn record(&self, out: &Path, upstream_ca: &Path, secret: &str) -> Result<RecordingProxy> {
        let mut child = Command::new(&self.bin)
            .arg("--home")
            .arg(&self.home)
            .args(["record", "--listen", "127.0.0.1:0", "--out"])
            .arg(out)
            .arg("--upstream-ca")
            .arg(upstream_ca)
            .env("SHEPHERD_SECRET", secret)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", self.bin.display()))?;
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| anyhow!("no stderr pipe"))?;
        // The first lines say where it listens; the rest is drained so the pipe never fills.
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                if let Some(addr) = line.strip_prefix("shepherd: listening on ")
                    && let Some(t) = tx.take()
                {
                    let _ = t.send(addr.trim().to_string());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("shepherd record did not say where it listens within 10 s");
            }
        };
        Ok(RecordingProxy {
            child: Some(child),
            addr,
        })
    }

    /// `shepherd races FILE --json --all`, parsed.
    pub fn races(&self, rec: &Path) -> Result<serde_json::Value> {
        let out = Command::new(&self.bin)
            .arg("--home")
            .arg(&self.home)
            .arg("races")
            .arg(rec)
            .args(["--json", "--all"])
            .output()
            .with_context(|| format!("running {}", self.bin.display()))?;
        if !out.status.success() {
            bail!(
                "shepherd races {} failed: {}",
                rec.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        serde_json::from_slice(&out.stdout).context("parsing shepherd races --json")
    }
}

/// A running `shepherd record --listen`; stopped (SIGINT, so the recording is closed
/// cleanly) by [`RecordingProxy::stop`] or when dropped.
pub struct RecordingProxy {
    child: Option<Child>,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl RecordingProxy {
    /// Asks the proxy to exit and waits for it (killed after 5 s).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) on the pid of our own child, which we have not reaped yet.
            unsafe {
                libc::kill(pid, libc::SIGINT);
            }
        }
        for _ in 0..100 {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.stop();
    }
}
