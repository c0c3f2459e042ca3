//! Fuzzes the JS pass with every kind. Properties: no panic or abort, and whatever is
//! accepted is instrumented deterministically into output that starts with the marker and is
//! refused a second time.
//!
//! Run: `cd instrument/js/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run instrument -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_instrument_js::{Error, Kind, MARKER, Options, instrument};

fuzz_target!(|data: &[u8]| {
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
    if let Ok(out) = instrument(src, &opts) {
        assert!(out.code.starts_with(MARKER));
        assert!(matches!(instrument(&out.code, &opts), Err(Error::AlreadyInstrumented)));
        if opts.ascii_only {
            assert!(out.code.is_ascii());
        }
    }
});
