//! A long action keeps its trace as flat pieces while it runs and uploads it as one batch
//! when it ends (`tests/long_action.js`).

mod common;

/// The runtime's batch size (`FLUSH_CHARS`, trace.js).
const FLUSH_CHARS: u64 = 16_000;

#[test]
fn a_long_action_is_kept_in_flat_pieces_and_uploaded_whole() {
    let stdout = common::run_with_runtime("long_action.js");
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    // 3 000 reads of fields named for the first time, and the earlier action's writes logged
    // late, are over 100 000 characters of trace: inside the action they are pieces of about
    // FLUSH_CHARS each, not one string.
    let chars = v["inside"]["chars"].as_u64().unwrap();
    let pieces = v["inside"]["pieces"].as_u64().unwrap();
    assert!(chars > 100_000, "{}", v["inside"]);
    assert!(pieces >= chars / (FLUSH_CHARS + 200), "{}", v["inside"]);
    // The action's records still go up in one batch, cut when the action ended.
    let sizes: Vec<u64> = v["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect();
    assert!(sizes.iter().any(|&s| s >= chars), "upload sizes {sizes:?}");
    // The records read back (each line parsed: the pieces were joined at record ends) hold
    // every read in one action.
    let mut reads_by_action: Vec<usize> = Vec::new();
    let mut open = false;
    for r in v["records"].as_array().unwrap() {
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
