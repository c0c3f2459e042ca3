//! Names a developer can look for: the trace names DOM nodes by per-document numbers
//! (`DOMNode[19].value`, `INPUT[14].click`, `fire:click @ INPUT[14]`); traces of format 3 also
//! describe each such node once (tag, id, classes, a CSS selector; `docs/trace-format.md`,
//! "Node descriptions"), and reports show `input#coupon.value`,
//! `#todo-list > li:nth-child(1) > input (click listeners)`, `fire:click @ input#coupon`. The
//! raw name stays next to it (two nodes may share a selector at different times; the number
//! tells them apart). Without descriptions (older traces, `ER_actionlog` files) names stay as
//! they are.

use serde::Serialize;
use shepherd_trace::Trace;
use std::collections::HashMap;

/// What the trace says about one node, as reports show it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct NodeView {
    /// The node's number (the `N` of `DOMNode[N]`).
    pub number: u32,
    /// Tag name (`input`), or `#text`, `#comment`, `#document`, `#document-fragment`.
    pub tag: String,
    /// A CSS selector that found the node (for text and comment nodes: their parent) when it
    /// was described; `None` when it was not in the document.
    pub selector: Option<String>,
    /// Its `id` attribute.
    pub id: Option<String>,
    /// Its first classes, space-separated.
    pub classes: Option<String>,
    /// How reports name it: the selector, `document`, or tag, id and classes with
    /// ` (detached)` for a node that was not in the document.
    pub name: String,
}

impl NodeView {
    fn new(
        number: u32,
        tag: String,
        selector: Option<String>,
        id: Option<String>,
        classes: Option<String>,
    ) -> NodeView {
        let name = match (tag.as_str(), &selector) {
            ("#document", _) => "document".to_owned(),
            ("#text" | "#comment", Some(p)) => format!("{p} > {tag}"),
            (t, Some(p)) if !t.starts_with('#') => p.clone(),
            _ => {
                let mut s = tag.clone();
                if let Some(id) = &id {
                    s.push('#');
                    s.push_str(id);
                }
                for c in classes.iter().flat_map(|c| c.split(' ')) {
                    s.push('.');
                    s.push_str(c);
                }
                if !tag.starts_with('#') || tag == "#text" || tag == "#comment" {
                    s.push_str(" (detached)");
                }
                s
            }
        };
        NodeView {
            number,
            tag,
            selector,
            id,
            classes,
            name,
        }
    }
}

/// The node descriptions of one trace, by number.
#[derive(Clone, Debug, Default)]
pub struct NodeNames {
    nodes: HashMap<u32, NodeView>,
}

/// `Class[N]` at the start of `s`: (class, N, the rest after `]`).
fn numbered(s: &str) -> Option<(&str, u32, &str)> {
    let open = s.find('[')?;
    let close = open + s[open..].find(']')?;
    let n = s[open + 1..close].parse().ok()?;
    Some((&s[..open], n, &s[close + 1..]))
}

impl NodeNames {
    /// The descriptions in `trace` (the first one of a node counts).
    pub fn new(trace: &Trace) -> NodeNames {
        let s = |id| trace.strings.get(id).to_owned();
        let mut nodes = HashMap::with_capacity(trace.nodes.len());
        for d in &trace.nodes {
            nodes.entry(d.node).or_insert_with(|| {
                NodeView::new(
                    d.node,
                    s(d.tag),
                    d.path.map(s),
                    d.id.map(s),
                    d.classes.map(s),
                )
            });
        }
        NodeNames { nodes }
    }

    /// True when the trace described no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `n`, when described.
    pub fn node(&self, n: u32) -> Option<&NodeView> {
        self.nodes.get(&n)
    }

    /// Location `loc` as a developer finds it, with the node it names; `None` when it names
    /// no described node (then the raw name is the best there is), except for id-map
    /// entries (`Tree[1]:coupon` → `#coupon (lookup by id)`), which need no description.
    pub fn location(&self, loc: &str) -> Option<(String, Option<&NodeView>)> {
        if let Some(rest) = loc.strip_prefix("Tree[")
            && let Some((_, id)) = rest.split_once("]:")
        {
            return Some((format!("#{id} (lookup by id)"), None));
        }
        if let Some(rest) = loc.strip_prefix("NodeTree:") {
            // `NodeTree:<node>` or, as the analysis renames them, `NodeTree:<node>-<writer>`.
            let n = rest.split('-').next()?.parse().ok()?;
            let v = self.node(n)?;
            return Some((suffixed(v, "", "existence"), Some(v)));
        }
        let (class, n, rest) = numbered(loc)?;
        let v = self.node(n)?;
        let prop = rest.strip_prefix('.')?;
        // `DOMNode[N].p` is a property; `Document[N].cookie` and the document's focus
        // `Document[N].activeElement` too; any other `<Class>[N].type` of a node is the
        // listener list of event `type` (docs/trace-format.md).
        let name = if class == "DOMNode"
            || (class == "Document" && matches!(prop, "cookie" | "activeElement"))
        {
            suffixed(v, &format!(".{prop}"), "")
        } else {
            suffixed(v, "", &format!("{prop} listeners"))
        };
        Some((name, Some(v)))
    }

    /// Scope label `label` with its event target named (`fire:click @ INPUT[14]` →
    /// `fire:click @ input#coupon`), or `None` when it names no described node.
    pub fn label(&self, label: &str) -> Option<String> {
        let (head, target) = split_target(label)?;
        let (_, n, rest) = numbered(target)?;
        if !rest.is_empty() {
            return None;
        }
        Some(format!("{head} @ {}", self.node(n)?.name))
    }
}

/// `label.rsplit_once(" @ ")`, found by its `@`: a string pattern sets up a two-way
/// searcher on each call, and every access of a report asks its scope label once.
fn split_target(label: &str) -> Option<(&str, &str)> {
    let mut end = label.len();
    while let Some(at) = label[..end].rfind('@') {
        if let (Some(head), Some(target)) = (
            label[..at].strip_suffix(' '),
            label[at + 1..].strip_prefix(' '),
        ) {
            return Some((head, target));
        }
        end = at;
    }
    None
}

/// `name` + `prop`, with `what` in parentheses, moving a node's ` (detached)` to the end:
/// `li.done.hidden (detached)`, `li.done (click listeners, detached)`.
fn suffixed(v: &NodeView, prop: &str, what: &str) -> String {
    let (base, detached) = match v.name.strip_suffix(" (detached)") {
        Some(b) => (b, true),
        None => (v.name.as_str(), false),
    };
    let notes: Vec<&str> = [what, if detached { "detached" } else { "" }]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    if notes.is_empty() {
        format!("{base}{prop}")
    } else {
        format!("{base}{prop} ({})", notes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    fn names() -> NodeNames {
        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "script", "s");
        b.end();
        b.node(19, "input", Some("input#coupon"), Some("coupon"), None);
        b.node(
            14,
            "input",
            Some("#todo-list > li:nth-child(1) > input"),
            None,
            Some("toggle"),
        );
        b.node(30, "li", None, Some("x"), Some("done hidden"));
        b.node(1, "#document", None, None, None);
        b.node(40, "#text", Some("p#intro"), None, None);
        b.node(41, "#text", None, None, None);
        b.node(42, "#document-fragment", None, None, None);
        NodeNames::new(&b.finish())
    }

    #[test]
    fn locations_are_named_by_selector() {
        let n = names();
        let name = |loc: &str| n.location(loc).map(|(s, _)| s);
        assert_eq!(
            name("DOMNode[19].value").as_deref(),
            Some("input#coupon.value")
        );
        assert_eq!(
            name("INPUT[14].click").as_deref(),
            Some("#todo-list > li:nth-child(1) > input (click listeners)")
        );
        assert_eq!(
            name("DOMNode[30].className").as_deref(),
            Some("li#x.done.hidden.className (detached)")
        );
        assert_eq!(
            name("LI[30].click").as_deref(),
            Some("li#x.done.hidden (click listeners, detached)")
        );
        assert_eq!(
            name("Document[1].cookie").as_deref(),
            Some("document.cookie")
        );
        assert_eq!(
            name("Document[1].activeElement").as_deref(),
            Some("document.activeElement")
        );
        assert_eq!(
            name("Document[1].click").as_deref(),
            Some("document (click listeners)")
        );
        assert_eq!(
            name("DOMNode[40].data").as_deref(),
            Some("p#intro > #text.data")
        );
        assert_eq!(
            name("DOMNode[41].data").as_deref(),
            Some("#text.data (detached)")
        );
        assert_eq!(
            name("DOMNode[42].x").as_deref(),
            Some("#document-fragment.x")
        );
        assert_eq!(
            name("NodeTree:19-3").as_deref(),
            Some("input#coupon (existence)")
        );
        assert_eq!(
            name("Tree[1]:coupon").as_deref(),
            Some("#coupon (lookup by id)")
        );
        // The node behind the name.
        let (_, v) = n.location("DOMNode[14].checked").unwrap();
        assert_eq!(v.map(|v| v.classes.as_deref()), Some(Some("toggle")));
        // Not nodes, or nodes the trace did not describe: no name.
        for raw in [
            "Global.x",
            "Object[19]x",
            "DOMNode[99].value",
            "XMLHttpRequest[9].readystatechange",
            "Array[19]$LEN",
            "NodeTree:99-1",
            "Timer:3",
            "DOMNode[x].y",
            "DOMNode[19]",
        ] {
            assert_eq!(name(raw), None, "{raw}");
        }
    }

    #[test]
    fn event_targets_in_labels_are_named() {
        let n = names();
        assert_eq!(
            n.label("fire:click @ INPUT[14]").as_deref(),
            Some("fire:click @ #todo-list > li:nth-child(1) > input")
        );
        assert_eq!(
            n.label("fire:DOMContentLoaded @ Document[1]").as_deref(),
            Some("fire:DOMContentLoaded @ document")
        );
        assert_eq!(n.label("fire:load @ Window[0]"), None);
        assert_eq!(n.label("script:inline #1"), None);
        assert_eq!(n.label("fire:click @ INPUT[14]x"), None);
    }

    #[test]
    fn targets_split_as_rsplit_once_does() {
        for label in [
            "fire:click @ INPUT[14]",
            "a @ b @ c",
            " @ @ ",
            "@ x",
            "x @",
            " @",
            "@",
            "",
            "no target",
            "x@y @z",
            "é @ ü @",
            "a  @  b",
        ] {
            assert_eq!(split_target(label), label.rsplit_once(" @ "), "{label:?}");
        }
    }

    #[test]
    fn traces_without_descriptions_keep_raw_names() {
        let n = NodeNames::default();
        assert!(n.is_empty());
        assert_eq!(n.location("DOMNode[19].value"), None);
        assert_eq!(n.label("fire:click @ INPUT[14]"), None);
    }
}
