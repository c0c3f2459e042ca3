//! The runtime's own SHA-256 (what `__shepherd.control(secret)` hashes its argument with) agrees
//! with the Rust side that renders the expected hash, on ASCII, multi-byte UTF-8, surrogate
//! pairs and every padding boundary; and the page credential is read from the runtime's URL.
//! Runs `credentials.js` in node with the few natives it uses.

use std::process::Command;

#[test]
fn runtime_sha256_matches_the_rendered_control_hash() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/credentials.js"))
        .expect("credentials.js");
    let inputs: Vec<String> = [
        String::new(),
        "abc".into(),
        "op-secret".into(),
        "é€😀 secret".into(),
        "a".repeat(200),
    ]
    .into_iter()
    .chain((50..70).map(|n| "x".repeat(n)))
    .collect();
    let script = format!(
        "const strCharCode=(s,i)=>s.charCodeAt(i), strIndexOf=(s,a,b)=>s.indexOf(a,b), \
         strSlice=(s,a,b)=>s.slice(a,b); const G={{}}; const CONFIG={{token:'t0'}}; \
         const docCurrentScript=null, scriptSrc=null, NativeString=String;\n{src}\n\
         const inputs={inputs}; \
         console.log(JSON.stringify({{hashes: inputs.map(sha256Hex), \
           t: queryParam('/__shepherd/runtime.js?t=00ff&m=record','t'), \
           t2: queryParam('/x?m=1&t=9','t'), none: queryParam('/x?tt=1','t'), \
           prefix: DOC_PREFIX}}));",
        inputs = serde_json::to_string(&inputs).unwrap_or_default(),
    );
    let out = Command::new(shepherd_testkit::node())
        .arg("-e")
        .arg(&script)
        .output()
        .expect("node is required for this test (scripts/install-deps installs it)");
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("node printed JSON");
    let hashes = v["hashes"].as_array().expect("hashes");
    assert_eq!(hashes.len(), inputs.len());
    for (input, got) in inputs.iter().zip(hashes) {
        let want = if input.is_empty() {
            // control_hash of an empty secret is empty (no control); the function itself
            // still hashes.
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855".to_string()
        } else {
            shepherd_runtime::control_hash(input)
        };
        assert_eq!(got.as_str(), Some(want.as_str()), "input {input:?}");
    }
    assert_eq!(v["t"], "00ff");
    assert_eq!(v["t2"], "9");
    assert_eq!(v["none"], "");
    assert_eq!(v["prefix"], "t0");
}
