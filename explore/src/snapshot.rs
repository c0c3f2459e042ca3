//! The end state of one execution, as the report phase compares it with its parent's: the DOM
//! (with form field values, read from a private world the page cannot see), a screenshot, the
//! uncaught exceptions, the requests the page made, the final values of global variables, and
//! the timer events that ran.

use serde::{Deserialize, Serialize};
use shepherd_browser::Page;
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
}

/// One node per line; runs in an isolated world.
const DOM_JS: &str = r#"(() => {
  const out = [];
  let size = 0;
  const LIMIT = 4000000;
  const push = (line) => { out.push(line); size += line.length; };
  const walk = (n, depth) => {
    if (size > LIMIT) return;
    const pad = '  '.repeat(depth);
    if (n.nodeType === 1) {
      const tag = n.localName;
      if (tag === 'script') {
        const src = n.getAttribute('src') || '';
        if (src.indexOf('/__shepherd/') >= 0) return;
        push(pad + '<script' + (src ? ' src=' + JSON.stringify(src) : '') + '>');
        return;
      }
      const attrs = [];
      for (const a of Array.from(n.attributes)) {
        let v = a.value;
        if (a.name === 'class') v = v.split(/\s+/).filter(Boolean).sort().join(' ');
        attrs.push(a.name + '=' + JSON.stringify(v));
      }
      attrs.sort();
      if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        attrs.push('.value=' + JSON.stringify(String(n.value)));
        if (n.type === 'checkbox' || n.type === 'radio') attrs.push('.checked=' + n.checked);
      }
      push(pad + '<' + tag + (attrs.length ? ' ' + attrs.join(' ') : '') + '>');
      if (tag === 'style') return;
      for (let c = n.firstChild; c; c = c.nextSibling) walk(c, depth + 1);
    } else if (n.nodeType === 3) {
      const t = n.data.replace(/\s+/g, ' ').trim();
      if (t) push(pad + JSON.stringify(t));
    }
  };
  if (document.documentElement) walk(document.documentElement, 0);
  return out.join('\n');
})()"#;

/// Hides the caret and stops animations so two screenshots of one state are the same bytes.
const STILL_JS: &str = r#"(() => {
  const s = document.createElement('style');
  s.textContent = '*,*::before,*::after{caret-color:transparent!important;animation:none!important;transition:none!important}';
  (document.head || document.documentElement).appendChild(s);
  return true;
})()"#;

/// The DOM of `page` as compared.
pub async fn dom(page: &Page) -> anyhow::Result<String> {
    let v = page.evaluate_isolated(DOM_JS).await?;
    Ok(v.as_str().unwrap_or_default().to_string())
}

/// A screenshot with the caret hidden and animations stopped (changes the page: take it last).
pub async fn screenshot(page: &Page) -> anyhow::Result<Vec<u8>> {
    let _ = page.evaluate_isolated(STILL_JS).await;
    Ok(page.screenshot().await?)
}

/// Exceptions, global variables' final values and timer events from the execution's trace.
pub fn from_trace(trace: &Trace, snap: &mut Snapshot) {
    let s = |id| trace.strings.get(id);
    let mut exceptions = Vec::new();
    for a in &trace.actions {
        let kind = s(a.kind);
        if matches!(kind, "timer" | "interval" | "raf" | "idle") {
            snap.timers.push(s(a.stable).to_string());
        }
        for op in trace.ops_of(a.id) {
            match *op {
                Op::Exception { message, src } => {
                    let at = src.map(|p| format!(" @ {}", s(p))).unwrap_or_default();
                    exceptions.push(format!("{}{at}", s(message)));
                }
                Op::Write { loc, value, .. } if s(loc).starts_with("Global.") => {
                    let v = value.map(|v| blank_ids(s(v))).unwrap_or_default();
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
