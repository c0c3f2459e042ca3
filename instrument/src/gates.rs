//! Parser gates (repair mode): the parser's own resources that a repair policy may postpone
//! are made holdable in the document as it streams. External scripts and images get the
//! document's hold marker in their URL (`__shepherd_hold=TOKEN.N`, held by the proxy until the
//! page releases `N`); an inline classic script gets its number as the attribute
//! `__shepherd_hold` and a hold point right after its start tag, where the proxy stops the
//! document until the page releases it. The runtime (`runtime-js/gates.js`) learns the token
//! from the fragment of its own URL, sees each element as the parser inserts it, removes the
//! attribute, hides the markers from the page and releases each number when the rules allow.
//!
//! Only what the browser runs from this document is gated: not the contents of `<template>`
//! (not in the document), `<noscript>` (text when scripts run), foreign content (SVG
//! scripts), inline modules (deferred by the browser), `nomodule` scripts (never fetched),
//! lazily loaded images (fetched only when shown) and scripts of another type.

use crate::entities;
use crate::mode::ScriptKind;
use crate::script_type::script_kind;
use lol_html::html_content::ContentType;
use lol_html::send::Element;
use std::sync::Arc;

/// The attribute that numbers an inline script's gate.
pub const GATE_ATTR: &str = "__shepherd_hold";
/// The query parameter that marks a URL to hold.
pub const GATE_PARAM: &str = "__shepherd_hold";

/// What of the parser's resources to make holdable in one document, and how.
#[derive(Clone)]
pub struct HtmlGates {
    /// The document's hold token (32 hex digits, drawn by the proxy for this response).
    pub token: String,
    /// `<script src>`.
    pub scripts: bool,
    /// Inline classic `<script>`.
    pub inline_scripts: bool,
    /// `<img src>` / `srcset`.
    pub images: bool,
    /// The bytes that stop the document until release `n` (the proxy's hold point).
    pub hold_point: Arc<dyn Fn(u64) -> String + Send + Sync>,
}

impl std::fmt::Debug for HtmlGates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HtmlGates")
            .field("scripts", &self.scripts)
            .field("inline_scripts", &self.inline_scripts)
            .field("images", &self.images)
            .finish_non_exhaustive()
    }
}

impl HtmlGates {
    /// Whether anything is gated.
    pub fn any(&self) -> bool {
        self.scripts || self.inline_scripts || self.images
    }
}

/// The gates of one document as it streams.
#[derive(Debug)]
pub(crate) struct GateState {
    pub cfg: HtmlGates,
    /// The last number given.
    next: u64,
    /// `<template>` elements open around the current position.
    pub in_template: u32,
}

impl GateState {
    pub fn new(cfg: HtmlGates) -> GateState {
        GateState {
            cfg,
            next: 0,
            in_template: 0,
        }
    }

    fn number(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// `url` (an attribute value as written, entities and all) with the marker of gate `n`,
    /// as the last parameter of its query (the runtime removes it from what the page reads).
    /// None for a URL the proxy never sees (`data:`, `blob:`, any scheme but HTTP's), where a
    /// marker would only change what the URL is (a `data:` script's source).
    fn marked(&self, raw: &str, n: u64) -> Option<String> {
        let url = entities::decode_attr(raw).ok()?;
        let trimmed = url.trim();
        if trimmed.is_empty() || !fetched_over_http(trimmed) {
            return None;
        }
        let (base, frag) = match trimmed.find('#') {
            Some(i) => trimmed.split_at(i),
            None => (trimmed, ""),
        };
        let sep = if base.contains('?') { '&' } else { '?' };
        let out = format!("{base}{sep}{GATE_PARAM}={}.{n}{frag}", self.cfg.token);
        Some(entities::encode_attr_amp(&out))
    }

    /// A script start tag: an external script's URL marked, or an inline one numbered and
    /// the document stopped after its start tag.
    pub fn script(&mut self, el: &mut Element<'_, '_>) {
        if self.in_template > 0 || el.namespace_uri() != "http://www.w3.org/1999/xhtml" {
            return;
        }
        let decoded = |n: &str| {
            el.get_attribute(n)
                .map(|v| entities::decode_attr(&v).unwrap_or(v))
        };
        let Some(kind) = script_kind(decoded("type").as_deref(), decoded("language").as_deref())
        else {
            return;
        };
        if el.has_attribute("nomodule") {
            return;
        }
        match el.get_attribute("src") {
            // The runtime itself (injected into the stream before the rewriter sees it).
            Some(raw) if raw.starts_with("/__shepherd/") => {}
            // A module's URL is its identity: under a marked URL it would be a second module,
            // evaluated again when another module imports it by its own URL (a bundle's lazy
            // chunks import the entry chunk), so external modules are not gated.
            Some(_) if kind == ScriptKind::Module => {}
            Some(raw) if self.cfg.scripts => {
                let n = self.next + 1;
                if let Some(v) = self.marked(&raw, n)
                    && el.set_attribute("src", &v).is_ok()
                {
                    self.number();
                }
            }
            Some(_) => {}
            None if self.cfg.inline_scripts && kind == ScriptKind::Script => {
                if !el.can_have_content() {
                    return;
                }
                let n = self.number();
                if el.set_attribute(GATE_ATTR, &n.to_string()).is_ok() {
                    el.prepend(&(self.cfg.hold_point)(n), ContentType::Html);
                }
            }
            None => {}
        }
    }

    /// An image: `src` and every `srcset` candidate marked with one number.
    pub fn image(&mut self, el: &mut Element<'_, '_>) {
        if self.in_template > 0 || !self.cfg.images {
            return;
        }
        if el
            .get_attribute("loading")
            .is_some_and(|l| l.trim().eq_ignore_ascii_case("lazy"))
        {
            return;
        }
        let n = self.next + 1;
        let mut done = false;
        if let Some(raw) = el.get_attribute("src")
            && let Some(v) = self.marked(&raw, n)
        {
            done |= el.set_attribute("src", &v).is_ok();
        }
        if let Some(raw) = el.get_attribute("srcset")
            && let Ok(set) = entities::decode_attr(&raw)
        {
            let candidates: Vec<String> = set
                .split(',')
                .map(|c| {
                    let c = c.trim();
                    let (url, desc) = c.split_once(char::is_whitespace).unwrap_or((c, ""));
                    match self.marked(&entities::encode_attr_amp(url), n) {
                        Some(m) => {
                            let m = entities::decode_attr(&m).unwrap_or(m);
                            format!("{m} {desc}").trim_end().to_string()
                        }
                        None => c.to_string(),
                    }
                })
                .collect();
            done |= el
                .set_attribute("srcset", &entities::encode_attr_amp(&candidates.join(", ")))
                .is_ok();
        }
        if done {
            self.number();
        }
    }
}

/// Whether `url` (trimmed, relative or absolute) is fetched over HTTP(S): relative URLs are
/// (they take the document's scheme, and only HTTP documents are rewritten); an absolute one
/// only when its scheme, compared without case as URL schemes are, is `http` or `https`.
fn fetched_over_http(url: &str) -> bool {
    let Some(colon) = url.find(':') else {
        return true;
    };
    let scheme = &url[..colon];
    let is_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    !is_scheme || scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
}
