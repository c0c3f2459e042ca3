//! ER_actionlog reader: any input gives a trace or an error with an offset inside the input;
//! an accepted trace obeys the model's invariants (the strict JSONL reader takes it back) and
//! exports to an ER_actionlog that imports to the same trace.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_trace::er::{read_er, to_er_bytes};
use shepherd_trace::{read_jsonl, to_jsonl_bytes};

fuzz_target!(|data: &[u8]| {
    match read_er(data) {
        Ok(imp) => {
            let t = imp.trace;
            let back = read_jsonl(&to_jsonl_bytes(&t)[..]).expect("imported trace is valid");
            assert_eq!(back, t);
            let again = read_er(&to_er_bytes(&t)).expect("our export reads back");
            assert_eq!(to_jsonl_bytes(&again.trace), to_jsonl_bytes(&t));
        }
        Err(e) => assert!(e.offset().is_some_and(|o| o <= data.len() as u64), "{e}"),
    }
});
