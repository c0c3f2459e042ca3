//! `control.flush()` settles as soon as the runtime's uploads are answered
//! (`tests/flush.js`): the explorer waits for it at the end of every execution, and a
//! promise settled by a timer that polls the uploads cost each execution the timer's period.

mod common;

#[test]
fn flush_settles_once_its_upload_is_answered() {
    let stdout = common::run_with_runtime("flush.js");
    let v: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(
        v["settled"],
        serde_json::json!(["first", "second", "empty"]),
        "flushes that settled with the runtime's timers stopped: {v}"
    );
    assert!(v["uploads"].as_u64().unwrap() >= 2, "{v}");
}
