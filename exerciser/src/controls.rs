//! What the exercise acts on: every visible, enabled control of the page and every element with
//! a handler, each with the gestures a user makes on it (module docs of the crate).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};
use shepherd_browser::{Page, Result};

use crate::gesture::{Gesture, TextKind};

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
/// Roles of elements that act as controls without being form elements (event delegation
/// gives them no listener of their own).
const CONTROL_ROLES: &[&str] = &[
    "button",
    "link",
    "tab",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "switch",
    "checkbox",
    "radio",
    "treeitem",
];
/// The name of Shepherd's runtime's own root listener (docs/runtime-api.md): it listens to
/// every event type on the window, so it is no sign of a page-level key handler.
const RUNTIME_ROOT_LISTENER: &str = "function rootListener(";

/// What a control is, for the gestures it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not a control: an element with handlers only.
    None,
    Link,
    Button,
    Check,
    Select,
    Text(TextKind),
    Range,
    /// Other inputs (file, colour, dates): clicked.
    Input,
    Label,
}

#[derive(Debug, Clone)]
struct NodeInfo {
    /// Position in document order (the `DOM.getDocument` tree walked depth first, a shadow
    /// root after its host's children, a frame's document in its frame element's place).
    order: usize,
    desc: String,
    path: String,
    kind: Kind,
    /// `size` > 1 or `multiple`: a list box whose options are laid out in the page.
    listbox: bool,
    focusable: bool,
    disabled: bool,
    page_level: bool,
    option_of: Option<i64>,
    types: BTreeSet<String>,
}

/// A control (or handler element) found by a scan, with the gestures it gets.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    pub(crate) node: i64,
    pub(crate) desc: String,
    pub(crate) path: String,
    /// What it gets, its kind's own gestures first (the exercise starts a control with the
    /// first), then those its listeners add (keys, a hover, focus and blur).
    pub(crate) gestures: Vec<Gesture>,
    pub(crate) text: TextKind,
    pub(crate) range: bool,
    /// A list box's visible options (backend ids), in document order.
    pub(crate) options: Vec<i64>,
}

/// One scan of the page.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    /// Visible, enabled controls and handler elements, in document order: the seeded choices
    /// index this list, so its order must not depend on when Chromium numbered the nodes.
    pub(crate) controls: Vec<Control>,
    /// The page has key listeners of its own on the window, document, `<html>` or `<body>`.
    pub(crate) page_keys: bool,
    /// Parent of each element (backend ids, through shadow roots and frames): what a hit test
    /// at a control's centre may find.
    pub(crate) parents: HashMap<i64, i64>,
    /// Path and description of every element, for log entries on options.
    pub(crate) names: HashMap<i64, (String, String)>,
}

impl Scan {
    /// Whether `hit` is `node` or inside it.
    pub(crate) fn within(&self, node: i64, hit: i64) -> bool {
        let mut n = hit;
        for _ in 0..256 {
            if n == node {
                return true;
            }
            match self.parents.get(&n) {
                Some(&p) => n = p,
                None => return false,
            }
        }
        false
    }
}

/// Finds the controls of `page`: the DOM (through shadow roots and same-process frames), the
/// listeners DevTools reports, and which elements are laid out and visible.
pub(crate) async fn scan(page: &Page) -> Result<Scan> {
    let doc = page
        .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }))
        .await?;
    let mut nodes: BTreeMap<i64, NodeInfo> = BTreeMap::new();
    let mut parents = HashMap::new();
    if let Some(root) = doc.get("root") {
        collect(
            root,
            "",
            None,
            Inherited::default(),
            &mut nodes,
            &mut parents,
        );
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
            let runtime = l
                .pointer("/handler/description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.starts_with(RUNTIME_ROOT_LISTENER));
            if runtime {
                continue;
            }
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
    let in_order = document_order(&nodes);
    let boxes = layout(page).await;
    let has = |types: &BTreeSet<String>, list: &[&str]| list.iter().any(|t| types.contains(*t));
    let page_focus = has(&page_types, FOCUS_TYPES);
    let visible = |id: i64| {
        boxes
            .as_ref()
            .is_none_or(|b| b.get(&id).is_some_and(|v| v.0))
    };
    let pointer = |id: i64| {
        boxes
            .as_ref()
            .is_none_or(|b| b.get(&id).is_some_and(|v| v.1))
    };
    let mut options: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &(id, info) in &in_order {
        if let Some(select) = info.option_of
            && !info.disabled
            && visible(id)
        {
            options.entry(select).or_default().push(id);
        }
    }
    let mut controls = Vec::new();
    for &(id, info) in &in_order {
        if info.page_level || info.disabled || !visible(id) {
            continue;
        }
        let t = &info.types;
        let mut g = Vec::new();
        match info.kind {
            Kind::Link | Kind::Button => g.extend([Gesture::Click, Gesture::KeyActivate]),
            Kind::Check => g.extend([Gesture::Click, Gesture::KeyToggle]),
            Kind::Select => g.extend([Gesture::KeyChoose, Gesture::PointerChoose]),
            Kind::Text(_) => g.push(Gesture::Type),
            Kind::Range => g.extend([Gesture::Click, Gesture::Keys]),
            Kind::Input | Kind::Label => g.push(Gesture::Click),
            Kind::None => {}
        }
        if has(t, MOUSE_CLICK_TYPES) && !g.contains(&Gesture::Click) {
            g.push(Gesture::Click);
        }
        if has(t, KEY_TYPES) && !g.iter().any(|x| key_gesture(*x)) {
            g.push(Gesture::Keys);
        }
        if has(t, MOUSE_HOVER_TYPES) || has(t, MOUSE_CLICK_TYPES) {
            g.push(Gesture::Hover);
        }
        if has(t, FOCUS_TYPES) || (page_focus && info.focusable && info.kind != Kind::None) {
            g.push(Gesture::FocusBlur);
        }
        if !pointer(id) {
            // `pointer-events: none`: the pointer goes through it; the keyboard still reaches it.
            g.retain(|x| !x.pointer());
            if let Kind::Text(_) = info.kind {
                g.push(Gesture::Keys);
            }
        }
        if g.is_empty() {
            continue;
        }
        // Without duplicates, in the order pushed: the kind's own gestures first (the
        // exercise starts a control with its first gesture).
        let mut seen = BTreeSet::new();
        g.retain(|x| seen.insert(*x));
        let (text, range) = match info.kind {
            Kind::Text(k) => (k, false),
            Kind::Range => (TextKind::Free, true),
            _ => (TextKind::Free, false),
        };
        controls.push(Control {
            node: id,
            desc: info.desc.clone(),
            path: info.path.clone(),
            gestures: g,
            text,
            range,
            options: if info.listbox {
                options.get(&id).cloned().unwrap_or_default()
            } else {
                Vec::new()
            },
        });
    }
    let names = nodes
        .iter()
        .map(|(id, n)| (*id, (n.path.clone(), n.desc.clone())))
        .collect();
    Ok(Scan {
        controls,
        page_keys: has(&page_types, &["keydown", "keyup", "keypress"]),
        parents,
        names,
    })
}

/// The elements in document order. Not in backend id order: Chromium numbers a node when
/// something first asks for it (form fields as they are parsed, for autofill; now and then,
/// on a busy machine, a link before the elements above it; DevTools the rest at the first
/// `DOM.getDocument`), so two loads of the same page can number its controls in different
/// orders, and the seeded choices index this order.
fn document_order(nodes: &BTreeMap<i64, NodeInfo>) -> Vec<(i64, &NodeInfo)> {
    let mut in_order: Vec<(i64, &NodeInfo)> = nodes.iter().map(|(id, n)| (*id, n)).collect();
    in_order.sort_by_key(|(_, n)| n.order);
    in_order
}

fn key_gesture(g: Gesture) -> bool {
    matches!(
        g,
        Gesture::Keys
            | Gesture::Type
            | Gesture::KeyToggle
            | Gesture::KeyActivate
            | Gesture::KeyChoose
    )
}

/// Per laid-out element (backend id): whether it is visible (a box of at least one pixel,
/// reachable by scrolling, `visibility: visible`) and whether the pointer reaches it
/// (`pointer-events` other than `none`). `None` when the snapshot is unavailable: then every
/// element counts as visible.
async fn layout(page: &Page) -> Option<HashMap<i64, (bool, bool)>> {
    let snap = page
        .call(
            "DOMSnapshot.captureSnapshot",
            json!({ "computedStyles": ["visibility", "pointer-events"] }),
        )
        .await
        .ok()?;
    let strings: Vec<&str> = snap
        .get("strings")?
        .as_array()?
        .iter()
        .map(|s| s.as_str().unwrap_or(""))
        .collect();
    let text = |v: &Value| {
        v.as_u64()
            .and_then(|i| strings.get(i as usize).copied())
            .unwrap_or("")
    };
    let mut out = HashMap::new();
    for d in snap.get("documents")?.as_array()? {
        let ids = d.pointer("/nodes/backendNodeId")?.as_array()?;
        let layout = d.get("layout")?;
        let index = layout.get("nodeIndex")?.as_array()?;
        let bounds = layout.get("bounds")?.as_array()?;
        let styles = layout.get("styles")?.as_array()?;
        for (k, ni) in index.iter().enumerate() {
            let Some(id) = ni
                .as_u64()
                .and_then(|i| ids.get(i as usize))
                .and_then(Value::as_i64)
            else {
                continue;
            };
            let b: Vec<f64> = bounds
                .get(k)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            let st = styles.get(k).and_then(Value::as_array);
            let style = |i: usize| st.and_then(|s| s.get(i)).map(text).unwrap_or("");
            let boxed =
                b.len() == 4 && b[2] * b[3] >= 1.0 && b[0] + b[2] > 0.0 && b[1] + b[3] > 0.0;
            let shown = !matches!(style(0), "hidden" | "collapse");
            out.insert(id, (boxed && shown, style(1) != "none"));
        }
    }
    Some(out)
}

/// What an element inherits from its ancestors.
#[derive(Debug, Clone, Copy, Default)]
struct Inherited {
    /// Inside an `inert` subtree or a disabled `<fieldset>`.
    disabled: bool,
    /// The `<select>` an `<option>` belongs to.
    select: Option<i64>,
}

/// Records every element of a `DOM.getDocument` tree with its path (the form
/// [`shepherd_browser::visit_elements`] gives), parent, kind, `on*` attributes and position in
/// document order.
fn collect(
    node: &Value,
    path: &str,
    parent: Option<i64>,
    inherited: Inherited,
    out: &mut BTreeMap<i64, NodeInfo>,
    parents: &mut HashMap<i64, i64>,
) {
    let id = node.get("backendNodeId").and_then(Value::as_i64);
    if let (Some(id), Some(p)) = (id, parent) {
        parents.insert(id, p);
    }
    let mut inherited = inherited;
    if node.get("nodeType").and_then(Value::as_i64) == Some(1)
        && let Some(id) = id
    {
        // Numbered as met: the walk is in document order.
        let info = describe(node, path, inherited, out.len());
        let attrs = attributes(node);
        if attrs.contains_key("inert")
            || (node_name(node) == "fieldset" && attrs.contains_key("disabled"))
        {
            inherited.disabled = true;
        }
        if node_name(node) == "select" {
            inherited.select = Some(id);
        }
        out.insert(id, info);
    }
    let here = id.or(parent);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for child in node
        .get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if child.get("nodeType").and_then(Value::as_i64) != Some(1) {
            continue;
        }
        let name = node_name(child);
        let n = seen.entry(name.clone()).or_insert(0);
        *n += 1;
        collect(
            child,
            &format!("{path}/{name}[{n}]"),
            here,
            inherited,
            out,
            parents,
        );
    }
    for shadow in node
        .get("shadowRoots")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        collect(
            shadow,
            &format!("{path}/#shadow"),
            here,
            inherited,
            out,
            parents,
        );
    }
    if let Some(doc) = node.get("contentDocument") {
        collect(
            doc,
            &format!("{path}/#document"),
            here,
            inherited,
            out,
            parents,
        );
    }
}

fn node_name(node: &Value) -> String {
    node.get("localName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn attributes(node: &Value) -> BTreeMap<String, String> {
    let list: Vec<&str> = node
        .get("attributes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    list.chunks(2)
        .map(|p| {
            (
                p[0].to_ascii_lowercase(),
                p.get(1).copied().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// An element's kind, description and own handler attributes; `order` its position in
/// document order.
fn describe(node: &Value, path: &str, inherited: Inherited, order: usize) -> NodeInfo {
    let name = node_name(node);
    let attr = attributes(node);
    let types: BTreeSet<String> = attr
        .keys()
        .filter_map(|k| k.strip_prefix("on"))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    let input_type = attr
        .get("type")
        .map(|t| t.to_ascii_lowercase())
        .unwrap_or_default();
    let role = attr
        .get("role")
        .map(|r| r.to_ascii_lowercase())
        .unwrap_or_default();
    let readonly = attr.contains_key("readonly");
    let form_control = matches!(name.as_str(), "button" | "input" | "select" | "textarea");
    let disabled = inherited.disabled
        || (attr.contains_key("disabled")
            && (form_control || matches!(name.as_str(), "option" | "optgroup")));
    let editable = attr
        .get("contenteditable")
        .is_some_and(|v| !v.eq_ignore_ascii_case("false"));
    let kind = match name.as_str() {
        "a" | "area" if attr.contains_key("href") => Kind::Link,
        "button" | "summary" => Kind::Button,
        "select" => Kind::Select,
        "textarea" if !readonly => Kind::Text(TextKind::Free),
        "input" => match input_type.as_str() {
            "hidden" => Kind::None,
            "" | "text" | "search" | "password" if !readonly => Kind::Text(TextKind::Free),
            "number" if !readonly => Kind::Text(TextKind::Number),
            "email" if !readonly => Kind::Text(TextKind::Email),
            "url" if !readonly => Kind::Text(TextKind::Url),
            "tel" if !readonly => Kind::Text(TextKind::Tel),
            "submit" | "reset" | "image" | "button" => Kind::Button,
            "checkbox" | "radio" => Kind::Check,
            "range" => Kind::Range,
            _ => Kind::Input,
        },
        "label" if attr.contains_key("for") || has_labelable_descendant(node) => Kind::Label,
        _ if editable => Kind::Text(TextKind::Free),
        _ if role == "checkbox" || role == "radio" || role == "switch" => Kind::Check,
        _ if CONTROL_ROLES.contains(&role.as_str()) => Kind::Button,
        _ if attr
            .get("tabindex")
            .and_then(|t| t.trim().parse::<i64>().ok())
            .is_some_and(|t| t >= 0) =>
        {
            Kind::Button
        }
        _ => Kind::None,
    };
    let size = attr
        .get("size")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0);
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
    NodeInfo {
        order,
        desc,
        path: path.to_string(),
        kind,
        listbox: name == "select" && (size > 1 || attr.contains_key("multiple")),
        focusable: kind != Kind::None && kind != Kind::Label,
        disabled,
        page_level: matches!(name.as_str(), "html" | "body"),
        option_of: if name == "option" {
            inherited.select
        } else {
            None
        },
        types,
    }
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

    fn kinds(tree: &Value) -> BTreeMap<i64, NodeInfo> {
        let mut nodes = BTreeMap::new();
        let mut parents = HashMap::new();
        collect(
            tree,
            "",
            None,
            Inherited::default(),
            &mut nodes,
            &mut parents,
        );
        nodes
    }

    #[test]
    fn controls_and_what_they_are() {
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
                {"nodeType": 1, "backendNodeId": 12, "localName": "area", "attributes": ["href", "/x"]},
                {"nodeType": 1, "backendNodeId": 13, "localName": "select", "attributes": ["size", "3"], "children": [
                    {"nodeType": 1, "backendNodeId": 14, "localName": "option", "attributes": []}
                ]},
                {"nodeType": 1, "backendNodeId": 15, "localName": "fieldset", "attributes": ["disabled", ""], "children": [
                    {"nodeType": 1, "backendNodeId": 16, "localName": "input", "attributes": ["type", "email"]}
                ]},
                {"nodeType": 1, "backendNodeId": 17, "localName": "div", "attributes": ["role", "button"]},
                {"nodeType": 1, "backendNodeId": 18, "localName": "span", "attributes": ["tabindex", "0"]},
                {"nodeType": 1, "backendNodeId": 19, "localName": "div", "attributes": ["inert", ""], "children": [
                    {"nodeType": 1, "backendNodeId": 20, "localName": "a", "attributes": ["href", "/y"]}
                ]}
            ]
        });
        let n = kinds(&tree);
        assert_eq!(n[&2].kind, Kind::Link);
        assert_eq!(n[&3].kind, Kind::None, "an anchor without href is no link");
        assert!(n[&4].disabled);
        assert_eq!(n[&5].kind, Kind::Button);
        assert_eq!(n[&6].kind, Kind::Label);
        assert_eq!(n[&7].kind, Kind::Label);
        assert_eq!(n[&9].kind, Kind::Check);
        assert_eq!(n[&10].kind, Kind::None, "a label of nothing");
        assert_eq!(n[&11].kind, Kind::Button);
        assert_eq!(n[&12].kind, Kind::Link);
        assert!(n[&13].listbox);
        assert_eq!(n[&14].option_of, Some(13));
        assert!(n[&16].disabled, "inside a disabled fieldset");
        assert_eq!(n[&16].kind, Kind::Text(TextKind::Email));
        assert_eq!(n[&17].kind, Kind::Button);
        assert_eq!(n[&18].kind, Kind::Button);
        assert!(n[&20].disabled, "inside an inert subtree");
    }

    #[test]
    fn paths_parents_and_handler_attributes() {
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
        let mut parents = HashMap::new();
        collect(
            &tree,
            "",
            None,
            Inherited::default(),
            &mut nodes,
            &mut parents,
        );
        assert!(!nodes.contains_key(&1));
        assert!(nodes[&2].page_level);
        assert_eq!(nodes[&3].desc, "div#a.x.y");
        assert_eq!(nodes[&3].path, "/body[1]/div[1]");
        assert_eq!(nodes[&8].path, "/body[1]/iframe[1]/#document/textarea[1]");
        assert!(nodes[&3].types.contains("click"));
        assert_eq!(nodes[&3].kind, Kind::None, "a div does nothing on its own");
        assert_eq!(nodes[&5].kind, Kind::Text(TextKind::Free));
        assert!(nodes[&8].disabled);
        let order: Vec<i64> = document_order(&nodes).iter().map(|(id, _)| *id).collect();
        assert_eq!(order, [2, 3, 4, 5, 6, 8]);
        let scan = Scan {
            parents,
            ..Scan::default()
        };
        assert!(scan.within(6, 8), "inside the frame");
        assert!(scan.within(2, 3));
        assert!(!scan.within(3, 2));
    }

    /// Chromium numbers nodes when something first asks (here the form field and the link
    /// before the rest): the order stays the document's, so a seed picks the same control.
    #[test]
    fn document_order_whatever_the_backend_ids() {
        let tree = json!({
            "nodeType": 9, "backendNodeId": 4, "children": [
                {"nodeType": 1, "backendNodeId": 6, "localName": "body", "attributes": [], "children": [
                    {"nodeType": 1, "backendNodeId": 11, "localName": "div", "attributes": ["onclick", "f()"]},
                    {"nodeType": 1, "backendNodeId": 5, "localName": "a", "attributes": ["href", "/x"]},
                    {"nodeType": 1, "backendNodeId": 2, "localName": "form", "attributes": [], "children": [
                        {"nodeType": 1, "backendNodeId": 3, "localName": "input", "attributes": []}
                    ]},
                    {"nodeType": 1, "backendNodeId": 13, "localName": "div", "attributes": [],
                     "shadowRoots": [{"nodeType": 11, "backendNodeId": 1, "children": [
                        {"nodeType": 1, "backendNodeId": 7, "localName": "button", "attributes": []}
                     ]}],
                     "children": [
                        {"nodeType": 1, "backendNodeId": 20, "localName": "span", "attributes": []}
                     ]},
                    {"nodeType": 1, "backendNodeId": 21, "localName": "select", "attributes": ["size", "2"], "children": [
                        {"nodeType": 1, "backendNodeId": 23, "localName": "option", "attributes": []},
                        {"nodeType": 1, "backendNodeId": 22, "localName": "option", "attributes": []}
                    ]}
                ]}
            ]
        });
        let nodes = kinds(&tree);
        let order: Vec<i64> = document_order(&nodes).iter().map(|(id, _)| *id).collect();
        assert_eq!(order, [6, 11, 5, 2, 3, 13, 20, 7, 21, 23, 22]);
    }
}
