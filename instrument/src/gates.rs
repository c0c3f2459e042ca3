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
    /// How many resources were made holdable.
    pub count: u64,
}

impl GateState {
    pub fn new(cfg: HtmlGates) -> GateState {
        GateState {
            cfg,
            next: 0,
            in_template: 0,
            count: 0,
        }
    }

    fn number(&mut self) -> u64 {
        self.next += 1;
        self.count += 1;
        self.next
    }

    /// `url` (an attribute value as written, entities and all) with the marker of gate `n`,
    /// as the last parameter of its query (the runtime removes it from what the page reads).
    fn marked(&self, raw: &str, n: u64) -> Option<String> {
        let url = entities::decode_attr(raw).ok()?;
        let trimmed = url.trim();
        if trimmed.is_empty() || trimmed.starts_with("data:") || trimmed.starts_with("blob:") {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{HtmlConfig, instrument_html};
    use crate::mode::Mode;

    const T: &str = "0123456789abcdef0123456789abcdef";

    fn gated(html: &str, scripts: bool, inline: bool, images: bool) -> String {
        let mut cfg = HtmlConfig::new(Mode::Repair, "tok");
        cfg.gates = Some(HtmlGates {
            token: T.into(),
            scripts,
            inline_scripts: inline,
            images,
            hold_point: Arc::new(|n| format!("<HOLD {n}>")),
        });
        let (out, _, _) = instrument_html(html.as_bytes(), cfg, &[]).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn marks_the_parsers_scripts_and_images() {
        let html = concat!(
            "<!doctype html><html><head><script src=\"a.js?v=1&amp;x=2#f\"></script>",
            "<script async src=b.js></script><script>boot()</script>",
            "<script type=module>m()</script><script type=text/template><p></script>",
            "<template><script>t()</script><img src=t.png></template>",
            "<noscript><script>n()</script></noscript>",
            "</head><body><img src=\"i.png\" srcset=\"i1.png 1x, i2.png?q 2x\">",
            "<img loading=lazy src=l.png><svg><script>s()</script></svg>",
            "<script nomodule src=old.js></script></body></html>"
        );
        let out = gated(html, true, true, true);
        assert!(
            out.contains(&format!(
                "src=\"a.js?v=1&amp;x=2&amp;__shepherd_hold={T}.1#f\""
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!("src=\"b.js?__shepherd_hold={T}.2\"")),
            "{out}"
        );
        assert!(
            out.contains("<script __shepherd_hold=\"3\"><HOLD 3>boot()</script>"),
            "{out}"
        );
        assert!(out.contains("<script type=module>m()</script>"), "{out}");
        assert!(
            out.contains("<script type=text/template><p></script>"),
            "{out}"
        );
        assert!(
            out.contains("<template><script>t()</script><img src=t.png></template>"),
            "{out}"
        );
        assert!(
            out.contains("<noscript><script>n()</script></noscript>"),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "src=\"i.png?__shepherd_hold={T}.4\" srcset=\"i1.png?__shepherd_hold={T}.4 1x, i2.png?q&amp;__shepherd_hold={T}.4 2x\""
            )),
            "{out}"
        );
        assert!(out.contains("<img loading=lazy src=l.png>"), "{out}");
        assert!(out.contains("<svg><script>s()</script></svg>"), "{out}");
        assert!(out.contains("<script nomodule src=old.js>"), "{out}");
        // The runtime learns the token from its URL's fragment.
        assert!(out.contains(&format!("m=repair#g={T}\"")), "{out}");
    }

    #[test]
    fn only_what_the_policy_may_postpone() {
        let html = "<script src=a.js></script><script>x()</script><img src=i.png>";
        let out = gated(html, false, true, false);
        assert!(out.contains("<script src=a.js>"), "{out}");
        assert!(out.contains("<HOLD 1>x()"), "{out}");
        assert!(out.contains("<img src=i.png>"), "{out}");
        let out = gated(html, true, false, false);
        assert!(out.contains("<script>x()</script>"), "{out}");
    }
}
