//! Semantics-preserving JavaScript instrumentation with swc: logs reads and writes of shared
//! state (globals, captured variables, object properties, arrays) through the runtime entry
//! points documented in `docs/runtime-api.md` ("Instrumented code → runtime", which lists
//! every call shape) and implemented in `runtime-js/access.js`.
//!
//! Pipeline per job (`job.rs`): parse explicitly as script or module (never guessed; handler
//! bodies allow top-level `return`) → refuse on any parse error *or* recovered error, and on
//! any early error or grammar rule swc does not check (`early.rs`, with the text-level rules of
//! `syntax.rs`) → `resolver` → capture analysis (`analysis.rs`: which bindings another function refers to) →
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
mod contract;
mod depth;
mod early;
mod faithful;
mod job;
mod pass;
mod pool;
mod positions;
mod srcmap;
mod syntax;
mod with_alias;

/// The key `K` of a source text in positions (`url#inline-<K hex>` for inline code): the first
/// 18 bits of the SHA-256 of exactly the text the pass was given. Whoever maps positions back
/// to documents (the reports' inline-code finder) must use this function, never a copy, so a
/// change of `K` cannot silently break them.
pub use positions::script_key;

pub use contract::{Error, Kind, MARKER, Options, Output};

/// Version of the pass; part of every cache key, bump it whenever output changes.
pub const PASS_VERSION: u32 = 10;

/// swc's own parse + emit of `src` (same options, same workers, the tree freed after the
/// reply), none of the pass's work: no depth pre-check, early-error walk, resolver, analysis
/// or rewrite. The baseline the throughput benchmark compares the pass against: what any
/// rewriting proxy built on swc pays.
#[doc(hidden)]
pub fn baseline_roundtrip(src: &str, opts: &Options) -> Result<Output, Error> {
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

/// Where `line:col` of the code `instrument(src, opts)` makes comes from in `src`: the source
/// map's nearest mapping at or before it. Positions are 1-based, as browsers report them. The
/// pass is deterministic, so given the text a page was served, this maps a position the
/// browser reported (an uncaught exception's) back to that text. `None` when the pass refuses
/// `src`, nothing maps there, or the position is not in the code the pass made (a position of
/// other code must not borrow the last mapping of this one).
pub fn original_position(src: &str, opts: &Options, line: u32, col: u32) -> Option<(u32, u32)> {
    let mut opts = opts.clone();
    opts.source_map = true;
    opts.input_source_map = None;
    let out = instrument(src, &opts).ok()?;
    let text = out
        .code
        .split('\n')
        .nth(usize::try_from(line.checked_sub(1)?).ok()?)?;
    // Columns count UTF-16 units; one past the line's end is where its last token ends.
    if usize::try_from(col).ok()? > text.encode_utf16().count() + 1 {
        return None;
    }
    let map = swc_sourcemap::SourceMap::from_slice(out.source_map?.as_bytes()).ok()?;
    let t = map.lookup_token(line.checked_sub(1)?, col.checked_sub(1)?)?;
    Some((t.get_src_line() + 1, t.get_src_col() + 1))
}

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
