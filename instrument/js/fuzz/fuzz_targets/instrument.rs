//! Fuzzes the JS pass with every kind. Properties: no panic or abort outside swc's parser
//! (parser panics are parse errors), and whatever is accepted is instrumented
//! deterministically into output that starts with the marker and is refused a second time.
//!
//! Run: `cd instrument/js/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run instrument -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_instrument_js::{Error, Kind, MARKER, Options, instrument};

static HOOK: std::sync::Once = std::sync::Once::new();

fuzz_target!(|data: &[u8]| {
    // libfuzzer-sys aborts on any panic, even one the instrumentation worker catches. swc's
    // lexer has known assertions page input trips (reported as `Error::Parse`); let panics on
    // the workers unwind to their `catch_unwind` and check the result instead: a panic outside
    // the parser (`Error::Worker`) is a bug of ours and still fails below.
    HOOK.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let worker = std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("shepherd-instrument-js"));
            if !worker {
                fuzzer_hook(info);
            }
        }));
    });
    let Some((&sel, rest)) = data.split_first() else { return };
    let Ok(src) = std::str::from_utf8(rest) else { return };
    let kind = match sel % 4 {
        0 => Kind::Script,
        1 => Kind::Module,
        2 => Kind::Handler,
        _ => Kind::JsUrl,
    };
    let mut opts = Options::new(kind, "fuzz.js");
    opts.source_map = sel & 4 != 0;
    opts.ascii_only = sel & 8 != 0;
    opts.inline_script = sel & 16 != 0;
    let result = instrument(src, &opts);
    assert!(!matches!(result, Err(Error::Worker(_))), "{result:?}");
    if let Ok(out) = result {
        assert!(out.code.starts_with(MARKER));
        assert!(matches!(instrument(&out.code, &opts), Err(Error::AlreadyInstrumented)));
        if opts.ascii_only {
            assert!(out.code.is_ascii());
        }
    }
});
