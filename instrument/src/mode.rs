//! Instrumentation modes and the kinds of JavaScript source the crate handles.

use std::fmt;
use std::str::FromStr;

/// What the page is instrumented for (the `m` parameter of the runtime URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Log shared-memory accesses: JavaScript goes through the pass.
    Record,
    /// Re-run a recorded schedule: rewritten like `Record`.
    Replay,
    /// Enforce a repair policy: only the runtime is injected, no JavaScript is rewritten.
    Repair,
}

impl Mode {
    /// Whether JavaScript (inline, handlers, `javascript:` URLs, external) is rewritten.
    pub fn rewrites_js(self) -> bool {
        !matches!(self, Mode::Repair)
    }

    /// Name used in the runtime URL.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Record => "record",
            Mode::Replay => "replay",
            Mode::Repair => "repair",
        }
    }

    /// Name used in cache keys: modes producing identical JavaScript share entries.
    pub(crate) fn cache_name(self) -> &'static str {
        if self.rewrites_js() {
            "record"
        } else {
            "repair"
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "record" => Ok(Mode::Record),
            "replay" => Ok(Mode::Replay),
            "repair" => Ok(Mode::Repair),
            other => Err(format!("unknown mode {other:?} (record, replay, repair)")),
        }
    }
}

/// Kind of a JavaScript source, deciding how it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptKind {
    /// Classic script.
    Script,
    /// ES module.
    Module,
    /// Body of an `on*` attribute (top-level `return` allowed).
    Handler,
    /// Body of a `javascript:` URL, percent-decoded.
    JsUrl,
}

impl ScriptKind {
    /// Name used in cache keys and the instrument endpoint's `kind` parameter.
    pub fn as_str(self) -> &'static str {
        match self {
            ScriptKind::Script => "script",
            ScriptKind::Module => "module",
            ScriptKind::Handler => "handler",
            ScriptKind::JsUrl => "js-url",
        }
    }

    pub(crate) fn to_js(self) -> shepherd_instrument_js::Kind {
        use shepherd_instrument_js::Kind;
        match self {
            ScriptKind::Script => Kind::Script,
            ScriptKind::Module => Kind::Module,
            ScriptKind::Handler => Kind::Handler,
            ScriptKind::JsUrl => Kind::JsUrl,
        }
    }
}

impl FromStr for ScriptKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "script" | "classic" => Ok(ScriptKind::Script),
            "module" => Ok(ScriptKind::Module),
            "handler" => Ok(ScriptKind::Handler),
            "js-url" | "jsurl" | "javascript-url" => Ok(ScriptKind::JsUrl),
            other => Err(format!(
                "unknown script kind {other:?} (script, module, handler, js-url)"
            )),
        }
    }
}
