//! Page instrumentation: streaming HTML rewriting with lol_html (bootstrap injection, inline
//! scripts, `on*` attributes, `javascript:` URLs, CSP and SRI), character encodings, and the
//! instrumentation cache. JavaScript itself goes through `shepherd-instrument-js`.
//!
//! Entry points for the proxy's rewrite hook:
//! - [`HtmlInstrumenter`]: one per HTML response; `adjust_csp_header` for each CSP header, then
//!   `write` every body chunk and `finish`/`end`.
//! - [`ScriptCache::instrument_script`]: a whole external classic script or module body.
//! - [`ScriptCache::instrument_snippet`]: one piece of dynamic code (the instrument endpoint).
//!
//! For reports: [`inline_code`] finds the inline code of a document again, with the keys its
//! positions carry.
//!
//! What is rewritten in which mode, and why, is in `docs/instrumentation.md`.

mod attrs;
mod cache;
mod csp;
mod encoding;
mod entities;
mod error;
mod gates;
mod html;
mod inline;
mod jspass;
mod mode;
mod prolog;
mod report;
mod response_kind;
mod script_type;

pub use cache::{CacheStats, ScriptCache, ScriptOutput};
pub use csp::{CspChange, CspHeader, adjust_csp_for_runtime};
pub use encoding::{
    DetectedEncoding, EncodingSource, adjust_content_type, charset_label, detect_encoding,
};
pub use error::Error;
pub use gates::HtmlGates;
pub use html::{HtmlConfig, HtmlInstrumenter, RUNTIME_PATH, instrument_html};
pub use inline::{InlineCode, inline_code};
pub use jspass::{Flags, PassFn, original_inline_position, original_position, real_pass};
pub use mode::{Mode, ScriptKind};
pub use report::{Change, Counters, Report};
pub use response_kind::{FetchContext, ResponseKind, classify, is_javascript_mime, mime_essence};
pub use shepherd_instrument_js::{MARKER, PASS_VERSION};
