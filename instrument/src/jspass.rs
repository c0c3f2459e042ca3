//! The single place that calls the JavaScript pass, so every caller gets the same options.

use crate::mode::ScriptKind;
use shepherd_instrument_js::{Options, instrument};

/// Output options of the pass (all part of the cache key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Escape non-ASCII (code goes into a non-UTF-8 document).
    pub ascii_only: bool,
    /// Code goes inside `<script>`: escape `</script` and `<!--`.
    pub inline_script: bool,
    /// Produce a source map.
    pub source_map: bool,
}

impl Flags {
    pub(crate) fn key_byte(self) -> u8 {
        u8::from(self.ascii_only)
            | (u8::from(self.inline_script) << 1)
            | (u8::from(self.source_map) << 2)
    }
}

/// A JavaScript pass: source, kind, options and source name to code and optional source map,
/// or the reason the original must be kept. [`real_pass`] is the swc pass; tests substitute a
/// predictable one to pin down what the HTML layer does.
pub type PassFn = fn(&str, ScriptKind, Flags, &str) -> Result<(String, Option<String>), String>;

/// Where `line:col` (1-based) of the code the proxy served for the external script `src`
/// comes from in `src` (`shepherd_instrument_js::original_position`, with the options of an
/// external script: parsed as a classic script, else as a module). `None` when neither pass
/// takes `src` or nothing maps there.
pub fn original_position(src: &str, line: u32, col: u32) -> Option<(u32, u32)> {
    [ScriptKind::Script, ScriptKind::Module]
        .into_iter()
        .find_map(|kind| {
            let opts = Options::new(kind.to_js(), "source.js");
            shepherd_instrument_js::original_position(src, &opts, line, col)
        })
}

/// [`original_position`] for inline code of `kind` as the HTML rewriter passes it to the JS pass
/// (a `<script>` element's text, a handler attribute's body, a `javascript:` URL's):
/// [`crate::InlineCode`] gives the text and the kind.
pub fn original_inline_position(
    src: &str,
    kind: ScriptKind,
    line: u32,
    col: u32,
) -> Option<(u32, u32)> {
    let mut opts = Options::new(kind.to_js(), "source.js");
    opts.inline_script = matches!(kind, ScriptKind::Script | ScriptKind::Module);
    shepherd_instrument_js::original_position(src, &opts, line, col)
}

/// The real pass (`shepherd-instrument-js`). `source_name` must not be document-specific when
/// the result is cached.
pub fn real_pass(
    src: &str,
    kind: ScriptKind,
    flags: Flags,
    source_name: &str,
) -> Result<(String, Option<String>), String> {
    let mut opts = Options::new(kind.to_js(), source_name);
    opts.ascii_only = flags.ascii_only;
    opts.inline_script = flags.inline_script;
    opts.source_map = flags.source_map;
    match instrument(src, &opts) {
        Ok(out) => Ok((out.code, out.source_map)),
        Err(e) => Err(e.to_string()),
    }
}
