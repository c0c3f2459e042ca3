//! The recorded HTML document as the explorer cuts it: where parsing can be paused, and what
//! lies between two such points.
//!
//! The replay proxy holds a document in parts and releases them one by one, so the explorer
//! decides how far the parser has got. A part ends before every `<script>` start tag (a script
//! is a step of its own), after the end tag of every script that runs whenever it has loaded
//! (`async`, `defer`: it may run before the markup after it), and right after the start tag of
//! every element a recorded gesture targets (so the gesture can run as soon as its target exists, before whatever the parser
//! meets next). The cut points are found by an HTML tokenizer (lol_html), so a `<script` inside
//! a comment, an attribute or another script's text is not taken for a tag.
//!
//! The same structure answers how likely an order is that needs the user (or another event)
//! to act between two points of one document: a parser-blocking external script or a style
//! sheet between them makes the parser wait for the network; other markup only lets the
//! parser yield inside one received chunk (possible, unlikely); nothing but white space,
//! comments and end tags leaves no room at all.

use lol_html::{HtmlRewriter, Settings, element};
use std::cell::RefCell;
use std::ops::Range;
use std::rc::Rc;

/// One start tag of the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// Lowercase tag name.
    pub name: String,
    /// Byte range of the start tag in the document.
    pub range: Range<usize>,
    /// A `<script src>` without `async`, `defer` or `type=module`: the parser waits for it.
    pub blocking_script: bool,
    /// A `<script>` of any kind.
    pub script: bool,
    /// A `<link rel=stylesheet>` (scripts after it wait for it).
    pub stylesheet: bool,
    /// For a script that runs whenever it has loaded (`async`, `defer`, modules with a `src`):
    /// the end of its end tag. The document is cut there too, so that it can run before the
    /// markup after it is parsed.
    pub loose_end: Option<usize>,
}

/// The structure of one document: its start tags, and which recorded targets matched where.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    /// Length in bytes.
    pub len: usize,
    /// Every start tag, in document order.
    pub tags: Vec<Tag>,
    /// For each target selector asked about: the end of the first start tag it matched.
    pub targets: Vec<Option<usize>>,
}

/// Why nothing can happen between two points of a document, or what makes room for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gap {
    /// A parser-blocking script or a style sheet lies between: the parser waits for the
    /// network there.
    Network,
    /// Other markup lies between: only a parser yield inside one received chunk makes room.
    Markup,
    /// Nothing but white space, comments and end tags: the parser goes straight on.
    Nothing,
}

impl Document {
    /// Reads `html`, and for each of `selectors` (CSS, as lol_html understands them) where the
    /// first element it matches ends its start tag. A document lol_html cannot read yields the
    /// tags found up to the error.
    pub fn parse(html: &[u8], selectors: &[String]) -> Document {
        let tags = Rc::new(RefCell::new(Vec::<Tag>::new()));
        let targets = Rc::new(RefCell::new(vec![None; selectors.len()]));
        let mut handlers = Vec::new();
        {
            let tags = tags.clone();
            handlers.push(element!(
                "*",
                move |el: &mut lol_html::html_content::Element<'_, '_>| {
                    let name = el.tag_name();
                    let range = el.source_location().bytes();
                    let attr = |a: &str| el.get_attribute(a);
                    let script = name == "script";
                    let module =
                        attr("type").is_some_and(|t| t.trim().eq_ignore_ascii_case("module"));
                    let blocking_script = script
                        && attr("src").is_some()
                        && attr("async").is_none()
                        && attr("defer").is_none()
                        && !module;
                    let stylesheet = name == "link"
                        && attr("rel").is_some_and(|r| {
                            r.split_ascii_whitespace()
                                .any(|w| w.eq_ignore_ascii_case("stylesheet"))
                        });
                    let loose = script && attr("src").is_some() && !blocking_script;
                    let index = {
                        let mut t = tags.borrow_mut();
                        t.push(Tag {
                            name,
                            range,
                            blocking_script,
                            script,
                            stylesheet,
                            loose_end: None,
                        });
                        t.len() - 1
                    };
                    if loose && let Some(handlers) = el.end_tag_handlers() {
                        let tags = tags.clone();
                        handlers.push(Box::new(move |end| {
                            if let Some(t) = tags.borrow_mut().get_mut(index) {
                                t.loose_end = Some(end.source_location().bytes().end);
                            }
                            Ok(())
                        }));
                    }
                    Ok(())
                }
            ));
        }
        for (k, sel) in selectors.iter().enumerate() {
            // A selector lol_html does not support matches nothing (the gesture still runs
            // once its part is released, only not sooner).
            if sel.parse::<lol_html::Selector>().is_err() {
                continue;
            }
            let targets = targets.clone();
            handlers.push(element!(sel.as_str(), move |el| {
                // The document's own frame exists before anything a user can act on: a cut
                // right after `<body>` gains nothing, and a part that ends there can keep
                // Chromium from running the head's scripts until more of the body arrives.
                if matches!(el.tag_name().as_str(), "html" | "head" | "body") {
                    return Ok(());
                }
                let mut t = targets.borrow_mut();
                if let Some(slot) = t.get_mut(k)
                    && slot.is_none()
                {
                    *slot = Some(el.source_location().bytes().end);
                }
                Ok(())
            }));
        }
        // Ambiguous markup is guessed at rather than stopping the tokenizer.
        let mut settings = Settings::new().with_strict(false);
        for h in handlers {
            settings = settings.append_element_content_handler(h);
        }
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        // An error stops the tokenizer; what it found so far stands.
        if rewriter.write(html).is_ok() {
            let _ = rewriter.end();
        }
        let tags = tags.borrow().clone();
        let targets = targets.borrow().clone();
        Document {
            len: html.len(),
            tags,
            targets,
        }
    }

    /// Where the replay proxy cuts the document: before every script start tag and after
    /// every matched target's start tag, sorted, without 0 or the end.
    pub fn cuts(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .tags
            .iter()
            .filter(|t| t.script)
            .map(|t| t.range.start)
            .chain(self.tags.iter().filter_map(|t| t.loose_end))
            .chain(self.targets.iter().flatten().copied())
            .filter(|&c| c > 0 && c < self.len)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The parts the document is cut into, as byte ranges.
    pub fn parts(&self) -> Vec<Range<usize>> {
        let mut bounds = vec![0];
        bounds.extend(self.cuts());
        bounds.push(self.len);
        bounds.windows(2).map(|w| w[0]..w[1]).collect()
    }

    /// What lies between byte `from` and byte `to` (`from < to`): a parser-blocking script
    /// or style sheet, other start tags, or nothing.
    pub fn gap(&self, from: usize, to: usize) -> Gap {
        let mut markup = false;
        for t in &self.tags {
            if t.range.start < from || t.range.start >= to {
                continue;
            }
            if t.blocking_script || t.stylesheet {
                return Gap::Network;
            }
            markup = true;
        }
        if markup { Gap::Markup } else { Gap::Nothing }
    }
}

/// A CSS selector lol_html understands for a gesture target's selector
/// ([`crate::gesture::selector`]): `:root` is the `html` element.
pub fn streaming_selector(sel: &str) -> String {
    match sel.strip_prefix(":root") {
        Some(rest) => format!("html{rest}"),
        None => sel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG1: &str = r#"<html><body>
<input type="button" id="b1" onclick="f()">
<p>many</p><p>more</p>
<script>function f() {}</script>
<script>var init = true;</script>
<!-- <script>not a tag</script> -->
<input id="late"><script>late.value = 'x'</script>
<script src="slow.js"></script><button id="b2">
<script src="a.js" async></script>
</body></html>"#;

    #[test]
    fn cuts_before_scripts_and_after_targets() {
        let doc = Document::parse(
            FIG1.as_bytes(),
            &[
                "[id=\"b1\"]".into(),
                "[id=\"b2\"]".into(),
                "[id=\"none\"]".into(),
            ],
        );
        let scripts: Vec<usize> = FIG1.match_indices("<script").map(|(i, _)| i).collect();
        // The commented-out tag is no cut.
        let commented = FIG1.find("<!-- <script").unwrap() + 5;
        assert!(!doc.cuts().contains(&commented));
        let b1_end = FIG1.find("onclick=\"f()\">").unwrap() + "onclick=\"f()\">".len();
        assert_eq!(doc.targets[0], Some(b1_end));
        assert_eq!(doc.targets[2], None);
        assert!(doc.cuts().contains(&b1_end));
        for s in scripts.iter().filter(|&&s| s != commented) {
            assert!(doc.cuts().contains(s), "no cut before the script at {s}");
        }
        // An async script may run before the markup after it: a cut after its end tag.
        let async_end = FIG1.find("async></script>").unwrap() + "async></script>".len();
        assert!(doc.cuts().contains(&async_end));
        let slow_end = FIG1.find("slow.js\"></script>").unwrap() + "slow.js\"></script>".len();
        assert!(
            !doc.cuts().contains(&slow_end),
            "a blocking script needs no cut after it"
        );
        let parts = doc.parts();
        assert_eq!(parts.first().map(|r| r.start), Some(0));
        assert_eq!(parts.last().map(|r| r.end), Some(FIG1.len()));
    }

    #[test]
    fn gaps() {
        let doc = Document::parse(FIG1.as_bytes(), &["[id=\"b1\"]".into()]);
        let b1_end = doc.targets[0].unwrap();
        let f_script = FIG1.find("<script>function").unwrap();
        assert_eq!(doc.gap(b1_end, f_script), Gap::Markup);
        let late_end = FIG1.find("<input id=\"late\">").unwrap() + "<input id=\"late\">".len();
        let late_script = FIG1.find("<script>late").unwrap();
        assert_eq!(doc.gap(late_end, late_script), Gap::Nothing);
        let b2 = FIG1.find("<button").unwrap();
        assert_eq!(doc.gap(late_end, b2), Gap::Network);
    }

    #[test]
    fn root_selectors_stream() {
        assert_eq!(
            streaming_selector(":root>body:nth-child(2)>button:nth-child(1)"),
            "html>body:nth-child(2)>button:nth-child(1)"
        );
        let html = "<html><head></head><body><button>a</button></body></html>";
        let doc = Document::parse(
            html.as_bytes(),
            &[streaming_selector(
                ":root>body:nth-child(2)>button:nth-child(1)",
            )],
        );
        assert_eq!(doc.targets[0], Some(html.find(">a<").unwrap() + 1));
    }
}
