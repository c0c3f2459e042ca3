//! Semantics-preserving JavaScript instrumentation with swc: logs reads and writes of shared
//! state (globals, captured variables, object properties, arrays) through the runtime entry
//! points documented in `docs/runtime-api.md` ("Instrumented code → runtime", which lists
//! every call shape) and implemented in `runtime-js/access.js`.
//!
//! Pipeline per job (`job.rs`): parse explicitly as script or module (never guessed; handler
//! bodies allow top-level `return`) → refuse on any parse error *or* recovered error →
//! `resolver` → capture analysis (`analysis.rs`: which bindings another function refers to) →
//! the record pass (`pass.rs`; every access call carries its source position, `positions.rs`)
//! → minified codegen with the original spans (source map chained
//! onto the page's own map when given). No `hygiene` (it would rename user bindings, which
//! `Function#toString`-based dependency injection sees) and no `fixer` (the pass keeps
//! precedence itself). Jobs run on a small pool of worker threads with 256 MB stacks
//! (`pool.rs`); input nested deeper than [`MAX_NESTING`] brackets is refused up front. A panic
//! never reaches the caller: inside swc's parser it is an [`Error::Parse`], elsewhere an
//! [`Error::Worker`].
//!
//! Only record mode calls this crate; repair mode serves pages without rewriting JavaScript.

mod analysis;
mod ast;
mod depth;
mod early;
mod faithful;
mod job;
mod pass;
mod pool;
mod positions;
mod srcmap;
mod with_alias;

/// The key `K` of a source text in positions (`url#inline-<K hex>` for inline code): the first
/// 18 bits of the SHA-256 of exactly the text the pass was given. Whoever maps positions back
/// to documents (the reports' inline-code finder) must use this function, never a copy, so a
/// change of `K` cannot silently break them.
pub use positions::script_key;

/// Version of the pass; part of every cache key, bump it whenever output changes.
pub const PASS_VERSION: u32 = 9;

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

/// Parses and emits `src` without the record pass (same options, same workers): the
/// baseline the throughput benchmark compares against.
#[doc(hidden)]
pub fn baseline_roundtrip(src: &str, opts: &Options) -> Result<Output, Error> {
    if depth::too_deep(src, MAX_NESTING) {
        return Err(Error::TooDeep);
    }
    pool::submit(src.to_owned(), opts.clone(), false)
}

/// Per-phase wall times of one job run on the current thread (benchmark breakdown only).
#[doc(hidden)]
pub fn profile_phases(
    src: &str,
    opts: &Options,
) -> Result<Vec<(&'static str, std::time::Duration)>, Error> {
    job::profile(src.to_owned(), opts)
}

/// Deepest bracket nesting accepted; deeper sources are passed through ([`Error::TooDeep`]).
/// Real code stays far below this; the limit keeps the recursive parser, visitors and
/// emitter well inside the worker stack.
pub const MAX_NESTING: usize = 1000;

/// Instruments `src` on a worker thread with a large stack (fresh swc `Globals` and
/// `SourceMap` per job, so nothing accumulates across documents). Workers are a small pool
/// (one per core, at most 8) that live for the process: their allocator arenas stay warm.
pub fn instrument(src: &str, opts: &Options) -> Result<Output, Error> {
    if src.trim_start().starts_with(MARKER) {
        return Err(Error::AlreadyInstrumented);
    }
    if depth::too_deep(src, MAX_NESTING) {
        return Err(Error::TooDeep);
    }
    pool::submit(src.to_owned(), opts.clone(), true)
}
