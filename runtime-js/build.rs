//! Generates the list of embedded JavaScript files. `access.js` (written by the JS-pass
//! engineer) is included when it exists, so the runtime builds before and after it lands.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// Concatenation order: natives first, the boot code last.
const FILES: &[&str] = &[
    "prelude.js",
    "credentials.js",
    "trace.js",
    "controller.js",
    "names.js",
    "policy.js",
    "determinism.js",
    "timers.js",
    "events.js",
    "network.js",
    "promises.js",
    "storage.js",
    "workers.js",
    "dynamic.js",
    "dom.js",
    "repair.js",
    "access.js",
    "boot.js",
];

fn main() {
    let dir = env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let mut code = String::from(
        "/// The runtime's source files, in concatenation order.\npub const FILES: &[(&str, &str)] = &[\n",
    );
    for name in FILES {
        let path = Path::new(&dir).join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        if path.exists() {
            let _ = writeln!(
                code,
                "    ({name:?}, include_str!({:?})),",
                path.display().to_string()
            );
        }
    }
    code.push_str("];\n");
    println!("cargo:rerun-if-changed={dir}");
    let out = env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    if let Err(e) = fs::write(Path::new(&out).join("files.rs"), code) {
        panic!("cannot write files.rs: {e}");
    }
}
