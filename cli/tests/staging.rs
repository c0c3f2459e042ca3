//! `shepherd serve` deployed as operators deploy a proxy in front of a staging site: the
//! binary reverse-proxies a corpus page (the race scenario of EventRacer's Fig. 1, from a
//! loopback origin) under a policy file, with the site's own certificates for two names (SNI
//! picks), an allow list instead of credentials, and Prometheus metrics on the control
//! listener. Real TLS clients check which certificate each name gets, a connection from an
//! address outside the list is closed, headless Chromium (trusting only the site's key, not
//! Shepherd's CA) loads the page with the controller in it, and SIGHUP with a broken policy
//! file keeps the running policy and logs each error with line and column; a fixed file is
//! then put in force.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/todomvc.rs"]
mod support;

use base64::Engine;
use rcgen::PublicKeyData;
use sha2::Digest;
use shepherd_browser::{Browser, LaunchOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::StaticServer;

const SECRET: &str = "staging-test-secret";

/// A self-signed certificate for `names`: (cert PEM, key PEM, SPKI SHA-256 in base64).
fn certificate(names: &[&str]) -> (String, String, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let params =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
            .unwrap();
    let cert = params.self_signed(&key).unwrap();
    let spki = base64::engine::general_purpose::STANDARD
        .encode(sha2::Sha256::digest(key.subject_public_key_info()));
    (cert.pem(), key.serialize_pem(), spki)
}

/// Waits (generously: the machine may be busy) until `f` gives something.
fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(x) = f() {
            return x;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "gave up waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `GET path` on the control listener with the operator secret.
fn control_get(control: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(control).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SECRET}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The value of the metric line that starts with `series ` (exact series, labels included).
fn metric(text: &str, series: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// `GET path` over TLS to `addr` naming `sni`, trusting only `root`: the body, or the TLS
/// error.
async fn tls_get(addr: SocketAddr, sni: &str, root: &str, path: &str) -> Result<String, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(root.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from(sni.to_string()).unwrap();
    let mut tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())?;
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The running `shepherd serve`, its stderr collected into a file.
struct Serve {
    child: Child,
    log: PathBuf,
}

impl Serve {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn shipped(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::read_to_string(root.join(format!("policies/shipped/{name}.policy"))).unwrap()
}

#[test]
fn a_staging_proxy_with_its_own_certificates_allow_list_metrics_and_reloads() {
    shepherd_testkit::chromium();
    let bin = env!("CARGO_BIN_EXE_shepherd");
    let dir = tempfile::tempdir().unwrap();
    let at = |f: &str| dir.path().join(f);
    let staging = certificate(&["staging.test"]);
    let shop = certificate(&["*.shop.test", "shop.test"]);
    for (name, (cert, key, _)) in [("staging", &staging), ("shop", &shop)] {
        std::fs::write(at(&format!("{name}.pem")), cert).unwrap();
        std::fs::write(at(&format!("{name}.key")), key).unwrap();
    }
    let policy = at("staging.policy");
    std::fs::write(&policy, shipped("init-user")).unwrap();
    let page_dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("tests/scenarios/er-fig1-click-before-definition");
    let origin = StaticServer::start(page_dir);

    // Off loopback, neither credentials nor an allow list: refused before anything starts.
    let refused = Command::new(bin)
        .arg("--home")
        .arg(at("home"))
        .args([
            "serve",
            "--listen",
            "0.0.0.0:0",
            "--reverse",
            &origin.origin(),
        ])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("without --auth user:pass or --allow CIDR"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    let log = at("serve.log");
    let child = Command::new(bin)
        .arg("--home")
        .arg(at("home"))
        .args(["serve", "--reverse", &origin.origin()])
        .args(["--listen", "127.0.0.1:0", "--allow", "127.0.0.1"])
        .args(["--control", "127.0.0.1:0", "--secret", SECRET])
        .arg("--policy")
        .arg(&policy)
        .arg("--tls-cert")
        .arg(at("staging.pem"))
        .arg("--tls-key")
        .arg(at("staging.key"))
        .arg("--tls-cert")
        .arg(at("shop.pem"))
        .arg("--tls-key")
        .arg(at("shop.key"))
        .arg("--browser-flags")
        .arg(at("flags.json"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let serve = Serve { child, log };
    let flags: serde_json::Value = wait_for("the browser flags file", || {
        serde_json::from_slice(&std::fs::read(at("flags.json")).ok()?).ok()
    });
    let addr: SocketAddr = flags["proxy"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let control: SocketAddr = wait_for("the control address", || {
        let log = serve.log();
        let line = log
            .lines()
            .find(|l| l.contains("control listener on http://"))?;
        line.split("http://")
            .nth(1)?
            .split(' ')
            .next()?
            .parse()
            .ok()
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // Each name gets its own certificate: the staging one for staging.test, the wildcard for
    // www.shop.test; a client that trusts only the other one refuses the handshake.
    let page = rt
        .block_on(tls_get(addr, "staging.test", &staging.0, "/index.html"))
        .unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        page.contains("/__shepherd/runtime.js"),
        "the controller is injected: {page}"
    );
    assert!(page.contains("id=\"b1\""), "the corpus page: {page}");
    let shop_page = rt
        .block_on(tls_get(addr, "www.shop.test", &shop.0, "/index.html"))
        .unwrap();
    assert!(shop_page.starts_with("HTTP/1.1 200"), "{shop_page}");
    assert!(
        rt.block_on(tls_get(addr, "www.shop.test", &staging.0, "/index.html"))
            .is_err()
    );
    // The runtime carries the policy.
    let runtime = rt
        .block_on(tls_get(
            addr,
            "staging.test",
            &staging.0,
            "/__shepherd/runtime.js",
        ))
        .unwrap();
    assert!(
        runtime.contains("staging"),
        "the policy named after its file is compiled in"
    );

    // From an address outside the list: closed before anything is read or written.
    let outsider = rt.block_on(async {
        use tokio::io::AsyncReadExt;
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let mut s = socket.connect(addr).await.unwrap();
        let _ =
            tokio::io::AsyncWriteExt::write_all(&mut s, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
        let mut buf = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut buf)).await;
        (read.is_ok(), buf)
    });
    assert!(outsider.0, "the connection was closed");
    assert!(
        outsider.1.is_empty(),
        "nothing was answered: {:?}",
        outsider.1
    );

    // Chromium trusts only the site's key (not Shepherd's CA) and reaches the site by name.
    let browser = rt
        .block_on(Browser::launch(LaunchOptions {
            spki_allow: vec![staging.2.clone()],
            extra_args: vec![format!(
                "--host-resolver-rules=MAP staging.test 127.0.0.1:{}",
                addr.port()
            )],
            ..LaunchOptions::default()
        }))
        .unwrap();
    let url = format!("https://staging.test:{}/index.html", addr.port());
    let loaded = |what: &str| {
        rt.block_on(async {
            let page = browser.new_page().await.unwrap();
            page.navigate(&url).await.unwrap();
            let start = Instant::now();
            loop {
                let v = page
                    .evaluate(
                        "typeof __shepherd === 'object' && !!document.getElementById('b1') && location.protocol",
                    )
                    .await
                    .unwrap_or_default();
                if v == "https:" {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(90),
                    "{what}: the page did not load with the controller: {v}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let _ = page.close().await;
        })
    };
    loaded("first load");

    let metrics = control_get(control, "/metrics");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("text/plain; version=0.0.4"), "{metrics}");
    assert!(
        metric(
            &metrics,
            "shepherd_repair_documents_total{policies=\"staging\"}"
        )
        .is_some_and(|n| n >= 3),
        "documents served under the policy: {metrics}"
    );
    assert_eq!(
        metric(&metrics, "shepherd_policy_info{policies=\"staging\"}"),
        Some(1)
    );
    assert!(metric(&metrics, "shepherd_refused_connections_total").is_some_and(|n| n >= 1));
    assert!(metric(&metrics, "shepherd_connections_total").is_some_and(|n| n >= 5));
    assert!(metric(&metrics, "shepherd_requests_total").is_some_and(|n| n >= 4));
    // Without the operator secret, no metrics.
    let mut s = TcpStream::connect(control).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut anon = String::new();
    s.read_to_string(&mut anon).unwrap();
    assert!(anon.starts_with("HTTP/1.1 401"), "{anon}");

    // A broken policy file and SIGHUP: every error logged with line and column, the running
    // policy kept.
    std::fs::write(&policy, "policy broken {\n  on click\n}\n").unwrap();
    serve.signal("-HUP");
    let log = wait_for("the failed reload in the log", || {
        let log = serve.log();
        log.contains("policy reload failed").then_some(log)
    });
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("ERROR") && l.contains("policy reload:"))
        .collect();
    assert!(!errors.is_empty(), "{log}");
    for e in &errors {
        assert!(e.contains("line=") && e.contains("col="), "{e}");
        assert!(e.contains("staging.policy"), "{e}");
    }
    assert!(log.contains("the running policy stays in force"), "{log}");
    let kept = rt
        .block_on(tls_get(
            addr,
            "staging.test",
            &staging.0,
            "/__shepherd/runtime.js",
        ))
        .unwrap();
    assert_eq!(
        body(&kept),
        body(&runtime),
        "the runtime still carries the old policy"
    );
    loaded("after the failed reload");
    let metrics = control_get(control, "/metrics");
    assert_eq!(
        metric(&metrics, "shepherd_policy_reloads_total{result=\"error\"}"),
        Some(1)
    );
    assert_eq!(
        metric(&metrics, "shepherd_policy_info{policies=\"staging\"}"),
        Some(1)
    );

    // A good file and SIGHUP: the new policy is served from then on.
    std::fs::write(&policy, shipped("async-fifo")).unwrap();
    serve.signal("-HUP");
    wait_for("the reload in the log", || {
        serve.log().contains("policy reloaded").then_some(())
    });
    let reloaded = rt
        .block_on(tls_get(
            addr,
            "staging.test",
            &staging.0,
            "/__shepherd/runtime.js",
        ))
        .unwrap();
    assert_ne!(
        body(&reloaded),
        body(&runtime),
        "another policy is compiled in"
    );
    let metrics = control_get(control, "/metrics");
    assert_eq!(
        metric(&metrics, "shepherd_policy_reloads_total{result=\"ok\"}"),
        Some(1)
    );
    loaded("after the reload");

    // SIGTERM stops it cleanly.
    serve.signal("-TERM");
    let mut serve = serve;
    let status = wait_for("the proxy to exit", || serve.child.try_wait().unwrap());
    assert!(status.success(), "{}", serve.log());
}

/// The body of an HTTP/1.1 response (the runtime's date headers differ between fetches).
fn body(response: &str) -> &str {
    response.split_once("\r\n\r\n").map_or("", |(_, b)| b)
}
