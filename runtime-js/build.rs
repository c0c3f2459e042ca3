//! Generates the list of embedded JavaScript files. Every file of [`FILES`] must exist and
//! every `.js` file of the folder must be listed: a runtime silently built without one of its
//! parts (or with a new file forgotten) would trace less and still pass most tests.

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
    "coverage.js",
    "policy.js",
    "determinism.js",
    "timers.js",
    "causes.js",
    "focus.js",
    "interfaces.js",
    "events.js",
    "navigation.js",
    "network.js",
    "promises.js",
    "storage.js",
    "workers.js",
    "dynamic.js",
    "dom.js",
    "repair.js",
    "gates.js",
    "input.js",
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
        if !path.is_file() {
            panic!("runtime file {name} is listed in build.rs but missing from {dir}");
        }
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) => panic!("cannot list {dir}: {e}"),
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".js") && !FILES.contains(&name.as_str()) {
            panic!("{name} is in {dir} but not listed in build.rs: add it to FILES in order");
        }
    }
    code.push_str("];\n");
    println!("cargo:rerun-if-changed={dir}");
    let out = env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    if let Err(e) = fs::write(Path::new(&out).join("files.rs"), code) {
        panic!("cannot write files.rs: {e}");
    }
}
