//! What the instrumenter did to one document: counters and a list of changes a user may need
//! to know about (policy edits, removed attributes, code kept unmodified and why).

use crate::csp::CspChange;
use serde::Serialize;

/// Counts per document (or per process for the cache).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Inline `<script>` elements rewritten.
    pub scripts_instrumented: u64,
    /// Inline JavaScript kept because the JS pass rejected it (parse error, recovered errors…).
    pub scripts_kept_js_error: u64,
    /// Inline scripts with a non-JavaScript `type` (importmap, JSON, templates), left alone.
    pub scripts_not_js: u64,
    /// `on*` attributes rewritten.
    pub handlers_instrumented: u64,
    /// `on*` attributes kept because the JS pass rejected them.
    pub handlers_kept_js_error: u64,
    /// `javascript:` URLs rewritten.
    pub js_urls_instrumented: u64,
    /// `javascript:` URLs kept because the JS pass rejected them.
    pub js_urls_kept_js_error: u64,
    /// Inline code kept because a CSP hash (or a block) depends on its exact bytes.
    pub kept_for_csp: u64,
    /// Inline code kept because it holds a character reference this crate does not decode.
    pub kept_unknown_entity: u64,
    /// Inline code kept because it is non-ASCII in a document whose encoding is only guessed.
    pub kept_uncertain_encoding: u64,
    /// `integrity` attributes removed.
    pub integrity_removed: u64,
    /// Inline code served from the cache.
    pub cache_hits: u64,
}

impl Counters {
    /// Adds `other` (a nested `srcdoc` document's counters) to these.
    pub fn add(&mut self, other: &Counters) {
        self.scripts_instrumented += other.scripts_instrumented;
        self.scripts_kept_js_error += other.scripts_kept_js_error;
        self.scripts_not_js += other.scripts_not_js;
        self.handlers_instrumented += other.handlers_instrumented;
        self.handlers_kept_js_error += other.handlers_kept_js_error;
        self.js_urls_instrumented += other.js_urls_instrumented;
        self.js_urls_kept_js_error += other.js_urls_kept_js_error;
        self.kept_for_csp += other.kept_for_csp;
        self.kept_unknown_entity += other.kept_unknown_entity;
        self.kept_uncertain_encoding += other.kept_uncertain_encoding;
        self.integrity_removed += other.integrity_removed;
        self.cache_hits += other.cache_hits;
    }
}

/// A change a user may want to know about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A CSP header was modified.
    Csp(CspChange),
    /// An `integrity` attribute was removed.
    IntegrityRemoved {
        /// Element (`script` or `link`).
        element: String,
        /// The removed value.
        value: String,
    },
    /// The document was transcoded to UTF-8 (a UTF-8 BOM was written).
    Transcoded {
        /// Original encoding.
        from: String,
    },
    /// The document was passed through unchanged.
    PassedThrough {
        /// Why.
        reason: String,
    },
    /// The rewriter hit its memory limit; the rest of the document is unmodified.
    BailedOut {
        /// The error.
        reason: String,
    },
}

/// Everything the instrumenter did to a document.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// Encoding of the document (WHATWG name).
    pub encoding: String,
    /// New `Content-Type` value when the document was transcoded (None: unchanged).
    pub content_type: Option<String>,
    /// Whether the runtime bootstrap was injected.
    pub injected: bool,
    /// Counters (including those of `srcdoc` documents).
    pub counters: Counters,
    /// `<iframe srcdoc>` documents instrumented.
    pub srcdoc_documents: u64,
    /// Changes.
    pub changes: Vec<Change>,
}
