//! What the exercise may act on: every element with a handler (listeners, `on*` attributes),
//! every text field and every element whose click does something without a listener, each
//! with the actions it supports.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use shepherd_browser::{Page, Result};

/// Listener types a click sequence (over, down, up, click) reaches.
const MOUSE_CLICK_TYPES: &[&str] = &[
    "click",
    "dblclick",
    "mousedown",
    "mouseup",
    "pointerdown",
    "pointerup",
    "auxclick",
    "contextmenu",
    "touchstart",
    "touchend",
];
/// Listener types moving the mouse onto an element reaches.
const MOUSE_HOVER_TYPES: &[&str] = &[
    "mouseover",
    "mouseout",
    "mouseenter",
    "mouseleave",
    "mousemove",
    "pointerover",
    "pointerout",
    "pointerenter",
    "pointerleave",
    "pointermove",
];
/// Listener types key presses on the focused element reach.
const KEY_TYPES: &[&str] = &[
    "keydown",
    "keyup",
    "keypress",
    "input",
    "beforeinput",
    "change",
];
/// Listener types focusing an element reaches.
const FOCUS_TYPES: &[&str] = &["focus", "blur", "focusin", "focusout"];

/// What the exercise does to a candidate (see the crate docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Action {
    Hover,
    Click,
    Keys,
    Type,
    Focus,
}

impl Action {
    /// Log entries the action needs at least (focus + keys for key actions; typing is cut to
    /// the remaining budget).
    pub(crate) fn cost(self, page_level: bool) -> usize {
        let focus = usize::from(!page_level);
        match self {
            Action::Hover | Action::Focus => 1,
            Action::Keys | Action::Type => 2 + focus,
            Action::Click => 3,
        }
    }
}

#[derive(Debug, Clone)]
struct NodeInfo {
    desc: String,
    path: String,
    text_field: bool,
    /// A click does something even without a listener (link, button, label, …).
    clickable: bool,
    page_level: bool,
    types: BTreeSet<String>,
}

/// One thing the exercise may do; `node: None` is the page as a whole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Candidate {
    pub(crate) node: Option<i64>,
    pub(crate) action: Action,
    pub(crate) desc: String,
    pub(crate) path: String,
}

/// Candidates of one scan, sorted for reproducibility.
pub(crate) type Candidates = Vec<Candidate>;

/// Find elements with handlers and text fields, and the actions each supports.
pub(crate) async fn scan(page: &Page) -> Result<Candidates> {
    let doc = page
        .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }))
        .await?;
    let mut nodes: BTreeMap<i64, NodeInfo> = BTreeMap::new();
    if let Some(root) = doc.get("root") {
        collect_nodes(root, &mut nodes);
    }
    let mut page_types: BTreeSet<String> = BTreeSet::new();
    for (expr, depth) in [("document", -1), ("window", 0)] {
        let obj = page
            .call(
                "Runtime.evaluate",
                json!({ "expression": expr, "objectGroup": "shepherd-exerciser" }),
            )
            .await?;
        let Some(object_id) = obj
            .get("result")
            .and_then(|r| r.get("objectId"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let listeners = page
            .call(
                "DOMDebugger.getEventListeners",
                json!({ "objectId": object_id, "depth": depth, "pierce": true }),
            )
            .await?;
        for l in listeners
            .get("listeners")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(ty) = l.get("type").and_then(Value::as_str) else {
                continue;
            };
            match l
                .get("backendNodeId")
                .and_then(Value::as_i64)
                .and_then(|id| nodes.get_mut(&id))
            {
                Some(info) if !info.page_level => {
                    info.types.insert(ty.to_string());
                }
                _ => {
                    page_types.insert(ty.to_string());
                }
            }
        }
    }
    let _ = page
        .call(
            "Runtime.releaseObjectGroup",
            json!({ "objectGroup": "shepherd-exerciser" }),
        )
        .await;
    let has = |types: &BTreeSet<String>, list: &[&str]| list.iter().any(|t| types.contains(*t));
    let mut out: Candidates = Vec::new();
    for (id, info) in &nodes {
        if info.page_level {
            continue;
        }
        let t = &info.types;
        let mut add = |action| {
            out.push(Candidate {
                node: Some(*id),
                action,
                desc: info.desc.clone(),
                path: info.path.clone(),
            })
        };
        if has(t, MOUSE_HOVER_TYPES) || has(t, MOUSE_CLICK_TYPES) {
            add(Action::Hover);
        }
        if has(t, MOUSE_CLICK_TYPES) || info.clickable {
            add(Action::Click);
        }
        if info.text_field {
            add(Action::Type);
        } else if has(t, KEY_TYPES) {
            add(Action::Keys);
        }
        if has(t, FOCUS_TYPES) {
            add(Action::Focus);
        }
    }
    if has(&page_types, &["keydown", "keyup", "keypress"]) {
        out.push(Candidate {
            node: None,
            action: Action::Keys,
            desc: "page".to_string(),
            path: String::new(),
        });
    }
    out.sort();
    Ok(out)
}

/// Record element nodes with their path, description, `on*` attributes and field kind.
fn collect_nodes(root: &Value, out: &mut BTreeMap<i64, NodeInfo>) {
    shepherd_browser::visit_elements(root, &mut |node, path| {
        let Some(id) = node.get("backendNodeId").and_then(Value::as_i64) else {
            return;
        };
        let name = node
            .get("localName")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let attrs: Vec<&str> = node
            .get("attributes")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut types = BTreeSet::new();
        let mut attr = BTreeMap::new();
        for pair in attrs.chunks(2) {
            let key = pair[0].to_ascii_lowercase();
            let value = pair.get(1).copied().unwrap_or("");
            if let Some(ty) = key.strip_prefix("on")
                && !ty.is_empty()
            {
                types.insert(ty.to_string());
            }
            attr.insert(key, value);
        }
        let input_type = attr
            .get("type")
            .map(|t| t.to_ascii_lowercase())
            .unwrap_or_default();
        let disabled = attr.contains_key("disabled");
        let text_field = match name.as_str() {
            "textarea" => true,
            "input" => matches!(
                input_type.as_str(),
                "" | "text" | "search" | "email" | "url" | "tel" | "password" | "number"
            ),
            _ => attr.get("contenteditable").is_some_and(|v| *v != "false"),
        } && !disabled
            && !attr.contains_key("readonly");
        let clickable = !disabled
            && match name.as_str() {
                "a" | "area" => attr.contains_key("href"),
                "button" | "summary" => true,
                "input" => matches!(
                    input_type.as_str(),
                    "submit" | "reset" | "image" | "button" | "checkbox" | "radio"
                ),
                "label" => attr.contains_key("for") || has_labelable_descendant(node),
                _ => false,
            };
        let mut desc = name.clone();
        if let Some(i) = attr.get("id").filter(|i| !i.is_empty()) {
            desc.push('#');
            desc.push_str(i);
        }
        if let Some(c) = attr.get("class") {
            for class in c.split_whitespace().take(3) {
                desc.push('.');
                desc.push_str(class);
            }
        }
        out.insert(
            id,
            NodeInfo {
                desc,
                path: path.to_string(),
                text_field,
                clickable,
                page_level: matches!(name.as_str(), "html" | "body"),
                types,
            },
        );
    });
}

/// Whether a `DOM.getDocument` element has an input, select, textarea or button inside (a
/// label without `for` labels the first of them).
fn has_labelable_descendant(node: &Value) -> bool {
    node.get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| {
            matches!(
                c.get("localName").and_then(Value::as_str),
                Some("input" | "select" | "textarea" | "button")
            ) || has_labelable_descendant(c)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_that_act_when_clicked() {
        let tree = json!({
            "nodeType": 9, "backendNodeId": 1, "children": [
                {"nodeType": 1, "backendNodeId": 2, "localName": "a", "attributes": ["href", "javascript:go()"]},
                {"nodeType": 1, "backendNodeId": 3, "localName": "a", "attributes": ["name", "anchor"]},
                {"nodeType": 1, "backendNodeId": 4, "localName": "button", "attributes": ["disabled", ""]},
                {"nodeType": 1, "backendNodeId": 5, "localName": "input", "attributes": ["type", "SUBMIT"]},
                {"nodeType": 1, "backendNodeId": 6, "localName": "label", "attributes": ["for", "x"]},
                {"nodeType": 1, "backendNodeId": 7, "localName": "label", "attributes": [], "children": [
                    {"nodeType": 1, "backendNodeId": 8, "localName": "span", "attributes": [], "children": [
                        {"nodeType": 1, "backendNodeId": 9, "localName": "input", "attributes": ["type", "radio"]}
                    ]}
                ]},
                {"nodeType": 1, "backendNodeId": 10, "localName": "label", "attributes": []},
                {"nodeType": 1, "backendNodeId": 11, "localName": "summary", "attributes": []},
                {"nodeType": 1, "backendNodeId": 12, "localName": "area", "attributes": ["href", "/x"]}
            ]
        });
        let mut nodes = BTreeMap::new();
        collect_nodes(&tree, &mut nodes);
        let clickable: Vec<i64> = nodes
            .iter()
            .filter(|(_, n)| n.clickable)
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(clickable, vec![2, 5, 6, 7, 9, 11, 12]);
    }

    #[test]
    fn collects_on_attributes_fields_and_descriptions() {
        let tree = json!({
            "nodeType": 9, "backendNodeId": 1, "children": [
                {"nodeType": 1, "backendNodeId": 2, "localName": "body", "attributes": ["onload", "f()"], "children": [
                    {"nodeType": 1, "backendNodeId": 3, "localName": "div",
                     "attributes": ["id", "a", "class", "x y", "onClick", "go()"]},
                    {"nodeType": 1, "backendNodeId": 4, "localName": "input", "attributes": ["type", "checkbox"]},
                    {"nodeType": 1, "backendNodeId": 5, "localName": "input", "attributes": []},
                    {"nodeType": 1, "backendNodeId": 6, "localName": "iframe", "attributes": [],
                     "contentDocument": {"nodeType": 9, "backendNodeId": 7, "children": [
                        {"nodeType": 1, "backendNodeId": 8, "localName": "textarea", "attributes": ["disabled", ""]}
                     ]}}
                ]}
            ]
        });
        let mut nodes = BTreeMap::new();
        collect_nodes(&tree, &mut nodes);
        assert!(!nodes.contains_key(&1));
        assert!(nodes[&2].page_level);
        assert_eq!(nodes[&3].desc, "div#a.x.y");
        assert_eq!(nodes[&3].path, "/body[1]/div[1]");
        assert_eq!(nodes[&8].path, "/body[1]/iframe[1]/#document/textarea[1]");
        assert!(nodes[&3].types.contains("click"));
        assert!(!nodes[&3].clickable, "a div does nothing on its own");
        assert!(nodes[&4].clickable, "a checkbox toggles");
        assert!(!nodes[&5].clickable, "a text field is typed into");
        assert!(!nodes[&4].text_field);
        assert!(nodes[&5].text_field);
        assert!(nodes.contains_key(&8) && !nodes[&8].text_field);
    }
}
