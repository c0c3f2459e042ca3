//! Recording store and matcher figures. Run:
//! `cargo bench -p shepherd-recording --bench store` (env `SHEPHERD_BENCH_BODY_MB`, default 1024,
//! sizes the large-body run; `SHEPHERD_BENCH_EXCHANGES`, default 20000; `SHEPHERD_BENCH_ROUNDS`,
//! default 7: rounds of the store and its baseline, interleaved, so both see the same load;
//! the median of the per-round ratios and each arm's fastest round are printed).
//!
//! Prints absolute figures and ratios against baselines measured in the same process:
//! - recording throughput vs raw rusqlite inserts of the same rows committed in groups of
//!   [`GROUP_MAX`] (what the store's writer does when producers outpace it, as they do here;
//!   WAL + NORMAL, one thread, no hashing, no channel): the overhead of the store itself;
//! - raw inserts with one transaction per row (what the store does at ordinary rates), with
//!   `synchronous=NORMAL` and `FULL`: what grouping saves, and why NORMAL;
//! - large-body streaming: MB/s and peak RSS growth, which must stay far below the body size.

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use shepherd_recording::*;
use std::time::Instant;

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn request(i: u64) -> RequestHead {
    RequestHead {
        method: "GET".into(),
        url: format!(
            "https://bench.test/assets/{}/file-{i}.js?v={}",
            i % 50,
            i % 7
        ),
        http_version: "HTTP/2".into(),
        headers: vec![
            Header::new(
                "user-agent",
                "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36",
            ),
            Header::new("accept", "*/*"),
            Header::new("accept-encoding", "gzip, deflate, br, zstd"),
            Header::new("accept-language", "en-US,en;q=0.9"),
            Header::new("cookie", "sid=0123456789abcdef; theme=dark"),
            Header::new("referer", "https://bench.test/"),
        ],
    }
}

fn response() -> ResponseHead {
    ResponseHead {
        status: 200,
        reason: String::new(),
        http_version: "HTTP/2".into(),
        headers: vec![
            Header::new("content-type", "application/javascript"),
            Header::new("content-length", "1024"),
            Header::new("cache-control", "max-age=3600"),
            Header::new("date", "Tue, 14 Nov 2023 22:13:20 GMT"),
            Header::new("etag", "\"abc123\""),
        ],
    }
}

fn record_throughput(dir: &std::path::Path, n: u64, threads: u64, round: u64) -> f64 {
    let rec = Recording::open(dir.join(format!("bench-{threads}-{round}.rec"))).unwrap();
    let s = rec.begin_session("bench").unwrap();
    let body = vec![b'x'; 1024];
    let t = Instant::now();
    std::thread::scope(|scope| {
        for th in 0..threads {
            let rec = rec.clone();
            let body = &body;
            scope.spawn(move || {
                for i in (th..n).step_by(threads as usize) {
                    let mut ex = rec.begin_exchange(s, request(i)).unwrap();
                    ex.response_head(response());
                    ex.response_body(body).unwrap();
                    ex.finish(Timings::starting_now()).unwrap();
                }
            });
        }
    });
    rec.flush().unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(rec.exchange_count().unwrap(), n);
    n as f64 / secs
}

/// Raw rusqlite inserts of `n` exchange-sized rows, `group` rows per transaction.
fn raw_baseline(dir: &std::path::Path, n: u64, sync: &str, group: u64, round: u64) -> f64 {
    let conn =
        rusqlite::Connection::open(dir.join(format!("raw-{sync}-{group}-{round}.db"))).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", sync).unwrap();
    conn.execute_batch(
        "CREATE TABLE x (id INTEGER PRIMARY KEY, url TEXT, req_headers BLOB, resp_headers BLOB, body BLOB)",
    )
    .unwrap();
    let body = vec![b'x'; 1024];
    let headers = vec![b'h'; 300];
    let t = Instant::now();
    for i in 0..n {
        if i % group == 0 {
            conn.execute_batch("BEGIN").unwrap();
        }
        conn.prepare_cached(
            "INSERT INTO x (id, url, req_headers, resp_headers, body) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .unwrap()
        .execute(rusqlite::params![
            i as i64,
            request(i).url,
            headers,
            headers,
            body
        ])
        .unwrap();
        if i % group == group - 1 || i == n - 1 {
            conn.execute_batch("COMMIT").unwrap();
        }
    }
    n as f64 / t.elapsed().as_secs_f64()
}

/// The same bytes as 256 KiB rows written straight through rusqlite (32 MiB transactions, no
/// hashing, no channel): what SQLite and the disk allow.
fn raw_chunks_mb_s(dir: &std::path::Path, mb: u64) -> f64 {
    let conn = rusqlite::Connection::open(dir.join("raw-chunks.db")).unwrap();
    conn.pragma_update(None, "page_size", 16384).unwrap();
    conn.pragma_update(None, "journal_mode", "WAL").unwrap();
    conn.pragma_update(None, "synchronous", "NORMAL").unwrap();
    conn.execute_batch(
        "CREATE TABLE c (blob INTEGER, seq INTEGER, data BLOB, PRIMARY KEY (blob, seq))",
    )
    .unwrap();
    let chunk: Vec<u8> = (0..CHUNK_SIZE).map(|i| (i % 253) as u8).collect();
    let rows = mb * 4;
    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..rows {
        conn.prepare_cached("INSERT INTO c VALUES (1, ?1, ?2)")
            .unwrap()
            .execute(rusqlite::params![i as i64, chunk])
            .unwrap();
        if i % 128 == 127 {
            conn.execute_batch("COMMIT; BEGIN").unwrap();
        }
    }
    conn.execute_batch("COMMIT").unwrap();
    mb as f64 / t.elapsed().as_secs_f64()
}

fn large_body(dir: &std::path::Path, mb: u64) {
    let rec = Recording::open(dir.join("large.rec")).unwrap();
    let s = rec.begin_session("bench").unwrap();
    let piece: Vec<u8> = (0..64 * 1024).map(|i| (i % 253) as u8).collect();
    let pieces = mb * 16;
    let rss0 = peak_rss_kb();
    let t = Instant::now();
    let mut ex = rec.begin_exchange(s, request(0)).unwrap();
    ex.response_head(response());
    for _ in 0..pieces {
        ex.response_body(&piece).unwrap();
    }
    let id = ex.finish(Timings::starting_now()).unwrap();
    rec.flush().unwrap();
    let write_s = t.elapsed().as_secs_f64();
    let rss1 = peak_rss_kb();
    let t = Instant::now();
    let mut total = 0u64;
    let mut reader = rec.response_body(id).unwrap();
    while let Some(c) = reader.next_chunk().unwrap() {
        total += c.len() as u64;
    }
    let read_s = t.elapsed().as_secs_f64();
    let rss2 = peak_rss_kb();
    assert_eq!(total, mb * 1024 * 1024);
    let growth_mib = rss1.max(rss2).saturating_sub(rss0) / 1024;
    let raw = raw_chunks_mb_s(dir, mb);
    println!(
        "raw rusqlite 256 KiB rows: {raw:.0} MB/s; store write = {:.2}x raw",
        mb as f64 / write_s / raw
    );
    println!(
        "large body {mb} MiB: write {:.0} MB/s, read {:.0} MB/s; peak RSS growth {growth_mib} MiB (body is {:.0}x the growth)",
        mb as f64 / write_s,
        mb as f64 / read_s,
        mb as f64 / growth_mib.max(1) as f64
    );
}

fn matcher_figures(n: u64) {
    let recorded: Vec<RecordedRequest> = (0..n)
        .map(|i| {
            let session = 1 + (i % 2) as i64;
            let url = if i % 3 == 0 {
                format!(
                    "https://bench.test/api/feed?sid=s{session}&ts={}",
                    1_700_000_000_000u64 + i
                )
            } else {
                request(i).url
            };
            RecordedRequest {
                id: ExchangeId(i as i64 + 1),
                session: SessionId(session),
                method: "GET".into(),
                url,
                headers: vec![],
                body: vec![],
                body_sha256: [0; 32],
                response_class: "200 application/javascript".into(),
            }
        })
        .collect();
    let t = Instant::now();
    let mut m = Matcher::new(recorded, MatchConfig::default());
    let build = t.elapsed().as_secs_f64();
    let lookups = 20_000u64;
    let t = Instant::now();
    for i in 0..lookups {
        let url = request(i % n).url;
        let r = m.find(&LiveRequest {
            method: "GET",
            url: &url,
            headers: &[],
            body: b"",
        });
        assert!(r.is_ok());
    }
    let exact = lookups as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for i in 0..lookups {
        let url = format!(
            "https://bench.test/api/feed?sid=new{i}&ts={}",
            1_800_000_000_000u64 + i
        );
        let r = m
            .find(&LiveRequest {
                method: "GET",
                url: &url,
                headers: &[],
                body: b"",
            })
            .unwrap();
        assert_eq!(r.tier, Tier::Learned);
    }
    let learned = lookups as f64 / t.elapsed().as_secs_f64();
    println!(
        "matcher over {n} recorded requests: index+learning {:.0} ms ({} patterns), exact lookups {exact:.0}/s, learned-tier lookups {learned:.0}/s",
        build * 1000.0,
        m.patterns().len()
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let n = env_num("SHEPHERD_BENCH_EXCHANGES", 20_000);
    let mb = env_num("SHEPHERD_BENCH_BODY_MB", 1024);
    let dir = tempfile::tempdir().unwrap();
    let rounds = env_num("SHEPHERD_BENCH_ROUNDS", 7).max(1);
    let group = GROUP_MAX as u64;
    let (mut raw, mut one, mut four) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        raw.push(raw_baseline(dir.path(), n, "NORMAL", group, round));
        one.push(record_throughput(dir.path(), n, 1, round));
        four.push(record_throughput(dir.path(), n, 4, round));
    }
    let ratio = |xs: &[f64]| median(xs.iter().zip(&raw).map(|(x, r)| x / r).collect());
    let best = |xs: &[f64]| xs.iter().copied().fold(0.0, f64::max);
    println!(
        "recording {n} exchanges (1 KiB body, 6+5 headers), each atomic, commits grouped (up to {group}) when the writer lags; {rounds} interleaved rounds:"
    );
    println!(
        "  store, 1 thread:  {:.0} exchanges/s fastest round; {:.2}x the raw grouped loop (median of per-round ratios)",
        best(&one),
        ratio(&one)
    );
    println!(
        "  store, 4 threads: {:.0} exchanges/s fastest round; {:.2}x the raw grouped loop (median of per-round ratios)",
        best(&four),
        ratio(&four)
    );
    println!(
        "  raw rusqlite loop, WAL NORMAL, {group} rows per commit (the baseline): {:.0}/s fastest round",
        best(&raw)
    );
    let per_row = raw_baseline(dir.path(), n, "NORMAL", 1, 0);
    let full = raw_baseline(dir.path(), n.min(2_000), "FULL", 1, 0);
    println!(
        "  raw rusqlite loop, one commit per row (the store at ordinary rates): WAL NORMAL {per_row:.0}/s, WAL FULL {full:.0}/s (NORMAL/FULL = {:.1}x)",
        per_row / full
    );
    matcher_figures(n);
    large_body(dir.path(), mb);
}
