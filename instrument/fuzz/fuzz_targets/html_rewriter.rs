//! Fuzzes the streaming HTML instrumenter: never panics, gives the same bytes whatever the
//! chunking, and in repair mode changes nothing but the injected runtime tag.
//!
//! Run: `cd instrument/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run html_rewriter`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_instrument::{
    Change, CspHeader, Flags, HtmlConfig, HtmlInstrumenter, Mode, Report, ScriptCache, ScriptKind,
};
use std::sync::Arc;

fn stub(
    src: &str,
    kind: ScriptKind,
    _f: Flags,
    _n: &str,
) -> Result<(String, Option<String>), String> {
    if src.len() % 7 == 3 {
        return Err("stub failure".into());
    }
    Ok((format!("/*i:{}*/{}", kind.as_str(), src), None))
}

fn run(data: &[u8], mode: Mode, csp: Option<&str>, chunk: usize) -> (Vec<u8>, Report) {
    let mut cfg = HtmlConfig::new(mode, "S");
    cfg.nonce = Some("N".into());
    cfg.origin = Some("https://f.test".into());
    cfg.max_memory = 1 << 20;
    cfg.cache = Some(Arc::new(
        ScriptCache::with_pass(mode, 1 << 16, None, stub).unwrap(),
    ));
    let mut h = HtmlInstrumenter::new(cfg);
    if let Some(c) = csp {
        h.adjust_csp_header(c, CspHeader::Enforce);
    }
    let mut out = Vec::new();
    for c in data.chunks(chunk.max(1)) {
        out.extend(h.write(c).unwrap());
    }
    let (tail, report) = h.finish().unwrap();
    out.extend(tail);
    (out, report)
}

fuzz_target!(|input: &[u8]| {
    let Some((&ctl, data)) = input.split_first() else {
        return;
    };
    let mode = if ctl & 1 == 0 {
        Mode::Repair
    } else {
        Mode::Record
    };
    let csp =
        (ctl & 2 != 0).then_some("script-src 'sha256-AAAA' 'unsafe-inline'; default-src 'self'");
    let chunk = usize::from(ctl >> 2) + 1;
    let (whole, report) = run(data, mode, csp, usize::MAX);
    let (chunked, _) = run(data, mode, csp, chunk);
    assert_eq!(whole, chunked, "chunking changed the output");
    // srcdoc documents are instrumented too, so their attribute changes.
    let bypass = report.srcdoc_documents > 0
        || report.changes.iter().any(|c| {
            matches!(
                c,
                Change::Transcoded { .. } | Change::PassedThrough { .. } | Change::BailedOut { .. }
            )
        });
    if mode == Mode::Repair && !bypass {
        let tag: &[u8] = if csp.is_some() {
            b"<script src=\"/__shepherd/runtime.js?t=S&amp;m=repair\" nonce=\"N\"></script>"
        } else {
            b"<script src=\"/__shepherd/runtime.js?t=S&amp;m=repair\"></script>"
        };
        let at = whole
            .windows(tag.len())
            .position(|w| w == tag)
            .expect("runtime tag missing");
        let mut rest = whole[..at].to_vec();
        rest.extend_from_slice(&whole[at + tag.len()..]);
        assert_eq!(rest, data, "repair mode changed more than the injected tag");
    }
});
