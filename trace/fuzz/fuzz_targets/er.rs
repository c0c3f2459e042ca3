//! ER_actionlog reader: any input gives a trace or an error with an offset inside the input;
//! an accepted trace obeys the model's invariants (the strict JSONL reader takes it back), and
//! our export of it imports to a trace with the same shape, which is then a fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use shepherd_trace::er::{read_er, to_er_bytes};
use shepherd_trace::{Trace, read_jsonl, to_jsonl_bytes};

fn shape(t: &Trace) -> (Vec<(u32, u32)>, usize, usize) {
    (
        t.actions.iter().map(|a| (a.ops.start, a.ops.end)).collect(),
        t.ops.len(),
        t.arcs.len(),
    )
}

fuzz_target!(|data: &[u8]| {
    match read_er(data) {
        Ok(imp) => {
            let t = imp.trace;
            let back = read_jsonl(&to_jsonl_bytes(&t)[..]).expect("imported trace is valid");
            assert_eq!(back, t);
            let t2 = read_er(&to_er_bytes(&t)).expect("our export reads back").trace;
            assert_eq!(shape(&t2), shape(&t));
            assert_eq!(t2.arcs, t.arcs);
            let t3 = read_er(&to_er_bytes(&t2)).expect("our export reads back").trace;
            assert_eq!(t3, t2);
        }
        Err(e) => assert!(e.offset().is_some_and(|o| o <= data.len() as u64), "{e}"),
    }
});
