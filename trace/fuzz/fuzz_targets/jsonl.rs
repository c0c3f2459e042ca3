//! JSONL reader: any input gives a trace or an error with an offset inside the input, and an
//! accepted trace survives write + read unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_trace::{read_jsonl, to_jsonl_bytes};

fuzz_target!(|data: &[u8]| {
    match read_jsonl(data) {
        Ok(t) => {
            let again = read_jsonl(&to_jsonl_bytes(&t)[..]).expect("canonical output reads back");
            assert_eq!(again, t);
        }
        Err(e) => assert!(e.offset().is_some_and(|o| o <= data.len() as u64), "{e}"),
    }
});
