//! Throughput of the HTML path (repair and record) and of the JavaScript cache, on the real
//! pages and libraries of the npm package `todomvc@0.1.1`, against plain copying in the same
//! process. The package is fetched with `npm pack` into `target/tmp/` (`shepherd_testkit`; or
//! taken from `$SHEPHERD_TODOMVC_DIR/package`); without it the bench fails and says why.
//!
//! Run: `cargo bench -p shepherd-instrument --bench throughput`.

use shepherd_instrument::{HtmlConfig, HtmlInstrumenter, Mode, ScriptCache, ScriptKind};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const APPS: &[&str] = &[
    "angularjs",
    "emberjs",
    "react",
    "backbone",
    "knockoutjs",
    "vanillajs",
    "mithril",
    "canjs",
];
const CHUNK: usize = 16 * 1024;

fn js_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            js_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "js") {
            out.push(p);
        }
    }
}

/// Runs `f` repeatedly for at least `min`, returns seconds per run.
fn time(min: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    let mut n = 0u32;
    while start.elapsed() < min || n < 3 {
        f();
        n += 1;
    }
    start.elapsed().as_secs_f64() / f64::from(n)
}

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

fn html_run(doc: &[u8], mode: Mode, cache: &Arc<ScriptCache>) -> usize {
    let mut cfg = HtmlConfig::new(mode, "SECRET");
    cfg.cache = Some(cache.clone());
    cfg.content_type = Some("text/html; charset=utf-8".into());
    let mut inst = HtmlInstrumenter::new(cfg);
    let mut n = 0;
    for c in doc.chunks(CHUNK) {
        n += inst.write(c).map(|o| o.len()).unwrap_or(0);
    }
    n + inst.end().map(|o| o.len()).unwrap_or(0)
}

fn copy_run(doc: &[u8]) -> usize {
    let mut out = Vec::new();
    for c in doc.chunks(CHUNK) {
        out.extend_from_slice(black_box(c));
    }
    black_box(&out);
    out.len()
}

fn main() {
    let pkg = shepherd_testkit::todomvc(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let min = Duration::from_millis(
        std::env::var("BENCH_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1500),
    );
    let examples = pkg.join("examples");
    let mut pages: Vec<Vec<u8>> = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&examples) {
        let mut dirs: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            if let Ok(b) = std::fs::read(d.join("index.html")) {
                pages.push(b);
            }
        }
    }
    // One large document made of every page's markup, to see streaming speed without the
    // per-document setup.
    let mut big = b"<!doctype html><html><head><meta charset=utf-8></head><body>".to_vec();
    for _ in 0..4 {
        for p in &pages {
            big.extend_from_slice(p);
        }
    }
    let page_bytes: usize = pages.iter().map(Vec::len).sum();
    println!(
        "HTML: {} index.html pages, {} bytes; combined page {} bytes; {} KiB chunks",
        pages.len(),
        page_bytes,
        big.len(),
        CHUNK / 1024
    );

    let copy_pages = time(min, || {
        for p in &pages {
            black_box(copy_run(p));
        }
    });
    let copy_big = time(min, || {
        black_box(copy_run(&big));
    });
    println!(
        "  passthrough copy      pages {:>9.1} MB/s   combined {:>9.1} MB/s",
        mbps(page_bytes, copy_pages),
        mbps(big.len(), copy_big)
    );
    // lol_html alone, no handlers: the floor any rewriting on it can reach.
    let lol = |doc: &[u8]| {
        let mut out = Vec::new();
        let mut rw = lol_html::HtmlRewriter::new(lol_html::Settings::new(), |c: &[u8]| {
            out.extend_from_slice(c)
        });
        for c in doc.chunks(CHUNK) {
            let _ = rw.write(c);
        }
        let _ = rw.end();
        black_box(out.len())
    };
    let lp = time(min, || {
        for p in &pages {
            lol(p);
        }
    });
    let lb = time(min, || {
        lol(&big);
    });
    println!(
        "  lol_html, no handlers pages {:>9.1} MB/s   combined {:>9.1} MB/s",
        mbps(page_bytes, lp),
        mbps(big.len(), lb)
    );
    for mode in [Mode::Repair, Mode::Record] {
        let label = if mode == Mode::Record {
            "record (cache warm)"
        } else {
            "repair"
        };
        let cache =
            Arc::new(ScriptCache::new(mode, 256 << 20, None).unwrap_or_else(|e| panic!("{e}")));
        let tp = time(min, || {
            for p in &pages {
                black_box(html_run(p, mode, &cache));
            }
        });
        let tb = time(min, || {
            black_box(html_run(&big, mode, &cache));
        });
        println!(
            "  {label:<21} pages {:>9.1} MB/s   combined {:>9.1} MB/s   ({:.1}x / {:.1}x the copy time)",
            mbps(page_bytes, tp),
            mbps(big.len(), tb),
            tp / copy_pages,
            tb / copy_big
        );
        if mode == Mode::Record {
            let tc = time(min, || {
                for p in &pages {
                    let cold = Arc::new(
                        ScriptCache::new(mode, 256 << 20, None).unwrap_or_else(|e| panic!("{e}")),
                    );
                    black_box(html_run(p, mode, &cold));
                }
            });
            println!(
                "  record (cache cold)   pages {:>9.1} MB/s",
                mbps(page_bytes, tc)
            );
        }
    }

    let mut libs = Vec::new();
    for app in APPS {
        let mut files = Vec::new();
        js_files(&examples.join(app), &mut files);
        files.sort();
        for f in files {
            if let Ok(b) = std::fs::read(&f) {
                libs.push((
                    f.strip_prefix(&examples)
                        .map(Path::to_path_buf)
                        .unwrap_or(f),
                    b,
                ));
            }
        }
    }
    let lib_bytes: usize = libs.iter().map(|(_, b)| b.len()).sum();
    println!(
        "JS: {} files of {} apps, {} bytes",
        libs.len(),
        APPS.len(),
        lib_bytes
    );
    let mut cold_total = 0.0;
    let mut failed = 0;
    for (path, bytes) in &libs {
        let t = time(Duration::from_millis(200), || {
            let cache =
                ScriptCache::new(Mode::Record, 256 << 20, None).unwrap_or_else(|e| panic!("{e}"));
            black_box(cache.instrument_script(bytes, ScriptKind::Script, Some("utf-8")));
        });
        cold_total += t;
        let cache =
            ScriptCache::new(Mode::Record, 256 << 20, None).unwrap_or_else(|e| panic!("{e}"));
        let out = cache.instrument_script(bytes, ScriptKind::Script, Some("utf-8"));
        if out.code.is_none() {
            failed += 1;
        }
        if bytes.len() > 100_000 {
            println!(
                "  cold {:<50} {:>7} B {:>7.2} ms {:>6.1} MB/s{}",
                path.display(),
                bytes.len(),
                t * 1e3,
                mbps(bytes.len(), t),
                if out.code.is_none() {
                    "  (kept original)"
                } else {
                    ""
                }
            );
        }
    }
    println!(
        "  cold pass, all files:  {:.1} MB/s ({} of {} kept original)",
        mbps(lib_bytes, cold_total),
        failed,
        libs.len()
    );
    let warm = ScriptCache::new(Mode::Record, 256 << 20, None).unwrap_or_else(|e| panic!("{e}"));
    for (_, b) in &libs {
        warm.instrument_script(b, ScriptKind::Script, Some("utf-8"));
    }
    let hit = time(min, || {
        for (_, b) in &libs {
            let out = warm.instrument_script(b, ScriptKind::Script, Some("utf-8"));
            black_box(out.body_bytes());
        }
    });
    let copy = time(min, || {
        for (_, b) in &libs {
            black_box(b.to_vec());
        }
    });
    println!(
        "  cache hit (hash + lookup + body copy) {:.1} MB/s vs passthrough copy {:.1} MB/s: {:.2}x the copy time",
        mbps(lib_bytes, hit),
        mbps(lib_bytes, copy),
        hit / copy
    );
}
