//! The HTML layer and the cache with the real JavaScript pass.

use shepherd_instrument::{HtmlConfig, MARKER, Mode, ScriptCache, ScriptKind, instrument_html};
use std::sync::Arc;

#[test]
fn html_with_real_pass() {
    let input = b"<!doctype html><meta charset=utf-8><script>var a = 1; a++;</script>\
<script>var = ;</script><button onclick=\"if (a &amp;&amp; 1) return false\">b</button>\
<a href=\"javascript:a = 2\">x</a><script type=module>export const m = 1;</script>";
    let mut cfg = HtmlConfig::new(Mode::Record, "S");
    cfg.nonce = Some("N".into());
    let (out, report, _) = instrument_html(input, cfg, &[]).unwrap();
    let out = String::from_utf8(out).unwrap();
    let c = &report.counters;
    assert_eq!(c.scripts_instrumented, 2, "{out}");
    assert_eq!(c.scripts_kept_js_error, 1, "{out}");
    assert_eq!(c.handlers_instrumented, 1, "{out}");
    assert_eq!(c.js_urls_instrumented, 1, "{out}");
    assert!(out.contains(&format!("<script>{MARKER}")), "{out}");
    assert!(out.contains("<script>var = ;</script>"), "{out}");
    assert!(out.contains(&format!("onclick=\"{MARKER}")), "{out}");
    assert!(
        out.contains(&format!("href=\"javascript:{MARKER}")),
        "{out}"
    );
    assert!(!out.contains("&&"), "handler `&` must stay encoded: {out}");
}

#[test]
fn repair_mode_rewrites_no_js() {
    let input = b"<!doctype html><script>var a = 1;</script><p onclick=\"f()\">";
    let (out, report, _) = instrument_html(input, HtmlConfig::new(Mode::Repair, "S"), &[]).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "<!doctype html><script src=\"/__shepherd/runtime.js?t=S&amp;m=repair\"></script>\
<script>var a = 1;</script><p onclick=\"f()\">"
    );
    assert_eq!(report.counters, Default::default());
    let cache = ScriptCache::new(Mode::Repair, 1 << 20, None).unwrap();
    assert!(
        cache
            .instrument_script(b"a = 1", ScriptKind::Script, None)
            .code
            .is_none()
    );
}

#[test]
fn cache_memory_and_disk() {
    let dir = tempfile::tempdir().unwrap();
    let src = "function f(o) { return o.x + y; }\n";
    let cache = ScriptCache::new(Mode::Record, 1 << 20, Some(dir.path().into())).unwrap();
    let a = cache.instrument_script(src.as_bytes(), ScriptKind::Script, Some("utf-8"));
    assert!(!a.from_cache);
    let code = a.code.clone().unwrap();
    assert!(code.starts_with(MARKER));
    assert!(
        a.map_id
            .as_deref()
            .and_then(|id| cache.source_map(id))
            .is_some()
    );
    let b = cache.instrument_script(src.as_bytes(), ScriptKind::Script, Some("utf-8"));
    assert!(b.from_cache);
    assert_eq!(b.code.as_deref(), Some(&*code));
    // A module with the same bytes is another entry.
    assert!(
        !cache
            .instrument_script(src.as_bytes(), ScriptKind::Module, None)
            .from_cache
    );
    // A fresh process finds the entry on disk.
    let cold = Arc::new(ScriptCache::new(Mode::Record, 1 << 20, Some(dir.path().into())).unwrap());
    let c = cold.instrument_script(src.as_bytes(), ScriptKind::Script, Some("utf-8"));
    assert!(c.from_cache);
    assert_eq!(c.code.as_deref(), Some(&*code));
    assert_eq!(cold.stats().disk_hits, 1);
    // Failures are cached too and keep the original.
    let bad = cache.instrument_script(b"var = ;", ScriptKind::Script, None);
    assert!(bad.code.is_none() && bad.kept_reason.is_some());
    assert!(
        cache
            .instrument_script(b"var = ;", ScriptKind::Script, None)
            .from_cache
    );
    // Already instrumented code is not instrumented twice.
    assert!(
        cache
            .instrument_script(code.as_bytes(), ScriptKind::Script, None)
            .code
            .is_none()
    );
}

#[test]
fn script_charsets() {
    let cache = ScriptCache::new(Mode::Record, 1 << 20, None).unwrap();
    // windows-1251 bytes for "Ж" in a string literal; output is UTF-8 with a BOM.
    let out = cache.instrument_script(b"var s = '\xC6';", ScriptKind::Script, Some("windows-1251"));
    let body = out.body_bytes().unwrap();
    assert!(body.starts_with(b"\xEF\xBB\xBF"));
    let text = String::from_utf8(body[3..].to_vec()).unwrap();
    assert!(text.contains('Ж') || text.contains("\\u0416"), "{text}");
    // A BOM beats the charset label.
    let out = cache.instrument_script(
        b"\xEF\xBB\xBFvar s = '\xC3\xA9';",
        ScriptKind::Script,
        Some("windows-1251"),
    );
    let text = String::from_utf8(out.body_bytes().unwrap()).unwrap();
    assert!(text.contains('é') || text.contains("\\u00e9"), "{text}");
    // Undecodable bytes: keep the original.
    assert!(
        cache
            .instrument_script(b"var s = '\xFF';", ScriptKind::Module, None)
            .code
            .is_none()
    );
}

#[test]
fn snippets() {
    let cache = ScriptCache::new(Mode::Record, 1 << 20, None).unwrap();
    let out = cache.instrument_snippet("return x + 1", ScriptKind::Handler);
    assert!(out.code.unwrap().starts_with(MARKER));
    assert!(
        cache
            .instrument_snippet("return x + 1", ScriptKind::Script)
            .code
            .is_none()
    );
}

#[test]
fn proxy_facing_types_are_send() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<shepherd_instrument::HtmlInstrumenter>();
    send_sync::<ScriptCache>();
    send_sync::<shepherd_instrument::ScriptOutput>();
}
