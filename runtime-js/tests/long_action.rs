//! A long action's trace is cut into upload batches while it runs (`tests/long_action.js`),
//! each cut at a record's end, and the batches together are the action's whole trace.

mod common;

/// The runtime's batch size (`FLUSH_CHARS`, trace.js).
const FLUSH_CHARS: usize = 16_000;

#[test]
fn a_long_action_is_cut_into_batches_at_record_ends() {
    let stdout = common::run_with_runtime("long_action.js");
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let sizes: Vec<usize> = v["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap() as usize)
        .collect();
    let records = v["records"].as_array().unwrap();
    // 3 000 reads of fresh fields are about 170 000 characters of trace.
    assert!(sizes.len() >= 8, "upload sizes {sizes:?}");
    // A batch is cut as soon as it holds FLUSH_CHARS: at most one record (a name's definition
    // and its read) more.
    for s in &sizes {
        assert!(*s < FLUSH_CHARS + 200, "upload sizes {sizes:?}");
    }
    // The records read back (each line parsed: no record was cut in two) hold every read in
    // one action.
    let mut reads_by_action: Vec<usize> = Vec::new();
    let mut open = false;
    for r in records {
        match r[0].as_str().unwrap_or("") {
            "b" => {
                reads_by_action.push(0);
                open = true;
            }
            "n" => open = false,
            "r" => {
                assert!(open, "a read outside an action: {r}");
                if let Some(n) = reads_by_action.last_mut() {
                    *n += 1;
                }
            }
            _ => {}
        }
    }
    assert!(!open, "the last action never ended");
    // (The timer's own callback adds a read of its own.)
    assert!(
        reads_by_action.iter().any(|&n| n >= 3000),
        "reads per action {reads_by_action:?}"
    );
}
