//! A burst of new proxied HTTPS connections, all opened at once: each connection is a fresh TCP
//! connection to the proxy, `CONNECT`, a TLS handshake (ALPN http/1.1, SNI from the URL) and a
//! few keep-alive `GET`s whose answers are checked (status 200, expected body length). Once every
//! connection has finished its requests (or failed), all of them stay open and idle for
//! `--hold` seconds, so the proxy's memory can be sampled with the whole burst connected, then
//! they are closed. `scripts/soak-proxy` drives it.
//!
//! Without `--proxy` it connects to the origin directly (the client's own ceiling on this
//! machine). Source addresses rotate over 127.0.0.2.. so bursts in a row do not run out of
//! ephemeral ports while earlier connections sit in TIME_WAIT.
//!
//! Prints `ready` on stdout when the burst is held open, then one line of `key=value` figures.
//! Every failure is counted by kind; the exit status is 0 whatever the failures.
//!
//! Usage: burst --url https://localhost:PORT/1k.txt [--proxy 127.0.0.1:PORT] --connections N
//!        [--requests K] [--expect-bytes B] [--hold SECS] [--timeout SECS] [--threads T]

use rustls::{
    self, ClientConfig, DigitallySignedStruct, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::ring,
    pki_types::{CertificateDer, ServerName, UnixTime},
};
use std::io::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_rustls::TlsConnector;

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("burst: {what}: {e}");
    std::process::exit(2)
}

struct Options {
    proxy: Option<SocketAddr>,
    host: String,
    port: u16,
    path: String,
    connections: usize,
    requests: usize,
    expect_bytes: Option<usize>,
    hold: Duration,
    timeout: Duration,
    threads: usize,
    source_ips: u32,
}

fn options() -> Options {
    let mut o = Options {
        proxy: None,
        host: String::new(),
        port: 443,
        path: "/".into(),
        connections: 100,
        requests: 1,
        expect_bytes: None,
        hold: Duration::ZERO,
        timeout: Duration::from_secs(60),
        threads: 2,
        source_ips: 32,
    };
    let mut url = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| fail("arguments", format!("{flag} needs a value")));
        let number = |v: &str| -> u64 { v.parse().unwrap_or_else(|e| fail(&flag, e)) };
        match flag.as_str() {
            "--url" => url = Some(value),
            "--proxy" => o.proxy = Some(value.parse().unwrap_or_else(|e| fail("--proxy", e))),
            "--connections" => o.connections = number(&value) as usize,
            "--requests" => o.requests = number(&value) as usize,
            "--expect-bytes" => o.expect_bytes = Some(number(&value) as usize),
            "--hold" => o.hold = Duration::from_secs_f64(number(&value) as f64),
            "--timeout" => o.timeout = Duration::from_secs(number(&value)),
            "--threads" => o.threads = number(&value).max(1) as usize,
            "--source-ips" => o.source_ips = number(&value).clamp(1, 250) as u32,
            _ => fail("arguments", format!("unknown flag {flag}")),
        }
    }
    let url = url.unwrap_or_else(|| fail("arguments", "--url is required"));
    let rest = url
        .strip_prefix("https://")
        .unwrap_or_else(|| fail("--url", "only https:// URLs"));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) => (h, p.parse().unwrap_or_else(|e| fail("--url port", e))),
        None => (authority, 443),
    };
    o.host = host.to_string();
    o.port = port;
    o.path = path.to_string();
    o
}

/// Accepts any certificate: the burst measures the proxy, not the client's verification (and
/// hudsucker's CA is never written to disk).
#[derive(Debug)]
struct AnyCert(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verify_tls12_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Why a connection failed (the first failure ends it).
#[derive(Clone, Copy)]
enum Failure {
    Connect = 0,
    ConnectAnswer,
    Tls,
    Io,
    Status,
    Body,
    Timeout,
}

const FAILURE_NAMES: [&str; 7] = [
    "connect",
    "connect_answer",
    "tls",
    "io",
    "status",
    "body",
    "timeout",
];

struct Outcome {
    ok_requests: usize,
    failure: Option<Failure>,
    /// From the burst's start to the end of this connection's last request.
    done_at: Duration,
    /// From this connection's start to its first answer.
    first_answer: Option<Duration>,
}

/// Reads an HTTP/1.1 response head (up to the blank line) into `buf`; returns its length.
async fn read_head<S: AsyncRead + Unpin>(s: &mut S, buf: &mut Vec<u8>) -> Option<usize> {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(i + 4);
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn status_of(head: &[u8]) -> Option<u16> {
    let line = head.split(|&b| b == b'\r').next()?;
    let code = line.split(|&b| b == b' ').nth(1)?;
    std::str::from_utf8(code).ok()?.parse().ok()
}

fn content_length(head: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(head).ok()?;
    text.split("\r\n").find_map(|l| {
        let (name, value) = l.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            value.trim().parse().ok()
        } else {
            None
        }
    })
}

async fn one_request<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    request: &[u8],
    expect: Option<usize>,
) -> Result<(), Failure> {
    s.write_all(request).await.map_err(|_| Failure::Io)?;
    let mut buf = Vec::with_capacity(2048);
    let head_len = read_head(s, &mut buf).await.ok_or(Failure::Io)?;
    if status_of(&buf[..head_len]) != Some(200) {
        return Err(Failure::Status);
    }
    let len = content_length(&buf[..head_len]).ok_or(Failure::Body)?;
    let mut have = buf.len() - head_len;
    let mut chunk = [0u8; 8192];
    while have < len {
        let n = s.read(&mut chunk).await.map_err(|_| Failure::Io)?;
        if n == 0 {
            return Err(Failure::Io);
        }
        have += n;
    }
    if have != len || expect.is_some_and(|e| e != len) {
        return Err(Failure::Body);
    }
    Ok(())
}

struct Shared {
    o: Options,
    tls: TlsConnector,
    request: Vec<u8>,
    start: Instant,
    finished: AtomicUsize,
    all_done: tokio::sync::Notify,
    release: tokio::sync::watch::Receiver<bool>,
}

async fn connection(sh: Arc<Shared>, i: usize) -> Outcome {
    let began = Instant::now();
    let mut out = Outcome {
        ok_requests: 0,
        failure: None,
        done_at: Duration::ZERO,
        first_answer: None,
    };
    let work = async {
        let ip = Ipv4Addr::new(127, 0, 0, 2 + (i as u32 % sh.o.source_ips) as u8);
        let to = match sh.o.proxy {
            Some(p) => p,
            None => {
                let ip: Ipv4Addr = if sh.o.host == "localhost" {
                    Ipv4Addr::LOCALHOST
                } else {
                    sh.o.host.parse().map_err(|_| Failure::Connect)?
                };
                SocketAddr::from((ip, sh.o.port))
            }
        };
        let socket = TcpSocket::new_v4().map_err(|_| Failure::Connect)?;
        socket
            .bind(SocketAddr::from((ip, 0)))
            .map_err(|_| Failure::Connect)?;
        let mut tcp: TcpStream = socket.connect(to).await.map_err(|_| Failure::Connect)?;
        let _ = tcp.set_nodelay(true);
        if sh.o.proxy.is_some() {
            let authority = format!("{}:{}", sh.o.host, sh.o.port);
            let connect = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n");
            tcp.write_all(connect.as_bytes())
                .await
                .map_err(|_| Failure::ConnectAnswer)?;
            let mut buf = Vec::new();
            let n = read_head(&mut tcp, &mut buf)
                .await
                .ok_or(Failure::ConnectAnswer)?;
            if status_of(&buf[..n]) != Some(200) || buf.len() != n {
                return Err(Failure::ConnectAnswer);
            }
        }
        let name = ServerName::try_from(sh.o.host.clone()).map_err(|_| Failure::Tls)?;
        let mut tls = sh.tls.connect(name, tcp).await.map_err(|_| Failure::Tls)?;
        for _ in 0..sh.o.requests {
            one_request(&mut tls, &sh.request, sh.o.expect_bytes).await?;
            out.ok_requests += 1;
            out.first_answer.get_or_insert_with(|| began.elapsed());
        }
        Ok(tls)
    };
    let result = tokio::time::timeout(sh.o.timeout, work).await;
    out.done_at = sh.start.elapsed();
    let held = match result {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(f)) => {
            out.failure = Some(f);
            None
        }
        Err(_) => {
            out.failure = Some(Failure::Timeout);
            None
        }
    };
    if sh.finished.fetch_add(1, Ordering::AcqRel) + 1 == sh.o.connections {
        sh.all_done.notify_one();
    }
    // Stay connected (idle) until the whole burst is released.
    let mut release = sh.release.clone();
    let _ = release.wait_for(|r| *r).await;
    if let Some(mut tls) = held {
        let _ = tokio::time::timeout(Duration::from_secs(2), tls.shutdown()).await;
    }
    out
}

fn cpu_seconds() -> f64 {
    // utime + stime of this process, from /proc/self/stat (fields 14 and 15).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (ticks(11) + ticks(12)) / if hz > 0 { hz as f64 } else { 100.0 }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn main() {
    let o = options();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.threads)
        .enable_all()
        .build()
        .unwrap_or_else(|e| fail("runtime", e));
    rt.block_on(run(o));
}

async fn run(o: Options) {
    let provider = Arc::new(ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| fail("TLS versions", e))
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCert(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}:{}\r\nUser-Agent: shepherd-soak-burst\r\nAccept: */*\r\n\r\n",
        o.path, o.host, o.port
    )
    .into_bytes();
    let n = o.connections;
    let hold = o.hold;
    let (release_tx, release) = tokio::sync::watch::channel(false);
    let cpu0 = cpu_seconds();
    let sh = Arc::new(Shared {
        o,
        tls: TlsConnector::from(Arc::new(config)),
        request,
        start: Instant::now(),
        finished: AtomicUsize::new(0),
        all_done: tokio::sync::Notify::new(),
        release,
    });
    let tasks: Vec<_> = (0..n)
        .map(|i| tokio::spawn(connection(sh.clone(), i)))
        .collect();
    if n > 0 {
        sh.all_done.notified().await;
    }
    let burst_wall = sh.start.elapsed();
    let cpu_burst = cpu_seconds() - cpu0;
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "ready");
    let _ = stdout.flush();
    tokio::time::sleep(hold).await;
    let _ = release_tx.send(true);
    let mut ok = 0usize;
    let mut failed_connections = 0usize;
    let mut kinds = [0usize; FAILURE_NAMES.len()];
    let mut last_done = Duration::ZERO;
    let mut first = Vec::with_capacity(n);
    for t in tasks {
        match t.await {
            Ok(out) => {
                ok += out.ok_requests;
                last_done = last_done.max(out.done_at);
                if let Some(f) = out.failure {
                    failed_connections += 1;
                    kinds[f as usize] += 1;
                }
                if let Some(d) = out.first_answer {
                    first.push(d);
                }
            }
            Err(_) => {
                failed_connections += 1;
                kinds[Failure::Io as usize] += 1;
            }
        }
    }
    first.sort();
    let wanted = n * sh.o.requests;
    let secs = last_done.as_secs_f64().max(1e-9);
    let mut line = format!(
        "connections={n} requests={wanted} ok={ok} failed={} failed_connections={failed_connections} \
         wall_s={:.3} req_per_s={:.1} first_p50_ms={:.1} first_p99_ms={:.1} first_max_ms={:.1} \
         client_cpu_s={cpu_burst:.2} burst_wall_s={:.3}",
        wanted - ok,
        secs,
        ok as f64 / secs,
        percentile(&first, 0.5),
        percentile(&first, 0.99),
        percentile(&first, 1.0),
        burst_wall.as_secs_f64(),
    );
    for (name, count) in FAILURE_NAMES.iter().zip(kinds) {
        line.push_str(&format!(" fail_{name}={count}"));
    }
    let _ = writeln!(stdout, "{line}");
}
