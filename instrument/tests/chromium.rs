//! Headless Chromium checks that instrumentation keeps what the browser decides from the first
//! bytes: quirks vs standards mode, the document encoding, and text decoded through it. Every
//! document is loaded twice (original and instrumented, repair mode so no runtime is needed) as
//! iframes of one page, so the whole test costs a single browser launch.

use shepherd_instrument::{HtmlConfig, Mode, instrument_html};
use std::process::Command;

/// Each inline probe writes what the page saw into `<pre id=r>` of its own document.
const PROBE: &str = "<script>document.addEventListener('DOMContentLoaded',function(){var p=document.createElement('pre');p.id='r';p.textContent=JSON.stringify({t:(document.getElementById('t')||{}).textContent||'',s:window.S||'',first:(document.scripts[0]||{}).src||''});document.body.appendChild(p)})</script>";

fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let probe = PROBE;
    let mut v: Vec<(&'static str, Vec<u8>)> = vec![
        ("quirks", format!("<p id=t>quirky</p>{probe}").into_bytes()),
        ("standards-comment-first", format!("<!-- c --><!DOCTYPE html><html><head>{probe}</head><body><p id=t>std</p></body></html>").into_bytes()),
        ("almost-standards", format!("<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\"><html><head>{probe}</head><body><p id=t>x</p></body></html>").into_bytes()),
        ("missing-head", format!("<script>window.S='first'</script>{probe}<p id=t>x</p>").into_bytes()),
    ];
    let sjis = encode(
        encoding_rs::SHIFT_JIS,
        &format!(
            "<!DOCTYPE html><html><head><meta charset=\"shift_jis\"><script>window.S='日本'</script>{probe}</head><body><p id=t>日本語</p></body></html>"
        ),
    );
    v.push(("shift-jis-meta", sjis));
    let w1252 = encode(
        encoding_rs::WINDOWS_1252,
        &format!(
            "<!DOCTYPE html><html><head><script>window.S='café'</script>{probe}</head><body><p id=t>crème</p></body></html>"
        ),
    );
    v.push(("windows-1252-default", w1252));
    // <meta charset> near the end of the 1024-byte prescan window.
    let pad = "x".repeat(880);
    let late = encode(
        encoding_rs::WINDOWS_1251,
        &format!(
            "<!DOCTYPE html><html><head><!--{pad}--><meta charset=\"windows-1251\">{probe}</head><body><p id=t>Жук</p></body></html>"
        ),
    );
    v.push(("late-meta-charset", late));
    let mut utf16 = vec![0xFF, 0xFE];
    for u in format!("<!DOCTYPE html><html><head><script>window.S='ü'</script>{probe}</head><body><p id=t>日本</p></body></html>").encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    v.push(("utf16le-bom", utf16));
    v
}

fn encode(enc: &'static encoding_rs::Encoding, s: &str) -> Vec<u8> {
    enc.encode(s).0.into_owned()
}

#[test]
fn browser_sees_the_same_document() {
    let chromium = shepherd_testkit::chromium();
    let dir = tempfile::tempdir().unwrap();
    let profile = tempfile::tempdir().unwrap();
    let cases = cases();
    let mut frames = String::new();
    for (name, input) in &cases {
        let (out, _, _) = instrument_html(input, HtmlConfig::new(Mode::Repair, "S"), &[]).unwrap();
        std::fs::write(dir.path().join(format!("{name}.orig.html")), input).unwrap();
        std::fs::write(dir.path().join(format!("{name}.inst.html")), &out).unwrap();
        frames.push_str(&format!(
            "<iframe src=\"{name}.orig.html\"></iframe><iframe src=\"{name}.inst.html\"></iframe>"
        ));
    }
    let top = format!(
        "<!DOCTYPE html><html><body>{frames}<script>onload=function(){{var o={{}};for(var f of document.querySelectorAll('iframe')){{var d=f.contentDocument;var r=d&&d.getElementById('r');o[f.getAttribute('src')]={{mode:d&&d.compatMode,cs:d&&d.characterSet,r:r&&JSON.parse(r.textContent)}}}}var p=document.createElement('pre');p.id='out';p.textContent=JSON.stringify(o);document.body.appendChild(p)}}</script></body></html>"
    );
    let top_path = dir.path().join("top.html");
    std::fs::write(&top_path, top).unwrap();
    let output = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--allow-file-access-from-files",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", top_path.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&output.stdout);
    let start = dom.find("<pre id=\"out\">").unwrap_or_else(|| {
        panic!(
            "no result in DOM: {dom}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    }) + 14;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">");
    let results: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut problems = Vec::new();
    for (name, _) in &cases {
        let o = &results[format!("{name}.orig.html")];
        let i = &results[format!("{name}.inst.html")];
        assert!(
            o["r"].is_object(),
            "{name}: original produced no probe result: {o}"
        );
        if o["mode"] != i["mode"] {
            problems.push(format!("{name}: compatMode {} -> {}", o["mode"], i["mode"]));
        }
        if o["r"]["t"] != i["r"]["t"] || o["r"]["s"] != i["r"]["s"] {
            problems.push(format!("{name}: text {} -> {}", o["r"], i["r"]));
        }
        // UTF-16 documents are transcoded to UTF-8 on purpose; all others keep their encoding.
        let expect_cs = if *name == "utf16le-bom" {
            serde_json::json!("UTF-8")
        } else {
            o["cs"].clone()
        };
        if i["cs"] != expect_cs {
            problems.push(format!("{name}: characterSet {} -> {}", o["cs"], i["cs"]));
        }
        let first = i["r"]["first"].as_str().unwrap_or_default();
        if !first.contains("/__shepherd/runtime.js?t=S&m=repair") {
            problems.push(format!(
                "{name}: first script is {first:?}, not the runtime"
            ));
        }
    }
    assert_eq!(results["quirks.orig.html"]["mode"], "BackCompat");
    assert_eq!(
        results["standards-comment-first.orig.html"]["mode"],
        "CSS1Compat"
    );
    assert_eq!(results["shift-jis-meta.inst.html"]["r"]["s"], "日本");
    assert_eq!(results["late-meta-charset.inst.html"]["cs"], "windows-1251");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
