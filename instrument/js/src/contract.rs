//! What a job takes (the source's kind and the options), what it gives (code starting with
//! [`MARKER`], a source map) and why it may refuse ([`Error`]): shared by the entry points, the
//! worker pool and the job itself.

/// Comment that starts every instrumented output, so nothing is instrumented twice.
pub const MARKER: &str = "/*shepherd:instrumented*/";

/// What kind of JavaScript source is being instrumented (decides how it is parsed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A classic script (`<script>`, external classic script, indirect eval).
    Script,
    /// An ES module.
    Module,
    /// The body of an `on*` attribute: `return` is allowed at top level.
    Handler,
    /// The body of a `javascript:` URL (already percent-decoded).
    JsUrl,
}

/// Options of one instrumentation job.
#[derive(Debug, Clone)]
pub struct Options {
    /// How to parse the source.
    pub kind: Kind,
    /// Name used in the source map (usually the URL).
    pub source_name: String,
    /// Emit only ASCII (for scripts inside non-UTF-8 documents).
    pub ascii_only: bool,
    /// The code goes inside a `<script>` element: escape `</script` and `<!--`.
    pub inline_script: bool,
    /// The page's own source map (JSON) to chain the output map onto.
    pub input_source_map: Option<String>,
    /// Produce a source map.
    pub source_map: bool,
}

impl Options {
    /// Options for `kind` with everything else off.
    pub fn new(kind: Kind, source_name: impl Into<String>) -> Self {
        Options {
            kind,
            source_name: source_name.into(),
            ascii_only: false,
            inline_script: false,
            input_source_map: None,
            source_map: false,
        }
    }
}

/// Result of a successful job.
#[derive(Debug, Clone)]
pub struct Output {
    /// Instrumented code; starts with [`MARKER`].
    pub code: String,
    /// Source map (JSON) when [`Options::source_map`] was set.
    pub source_map: Option<String>,
}

/// Why a source was not instrumented; the caller serves the original bytes.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The parser rejected the source.
    #[error("parse error: {0}")]
    Parse(String),
    /// The parser recovered from errors; the browser might reject the source.
    #[error("recovered parse errors: {0}")]
    Recovered(String),
    /// The source breaks a rule the parser does not check (an early error: a redeclared
    /// binding, a misplaced `super`, a strict-mode restriction…): the browser rejects it.
    #[error("early error: {0}")]
    Invalid(String),
    /// Emitting the source again would change what it means (an escaped keyword such as
    /// `new.target` would be printed as the keyword).
    #[error("cannot be emitted faithfully: {0}")]
    Unfaithful(String),
    /// The source already starts with [`MARKER`].
    #[error("already instrumented")]
    AlreadyInstrumented,
    /// The source is nested too deeply to process safely.
    #[error("source nested too deeply")]
    TooDeep,
    /// The page's source map could not be read.
    #[error("bad input source map: {0}")]
    SourceMap(String),
    /// The worker thread could not be started or died.
    #[error("instrumentation worker failed: {0}")]
    Worker(String),
    /// [`Options::ascii_only`] was asked for, but the output must keep non-ASCII text: the raw
    /// strings of tagged templates (`` tag`é` ``) are visible to the tag, so escaping them
    /// would change behaviour.
    #[error("output cannot be ASCII-only (non-ASCII raw text of a tagged template)")]
    NotAscii,
}
