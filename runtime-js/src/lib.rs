//! The injected event controller, embedded in the binary. The JavaScript sources live in this
//! folder (`prelude.js`, `trace.js`, `controller.js`, ... `access.js`, `boot.js`); [`render`]
//! concatenates them into one IIFE preceded by the run's configuration. The proxy serves the
//! result at `/__shepherd/runtime.js` (see `docs/runtime-api.md`).

use std::fmt;

include!(concat!(env!("OUT_DIR"), "/files.rs"));

/// What Shepherd does with a page: the one vocabulary of modes. The runtime reads how the
/// controller behaves, the instrumenter whether JavaScript is rewritten, the front ends which
/// response source the proxy gets (live and recorded, live, or the recording).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Live traffic, recorded: trace actions, arcs and accesses and upload them; JavaScript
    /// goes through the access-logging pass.
    Record,
    /// Live traffic in front of a site (`shepherd serve`): wrap only, so policies may postpone
    /// or discard events; nothing is traced and no JavaScript is rewritten.
    Repair,
    /// A recording served again: record plus deterministic mode (seeded randomness, virtual
    /// clock), so an explorer can re-run the page under other orders.
    Replay,
}

impl Mode {
    /// Every mode, for listings and tests.
    pub const ALL: [Mode; 3] = [Mode::Record, Mode::Repair, Mode::Replay];

    /// The name used in URLs (`m=`), cache keys and the runtime's configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Record => "record",
            Mode::Repair => "repair",
            Mode::Replay => "replay",
        }
    }

    /// Parses `record`, `repair` or `replay`.
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "record" => Some(Mode::Record),
            "repair" => Some(Mode::Repair),
            "replay" => Some(Mode::Replay),
            _ => None,
        }
    }

    /// Whether JavaScript (inline, handlers, `javascript:` URLs, external, dynamic) is
    /// rewritten to log its accesses to shared state.
    pub fn rewrites_js(self) -> bool {
        !matches!(self, Mode::Repair)
    }

    /// Whether the runtime records a trace and uploads it.
    pub fn traces(self) -> bool {
        !matches!(self, Mode::Repair)
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Mode::parse(&s.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("unknown mode {s:?} (record, repair, replay)"))
    }
}

/// Configuration rendered into the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Record, repair or replay.
    pub mode: Mode,
    /// The operator secret: `__shepherd.control(secret)` answers only to it. Only its SHA-256
    /// is rendered into the script, which every page script can read.
    pub secret: String,
    /// Seed of the deterministic random generator.
    pub seed: u32,
    /// Start of the virtual clock, in milliseconds since the Unix epoch.
    pub clock_ms: u64,
    /// Deterministic mode outside replay (replay always has it).
    pub deterministic: bool,
    /// Where traces are posted (default `/__shepherd/trace`, relative to each document).
    pub upload: Option<String>,
    /// Trace document id (after the origin's prefix); by default each document draws a
    /// random one.
    pub doc: Option<String>,
    /// The page credential, for embedders that serve the runtime themselves; by default the
    /// runtime reads `t=` from its own script URL (the proxy writes it there per origin).
    pub token: Option<String>,
    /// A compiled repair policy to enforce (`docs/policies.md`); none by default.
    pub policy: Option<RuntimePolicy>,
    /// The top-level document holds its callbacks for the explorer from its first one on
    /// (`control.explorerMode()` at boot): a callback the browser runs before the explorer
    /// could install its decider would otherwise run at once in some executions and wait
    /// for its step in others.
    pub explorer: bool,
}

/// A repair policy as the runtime loads it: the compiled JSON (`shepherd-policies`) and the
/// JavaScript expressions of its `js` expirations, which [`render`] turns into functions of
/// the runtime script itself (no `eval`: pages with a strict CSP keep working).
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimePolicy {
    /// The compiled policy object.
    pub json: serde_json::Value,
    /// Expression sources, indexed by the `js` entries of `json`; checked by the policy
    /// compiler (one expression, balanced, no `</script`).
    pub js: Vec<String>,
}

impl Config {
    /// A configuration for `mode` with the given secret and defaults for the rest.
    pub fn new(mode: Mode, secret: impl Into<String>) -> Config {
        Config {
            mode,
            secret: secret.into(),
            seed: 1,
            clock_ms: 1_700_000_000_000,
            deterministic: false,
            upload: None,
            doc: None,
            token: None,
            policy: None,
            explorer: false,
        }
    }
}

/// What the runtime compares `__shepherd.control(secret)` against: the lower-case hex SHA-256
/// of the operator secret (empty secret: no control at all).
pub fn control_hash(secret: &str) -> String {
    use sha2::Digest;
    if secret.is_empty() {
        return String::new();
    }
    hex::encode(sha2::Sha256::digest(secret.as_bytes()))
}

/// The configuration as a JavaScript object literal (JSON; `<` escaped so the text can be
/// inlined in HTML too).
fn config_literal(cfg: &Config) -> String {
    let mut map = serde_json::Map::new();
    map.insert("mode".into(), cfg.mode.as_str().into());
    map.insert("controlHash".into(), control_hash(&cfg.secret).into());
    map.insert("seed".into(), cfg.seed.into());
    map.insert("clock".into(), cfg.clock_ms.into());
    map.insert("deterministic".into(), cfg.deterministic.into());
    if let Some(u) = &cfg.upload {
        map.insert("upload".into(), u.clone().into());
    }
    if let Some(d) = &cfg.doc {
        map.insert("doc".into(), d.clone().into());
    }
    if let Some(t) = &cfg.token {
        map.insert("token".into(), t.clone().into());
    }
    if let Some(p) = &cfg.policy {
        map.insert("policy".into(), p.json.clone());
    }
    if cfg.explorer {
        map.insert("explorer".into(), true.into());
    }
    serde_json::Value::Object(map)
        .to_string()
        .replace('<', "\\u003c")
}

/// V8's explicit compile hint (Chrome 136 on): compile every function of the file while it is
/// streamed in, off the main thread. A page's runtime runs a large part of its functions while
/// the page loads (installing its wrappers; with a policy, deciding every event), and compiling
/// each one at its first call costs the page's main thread: on a TodoMVC load, about 9 ms of
/// 80 with `init-user-plus` and 3–4 ms of 75 without a policy (`docs/performance.md`, "Repair
/// policy cost"). It must be the file's first line.
pub const COMPILE_HINT: &str = "//# allFunctionsCalledOnLoad\n";

/// The runtime script a page loads for `cfg`: [`COMPILE_HINT`], then one strict-mode IIFE, no
/// globals but `__shepherd`.
pub fn render(cfg: &Config) -> String {
    let mut s = String::from(COMPILE_HINT);
    push_runtime(&mut s, cfg);
    s
}

/// The runtime for `cfg` to put in front of other code in one script (a worker's): without
/// [`COMPILE_HINT`], which would make V8 compile all of that code eagerly too.
pub fn render_prefix(cfg: &Config) -> String {
    let mut s = String::new();
    push_runtime(&mut s, cfg);
    s
}

/// Appends the runtime's IIFE for `cfg` to `s`.
fn push_runtime(s: &mut String, cfg: &Config) {
    let body_len: usize = FILES.iter().map(|(_, src)| src.len() + 32).sum();
    s.reserve(body_len + 256);
    s.push_str("(function () {\n'use strict';\nif (globalThis.__shepherd !== undefined) return;\nconst CONFIG = ");
    s.push_str(&config_literal(cfg));
    s.push_str(";\nconst POLICY_JS = [");
    for js in cfg.policy.iter().flat_map(|p| p.js.iter()) {
        s.push_str("function () {\nreturn (\n");
        push_inline_safe(s, js);
        s.push_str("\n);\n},\n");
    }
    s.push_str("];\n");
    for (name, src) in FILES {
        s.push_str("// ---- ");
        s.push_str(name);
        s.push('\n');
        push_inline_safe(s, src);
        s.push('\n');
    }
    s.push_str("})();\n");
}

/// Appends `src` with every `</script` (any case) written as `<\/script`, so the runtime can
/// also be inlined in a `<script>` element. In JavaScript the two spellings mean the same
/// inside strings, regular expressions and comments, the only places the sequence can occur.
fn push_inline_safe(out: &mut String, src: &str) {
    let mut rest = src;
    while let Some(i) = rest.find("</") {
        let after = &rest[i + 2..];
        out.push_str(&rest[..i]);
        if after.len() >= 6 && after[..6].eq_ignore_ascii_case("script") {
            out.push_str("<\\/");
        } else {
            out.push_str("</");
        }
        rest = after;
    }
    out.push_str(rest);
}

/// True when the JS pass's `access.js` is part of the build.
pub fn has_access_js() -> bool {
    FILES.iter().any(|(n, _)| *n == "access.js")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_one_iife_with_config_first() {
        let mut cfg = Config::new(Mode::Replay, "op-7f3a9</script>zq");
        cfg.seed = 42;
        let js = render(&cfg);
        assert!(
            js.starts_with(COMPILE_HINT),
            "the compile hint is the first line"
        );
        assert!(js[COMPILE_HINT.len()..].starts_with("(function () {\n'use strict';"));
        let prefix = render_prefix(&cfg);
        assert_eq!(
            prefix,
            js[COMPILE_HINT.len()..],
            "a prefix is the script without the hint"
        );
        assert!(!prefix.contains("allFunctionsCalledOnLoad"));
        assert!(js.trim_end().ends_with("})();"));
        assert!(js.contains("\"mode\":\"replay\""));
        assert!(js.contains("\"seed\":42"));
        assert!(
            !js.contains("</script>"),
            "config must not close an inline script"
        );
        assert!(
            !js.contains("7f3a9"),
            "the operator secret itself is never rendered"
        );
        assert!(js.contains(&control_hash("op-7f3a9</script>zq")));
        let prelude = js.find("// ---- prelude.js").unwrap();
        let boot = js.find("// ---- boot.js").unwrap();
        assert!(prelude < boot);
    }

    #[test]
    fn explorer_mode_is_rendered_only_when_asked_for() {
        let mut cfg = Config::new(Mode::Replay, "s");
        assert!(!render(&cfg).contains("\"explorer\""));
        cfg.explorer = true;
        assert!(render(&cfg).contains("\"explorer\":true"));
    }

    #[test]
    fn script_end_tags_are_escaped() {
        let mut s = String::new();
        push_inline_safe(&mut s, "a('</script>'); b('</SCRIPT'); c('</div>'); d('<')");
        assert_eq!(s, "a('<\\/script>'); b('<\\/SCRIPT'); c('</div>'); d('<')");
    }

    #[test]
    fn embeds_every_controller_file() {
        let names: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        for f in [
            "prelude.js",
            "credentials.js",
            "trace.js",
            "controller.js",
            "names.js",
            "coverage.js",
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
            "policy.js",
            "repair.js",
            "gates.js",
            "input.js",
            "access.js",
            "boot.js",
        ] {
            assert!(names.contains(&f), "{f} missing from {names:?}");
        }
        assert_eq!(names.last(), Some(&"boot.js"));
    }

    #[test]
    fn a_policy_and_its_expressions_are_rendered() {
        let mut cfg = Config::new(Mode::Repair, "s");
        let js = render(&cfg);
        assert!(js.contains("const POLICY_JS = [];"));
        cfg.policy = Some(RuntimePolicy {
            json: serde_json::json!({"version": 1, "policies": []}),
            js: vec!["typeof f === 'function'".into(), "'</script>' === x".into()],
        });
        let js = render(&cfg);
        assert!(
            js.contains("\"policy\":{\"policies\":[],\"version\":1}")
                || js.contains("\"policy\":{\"version\":1,\"policies\":[]}")
        );
        assert!(js.contains("function () {\nreturn (\ntypeof f === 'function'\n);\n},"));
        assert!(!js.contains("</script>"), "expressions are inlined safely");
    }

    #[test]
    fn modes_round_trip() {
        for m in [Mode::Record, Mode::Repair, Mode::Replay] {
            assert_eq!(Mode::parse(m.as_str()), Some(m));
        }
        assert_eq!(Mode::parse("bogus"), None);
    }
}
