//! Instrumentation modes and the kinds of JavaScript source the crate handles.

use std::str::FromStr;

/// What the page is instrumented for: Shepherd's one vocabulary of modes, defined with the
/// runtime it injects.
pub use shepherd_runtime::Mode;

/// Name used in cache keys: modes producing identical JavaScript share entries.
pub(crate) fn cache_name(mode: Mode) -> &'static str {
    if mode.rewrites_js() {
        "record"
    } else {
        "repair"
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
