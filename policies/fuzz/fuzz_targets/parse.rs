//! Any bytes as a policy file: parsing, checking and compiling never panic, and every
//! diagnostic points at a line of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match shepherd_policies::parse_policy("fuzz", "fuzz.policy", text) {
        Ok((p, _)) => {
            let _ = shepherd_policies::compile::compile(&[p.clone()]);
            let _ = shepherd_policies::explain::explain(&p);
        }
        Err(e) => {
            let lines = text.split('\n').count() as u32;
            for d in &e.diagnostics {
                assert!(d.span.line >= 1 && d.span.line <= lines.max(1), "{d:?}");
            }
        }
    }
});
