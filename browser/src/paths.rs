//! Stable element paths: XPath-like positions that survive re-executions of the same page,
//! unlike backend node ids. Format: `/html[1]/body[1]/div[2]`, with `/#shadow` entering an
//! element's shadow root and `/#document` entering a frame's document, so elements inside
//! shadow trees and same-process frames are addressable too. The index counts element
//! siblings with the same local name, from 1.

use std::collections::HashMap;

use serde_json::Value;

/// Call `f(node, path)` for every element in a `DOM.getDocument` tree (`depth: -1`,
/// `pierce: true`), with the element's stable path (the form [`Element::Path`](crate::Element::Path)
/// resolves).
pub fn visit_elements(root: &Value, f: &mut impl FnMut(&Value, &str)) {
    visit(root, "", f);
}

fn visit(node: &Value, path: &str, f: &mut impl FnMut(&Value, &str)) {
    if node.get("nodeType").and_then(Value::as_i64) == Some(1) {
        f(node, path);
    }
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for child in node
        .get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if child.get("nodeType").and_then(Value::as_i64) != Some(1) {
            continue;
        }
        let name = child.get("localName").and_then(Value::as_str).unwrap_or("");
        let n = seen.entry(name).or_insert(0);
        *n += 1;
        visit(child, &format!("{path}/{name}[{n}]"), f);
    }
    for shadow in node
        .get("shadowRoots")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        visit(shadow, &format!("{path}/#shadow"), f);
    }
    if let Some(doc) = node.get("contentDocument") {
        visit(doc, &format!("{path}/#document"), f);
    }
}

/// The backend node id of the element at `path`, if any.
pub(crate) fn find_by_path(root: &Value, path: &str) -> Option<i64> {
    let mut found = None;
    visit_elements(root, &mut |node, p| {
        if found.is_none() && p == path {
            found = node.get("backendNodeId").and_then(Value::as_i64);
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_count_same_name_siblings_and_cross_shadow_and_frames() {
        let tree = json!({"nodeType": 9, "backendNodeId": 1, "children": [
            {"nodeType": 10, "backendNodeId": 2},
            {"nodeType": 1, "backendNodeId": 3, "localName": "html", "children": [
                {"nodeType": 1, "backendNodeId": 4, "localName": "body", "children": [
                    {"nodeType": 1, "backendNodeId": 5, "localName": "div"},
                    {"nodeType": 3, "backendNodeId": 6},
                    {"nodeType": 1, "backendNodeId": 7, "localName": "p"},
                    {"nodeType": 1, "backendNodeId": 8, "localName": "div",
                     "shadowRoots": [{"nodeType": 11, "backendNodeId": 9, "children": [
                        {"nodeType": 1, "backendNodeId": 10, "localName": "button"}]}]},
                    {"nodeType": 1, "backendNodeId": 11, "localName": "iframe",
                     "contentDocument": {"nodeType": 9, "backendNodeId": 12, "children": [
                        {"nodeType": 1, "backendNodeId": 13, "localName": "html"}]}}
                ]}
            ]}
        ]});
        let mut all = Vec::new();
        visit_elements(&tree, &mut |n, p| {
            all.push((n["backendNodeId"].as_i64().unwrap(), p.to_string()))
        });
        let expect = [
            (3, "/html[1]"),
            (4, "/html[1]/body[1]"),
            (5, "/html[1]/body[1]/div[1]"),
            (7, "/html[1]/body[1]/p[1]"),
            (8, "/html[1]/body[1]/div[2]"),
            (10, "/html[1]/body[1]/div[2]/#shadow/button[1]"),
            (11, "/html[1]/body[1]/iframe[1]"),
            (13, "/html[1]/body[1]/iframe[1]/#document/html[1]"),
        ];
        let expect: Vec<(i64, String)> = expect.iter().map(|(i, p)| (*i, p.to_string())).collect();
        assert_eq!(all, expect);
        assert_eq!(
            find_by_path(&tree, "/html[1]/body[1]/div[2]/#shadow/button[1]"),
            Some(10)
        );
        assert_eq!(find_by_path(&tree, "/html[1]/body[1]/div[3]"), None);
    }
}
