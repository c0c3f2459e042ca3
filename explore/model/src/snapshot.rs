//! The end state of one execution, as the report phase compares it with its parent's: the DOM
//! (with form field values), a screenshot, the uncaught exceptions, the requests the page made,
//! the final values of global variables, and the timer events that ran. The trace's part is
//! read here; the browser's part (DOM, screenshot) is captured by `shepherd-explore`.

use serde::{Deserialize, Serialize};
use shepherd_trace::{Op, Trace};
use std::collections::BTreeMap;

/// The compared end state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The DOM, one node per line (attributes sorted, class names sorted, field values as
    /// `.value=`, script contents left out).
    pub dom: String,
    /// PNG of the viewport (not serialised with the rest: stored as a file).
    #[serde(skip)]
    pub screenshot: Option<Vec<u8>>,
    /// Uncaught exceptions (`message @ url:line:col`), sorted.
    pub exceptions: Vec<String>,
    /// URLs of the responses the page asked for, sorted (repeats kept).
    pub requests: Vec<String>,
    /// Last value written to each `Global.*` location (object numbers blanked).
    pub heap: BTreeMap<String, String>,
    /// Timer-like events that ran (timeouts, interval ticks, frames, idle callbacks), sorted.
    pub timers: Vec<String>,
    /// What the user sees: the title, text of rendered elements, visible fields' values,
    /// images, one per line in document order (empty in state written before it existed).
    #[serde(default)]
    pub visible: String,
    /// Script-readable cookies and web storage (`cookie:k`, `local:k`, `session:k`).
    #[serde(default)]
    pub storage: BTreeMap<String, String>,
}

/// Exceptions, global variables' final values and timer events from the execution's trace.
pub fn from_trace(trace: &Trace, snap: &mut Snapshot) {
    let s = |id| trace.strings.get(id);
    let mut exceptions = Vec::new();
    for a in &trace.actions {
        if trace.kind_of(a).is_timer_like() {
            snap.timers.push(s(a.stable).to_string());
        }
        for op in trace.ops_of(a.id) {
            match *op {
                Op::Exception { message, src } => {
                    let at = src.map(|p| format!(" @ {}", s(p))).unwrap_or_default();
                    exceptions.push(format!("{}{at}", s(message)));
                }
                Op::Write { loc, value, .. } if s(loc).starts_with("Global.") => {
                    let v = value.get().map(|v| blank_ids(s(v))).unwrap_or_default();
                    snap.heap.insert(s(loc).to_string(), v);
                }
                _ => {}
            }
        }
    }
    exceptions.sort();
    snap.exceptions = exceptions;
    snap.timers.sort();
}

/// `Object[12]` → `Object[]`: object numbers depend on allocation order.
fn blank_ids(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '[' {
            let mut digits = String::new();
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                digits.push(d);
                chars.next();
            }
            if chars.peek() != Some(&']') {
                out.push_str(&digits);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use shepherd_trace::{ActionType, TraceBuilder};

    #[test]
    fn trace_parts_of_the_end_state() {
        let mut b = TraceBuilder::new();
        b.begin(ActionType::Unknown, "script", "doc/script#1");
        b.write("Global.x", Some("Object[12]"));
        b.write("Object[12].y", Some("1"));
        b.exception("ReferenceError: f is not defined", Some("a.js:1:2"));
        b.end();
        b.begin(ActionType::Timer, "timer", "doc/script#1/timer#1");
        b.write("Global.x", Some("2"));
        b.end();
        let t = b.finish();
        let mut snap = Snapshot::default();
        from_trace(&t, &mut snap);
        assert_eq!(
            snap.exceptions,
            vec!["ReferenceError: f is not defined @ a.js:1:2".to_string()]
        );
        assert_eq!(snap.heap.get("Global.x").map(String::as_str), Some("2"));
        assert_eq!(snap.heap.len(), 1);
        assert_eq!(snap.timers, vec!["doc/script#1/timer#1".to_string()]);
        assert_eq!(blank_ids("Function[3]:f"), "Function[]:f");
        assert_eq!(blank_ids("\"a[1x]\""), "\"a[1x]\"");
    }
}
