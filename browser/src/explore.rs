//! Seeded random exploration: fire user events at elements that have handlers, R4-style
//! (until a time or event limit), without leaving the page.
//!
//! Candidates: every element with a listener reported by `DOMDebugger.getEventListeners` on the
//! document (whole subtree, piercing frames and shadow roots) or with an `on*` attribute, every
//! text field (forms feed other handlers), and every element whose click does something
//! without a listener: links (`href`, `javascript:` URLs included), buttons and
//! submit/reset/image/checkbox/radio inputs, labels of a control, and `<summary>`. Their races
//! (code in a `javascript:` URL, a form's submit handlers, a box a label checks) only show when
//! they are clicked; plain links and submit buttons are safe to click because navigations away
//! are blocked (below). Listeners on the document, the window, `<html>`
//! or `<body>` only add a page-level keyboard action: clicking the page background is not an
//! action on a handler element, and instrumentation typically listens at the root anyway.
//!
//! Actions, chosen uniformly at random with a seeded generator: a hover (mouse moved onto the
//! element: `mouseover`/`mouseenter`/`mousemove`), a click sequence (over, down, up, click), key
//! presses on the focused element, or text typed into a field. After each action the page is
//! given a short quiet period, so asynchronous effects (timers, fetches) interleave with the
//! next action as they would for a user. Candidates are re-scanned regularly, because handlers
//! come and go.
//!
//! Staying on the page (decision): while exploring, the `Fetch` domain pauses every
//! main-frame document request and fails it with `Aborted`. An aborted navigation never
//! commits, so the current document is not unloaded and keeps running — link and submit
//! handlers still run, only their default navigation is dropped. Navigations of subframes
//! continue. Popups (`window.open`, `target=_blank`) are closed as soon as they appear, file
//! choosers are intercepted, dialogs are accepted by the page monitor. History traversals to
//! another document need no request and cannot be blocked this way: if the main frame commits
//! a new document anyway, exploration stops and reports `StopReason::LeftPage`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::input::{Element, MouseButton};
use crate::page::Page;

/// Limits and knobs for [`Page::explore`].
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// Stop after this long (R4: 15 s).
    pub duration: Duration,
    /// Stop after this many fired events (R4: 250); the log never exceeds it.
    pub max_events: usize,
    /// Seed of the random choices; the same seed on the same page makes the same choices.
    pub seed: u64,
    /// Quiet period awaited after each action.
    pub settle: Duration,
    /// Longest wait for that quiet period.
    pub settle_limit: Duration,
    /// Re-scan candidates after this many actions.
    pub rescan_every: usize,
    /// Strings typed into text fields (one chosen at random per typing action).
    pub text_inputs: Vec<String>,
    /// Told the number of events fired so far after every action (progress displays).
    pub on_events: Option<EventCounter>,
}

/// A callback given the running count of fired events.
#[derive(Clone)]
pub struct EventCounter(pub std::sync::Arc<dyn Fn(usize) + Send + Sync>);

impl std::fmt::Debug for EventCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventCounter")
    }
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            duration: Duration::from_secs(15),
            max_events: 250,
            seed: 0x5e9e_4e2d,
            settle: Duration::from_millis(30),
            settle_limit: Duration::from_millis(400),
            rescan_every: 5,
            text_inputs: vec!["shepherd".into(), "42".into(), "a b".into(), "x".into()],
            on_events: None,
        }
    }
}

/// One user-level event fired during exploration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiredEvent {
    /// Position in the log, from 0.
    pub seq: usize,
    /// Milliseconds since exploration started.
    pub at_ms: u64,
    /// The input dispatched, one entry per dispatch so a replay can interleave other events
    /// between them (see [`Page::fire`]): `mouseover` (the mouse moves onto the element:
    /// `mouseover`/`mouseenter`/`mousemove`), `mousedown`, `click` (the button release:
    /// `mouseup` then `click`), `focus`, `keydown`, `keyup`.
    pub event: String,
    /// The target element's backend node id in this page load (`None`: the page as a whole).
    pub backend_node_id: Option<i64>,
    /// The target's stable path (`/html[1]/body[1]/button[2]`, see [`Element::Path`]); empty
    /// for the page as a whole.
    pub path: String,
    /// Short description of the target (`button#save.primary`).
    pub target: String,
    /// The key for key events.
    pub detail: Option<String>,
}

/// Why exploration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The time limit passed.
    Time,
    /// The event limit was reached.
    MaxEvents,
    /// No element with handlers (and no text field) was found.
    NoCandidates,
    /// The main frame committed another document despite the navigation block.
    LeftPage,
}

/// What [`Page::explore`] did.
#[derive(Debug, Clone)]
pub struct ExploreReport {
    /// Every event fired, in order.
    pub events: Vec<FiredEvent>,
    /// Main-frame navigations that were blocked (their URLs).
    pub blocked_navigations: Vec<String>,
    /// Popups that were closed (their URLs).
    pub closed_popups: Vec<String>,
    /// Distinct candidate elements seen over all scans.
    pub candidates_seen: usize,
    /// Why it stopped.
    pub stopped: StopReason,
    /// How long it ran.
    pub elapsed: Duration,
}

/// A small deterministic generator (SplitMix64): no dependency, stable across versions.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

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
const KEY_TYPES: &[&str] = &[
    "keydown",
    "keyup",
    "keypress",
    "input",
    "beforeinput",
    "change",
];
const FOCUS_TYPES: &[&str] = &["focus", "blur", "focusin", "focusout"];
const KEYS: &[&str] = &["a", "Enter", "ArrowDown", "ArrowUp", " ", "Escape", "1"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Hover,
    Click,
    Keys,
    Type,
    Focus,
}

impl Action {
    /// Log entries the action needs at least (focus + keys for key actions; typing is cut to
    /// the remaining budget).
    fn cost(self, page_level: bool) -> usize {
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

/// One thing exploration may do; `node: None` is the page as a whole.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    node: Option<i64>,
    action: Action,
    desc: String,
    path: String,
}

/// Candidates of one scan, sorted for reproducibility.
type Candidates = Vec<Candidate>;

impl Page {
    /// Fire seeded random user events at elements with handlers until `opts.duration` or
    /// `opts.max_events`, blocking navigations away from the page (see the module docs).
    pub async fn explore(&self, opts: &ExploreOptions) -> Result<ExploreReport> {
        let start = Instant::now();
        // A known pointer position, so that a replay from a fresh load (which also starts with
        // reset_pointer) sees the same mouseover/mouseout events.
        self.reset_pointer().await?;
        let guard = NavGuard::start(self).await?;
        let result = self.explore_loop(opts, start).await;
        let (blocked, popups) = guard.stop(self).await;
        let (events, stopped, seen) = result?;
        Ok(ExploreReport {
            events,
            blocked_navigations: blocked,
            closed_popups: popups,
            candidates_seen: seen,
            stopped,
            elapsed: start.elapsed(),
        })
    }

    /// Move the mouse to the top-left corner of the viewport. Exploration starts with this;
    /// call it before replaying a log with [`Page::fire`].
    pub async fn reset_pointer(&self) -> Result<()> {
        self.mouse_move(0.0, 0.0).await
    }

    /// Dispatch one logged event again, addressing its target by [`FiredEvent::path`] (so it
    /// works on a fresh load of the same page) or, without a path, the page as a whole. Each
    /// entry is one dispatch, so a scheduler can interleave other events between the entries of
    /// one click or key press. Does not wait for the page to settle.
    pub async fn fire(&self, ev: &FiredEvent) -> Result<()> {
        let element = || {
            if ev.path.is_empty() {
                Err(Error::Element(format!(
                    "event {} #{} has no target path",
                    ev.event, ev.seq
                )))
            } else {
                Ok(Element::Path(ev.path.clone()))
            }
        };
        let key = || {
            ev.detail
                .clone()
                .ok_or_else(|| Error::Element(format!("key event #{} without a key", ev.seq)))
        };
        match ev.event.as_str() {
            "mouseover" => {
                self.hover(element()?).await?;
            }
            "mousedown" => {
                let (x, y) = self.element_center(&element()?).await?;
                self.mouse_down(x, y, MouseButton::Left).await?;
            }
            "click" => {
                let (x, y) = self.element_center(&element()?).await?;
                self.mouse_up(x, y, MouseButton::Left).await?;
            }
            "focus" => self.focus(element()?).await?,
            "keydown" => self.key_down(&key()?).await?,
            "keyup" => self.key_up(&key()?).await?,
            other => {
                return Err(Error::Element(format!("unknown logged event {other:?}")));
            }
        }
        Ok(())
    }

    async fn explore_loop(
        &self,
        opts: &ExploreOptions,
        start: Instant,
    ) -> Result<(Vec<FiredEvent>, StopReason, usize)> {
        let mut rng = Rng::new(opts.seed);
        let mut log: Vec<FiredEvent> = Vec::new();
        let mut seen: BTreeSet<i64> = BTreeSet::new();
        let nav_at_start = self.lock_state().main_navigations;
        let mut candidates: Candidates = Vec::new();
        let mut since_scan = usize::MAX;
        let mut failures_in_a_row = 0usize;
        loop {
            if start.elapsed() >= opts.duration {
                return Ok((log, StopReason::Time, seen.len()));
            }
            if log.len() >= opts.max_events {
                return Ok((log, StopReason::MaxEvents, seen.len()));
            }
            if self.lock_state().main_navigations != nav_at_start {
                return Ok((log, StopReason::LeftPage, seen.len()));
            }
            if since_scan >= opts.rescan_every.max(1) || candidates.is_empty() {
                candidates = match self.scan_candidates().await {
                    Ok(c) => c,
                    // The document may be changing under the scan (a frame navigating, a
                    // context going away): try again shortly, up to the failure budget.
                    Err(Error::Protocol { .. } | Error::BadResponse { .. }) => {
                        failures_in_a_row += 1;
                        if failures_in_a_row > 50 {
                            return Ok((log, StopReason::NoCandidates, seen.len()));
                        }
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                seen.extend(candidates.iter().filter_map(|c| c.node));
                since_scan = 0;
                if candidates.is_empty() {
                    return Ok((log, StopReason::NoCandidates, seen.len()));
                }
            }
            let budget = opts.max_events - log.len();
            let affordable: Vec<usize> = (0..candidates.len())
                .filter(|&i| {
                    let c = &candidates[i];
                    c.action.cost(c.node.is_none()) <= budget
                })
                .collect();
            if affordable.is_empty() {
                return Ok((log, StopReason::MaxEvents, seen.len()));
            }
            let pick = affordable[rng.below(affordable.len())];
            let Candidate {
                node,
                action,
                desc,
                path,
            } = candidates[pick].clone();
            let at_ms = start.elapsed().as_millis() as u64;
            let mut fired: Vec<(&'static str, Option<String>)> = Vec::new();
            // A page stuck in a handler (an endless loop) holds input acks: never wait past the
            // exploration's own end by more than a grace second.
            let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
            let outcome = match tokio::time::timeout(
                grace,
                self.perform(node, action, budget, opts, &mut rng, &mut fired),
            )
            .await
            {
                Ok(r) => r,
                Err(_) => Err(Error::Timeout {
                    what: format!("{action:?} on {desc}"),
                    after: grace,
                }),
            };
            for (event, detail) in fired {
                log.push(FiredEvent {
                    seq: log.len(),
                    at_ms,
                    event: event.to_string(),
                    backend_node_id: node,
                    path: path.clone(),
                    target: desc.clone(),
                    detail,
                });
            }
            if let Some(counter) = &opts.on_events {
                (counter.0)(log.len());
            }
            since_scan += 1;
            match outcome {
                Ok(()) => failures_in_a_row = 0,
                // The element went away or lost its box: forget it and go on.
                Err(Error::Element(_)) | Err(Error::Protocol { .. }) => {
                    candidates.remove(pick);
                    failures_in_a_row += 1;
                    if failures_in_a_row > 50 {
                        return Ok((log, StopReason::NoCandidates, seen.len()));
                    }
                    continue;
                }
                Err(Error::Timeout { .. }) => {
                    return Ok((log, StopReason::Time, seen.len()));
                }
                Err(e) => return Err(e),
            }
            let grace = opts.duration.saturating_sub(start.elapsed()) + Duration::from_secs(1);
            let settle = self.wait_quiet(opts.settle, opts.settle_limit);
            match tokio::time::timeout(grace, settle).await {
                Ok(Ok(_)) => {}
                Ok(Err(Error::Timeout { .. })) | Err(_) => {
                    return Ok((log, StopReason::Time, seen.len()));
                }
                Ok(Err(e)) => return Err(e),
            }
        }
    }

    async fn perform(
        &self,
        node: Option<i64>,
        action: Action,
        budget: usize,
        opts: &ExploreOptions,
        rng: &mut Rng,
        fired: &mut Vec<(&'static str, Option<String>)>,
    ) -> Result<()> {
        match action {
            Action::Hover | Action::Click => {
                let Some(id) = node else {
                    return Err(Error::Element("page-level mouse action".into()));
                };
                let (x, y) = self.element_center(&Element::BackendNode(id)).await?;
                self.mouse_move(x, y).await?;
                fired.push(("mouseover", None));
                if action == Action::Click {
                    self.mouse_down(x, y, MouseButton::Left).await?;
                    fired.push(("mousedown", None));
                    self.mouse_up(x, y, MouseButton::Left).await?;
                    fired.push(("click", None));
                }
            }
            Action::Focus => {
                if let Some(id) = node {
                    self.focus(Element::BackendNode(id)).await?;
                    fired.push(("focus", None));
                }
            }
            Action::Keys | Action::Type => {
                let mut budget = budget;
                if let Some(id) = node {
                    self.focus(Element::BackendNode(id)).await?;
                    fired.push(("focus", None));
                    budget -= 1;
                }
                let keys: Vec<String> = if action == Action::Keys {
                    vec![KEYS[rng.below(KEYS.len())].to_string()]
                } else if opts.text_inputs.is_empty() {
                    vec!["x".to_string()]
                } else {
                    let text = &opts.text_inputs[rng.below(opts.text_inputs.len())];
                    text.chars().map(|c| c.to_string()).collect()
                };
                for key in keys.into_iter().take(budget / 2) {
                    self.key_down(&key).await?;
                    fired.push(("keydown", Some(key.clone())));
                    self.key_up(&key).await?;
                    fired.push(("keyup", Some(key)));
                }
            }
        }
        Ok(())
    }

    /// Find elements with handlers and text fields, and the actions each supports.
    async fn scan_candidates(&self) -> Result<Candidates> {
        let doc = self
            .call("DOM.getDocument", json!({ "depth": -1, "pierce": true }))
            .await?;
        let mut nodes: BTreeMap<i64, NodeInfo> = BTreeMap::new();
        if let Some(root) = doc.get("root") {
            collect_nodes(root, &mut nodes);
        }
        let mut page_types: BTreeSet<String> = BTreeSet::new();
        for (expr, depth) in [("document", -1), ("window", 0)] {
            let obj = self
                .call(
                    "Runtime.evaluate",
                    json!({ "expression": expr, "objectGroup": "shepherd-explore" }),
                )
                .await?;
            let Some(object_id) = obj
                .get("result")
                .and_then(|r| r.get("objectId"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let listeners = self
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
        let _ = self
            .call(
                "Runtime.releaseObjectGroup",
                json!({ "objectGroup": "shepherd-explore" }),
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
}

/// Record element nodes with their path, description, `on*` attributes and field kind.
fn collect_nodes(root: &Value, out: &mut BTreeMap<i64, NodeInfo>) {
    crate::paths::visit_elements(root, &mut |node, path| {
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

/// Blocks main-frame navigations and closes popups while exploration runs.
struct NavGuard {
    task: tokio::task::JoinHandle<()>,
    blocked: Arc<Mutex<Vec<String>>>,
    popups: Arc<Mutex<Vec<String>>>,
}

impl NavGuard {
    async fn start(page: &Page) -> Result<NavGuard> {
        let mut paused = page.events(&["Fetch.requestPaused"]);
        let mut created = page.conn.subscribe(None, &["Target.targetCreated"]);
        page.conn
            .call(
                None,
                "Target.setDiscoverTargets",
                json!({ "discover": true }),
                page.timeout,
            )
            .await?;
        page.call(
            "Fetch.enable",
            json!({ "patterns": [{ "urlPattern": "*", "resourceType": "Document", "requestStage": "Request" }] }),
        )
        .await?;
        page.call(
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": true }),
        )
        .await?;
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let popups = Arc::new(Mutex::new(Vec::new()));
        let conn = page.conn.clone();
        let session = page.session.clone();
        let main_frame = page.target_id().to_string();
        let limit = page.timeout;
        let (b, p) = (blocked.clone(), popups.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    ev = paused.next() => {
                        let Some(ev) = ev else { return };
                        let params = &ev.params;
                        let Some(id) = params.get("requestId").and_then(Value::as_str) else {
                            continue;
                        };
                        let frame = params.get("frameId").and_then(Value::as_str).unwrap_or("");
                        let (method, args) = if frame == main_frame {
                            let url = params
                                .get("request")
                                .and_then(|r| r.get("url"))
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            b.lock().unwrap_or_else(|e| e.into_inner()).push(url);
                            ("Fetch.failRequest", json!({ "requestId": id, "errorReason": "Aborted" }))
                        } else {
                            ("Fetch.continueRequest", json!({ "requestId": id }))
                        };
                        let _ = conn.call(Some(&session), method, args, limit).await;
                    }
                    ev = created.next() => {
                        let Some(ev) = ev else { return };
                        let info = ev.params.get("targetInfo");
                        let opener = info.and_then(|i| i.get("openerId")).and_then(Value::as_str);
                        if opener != Some(main_frame.as_str()) {
                            continue;
                        }
                        let Some(tid) = info.and_then(|i| i.get("targetId")).and_then(Value::as_str) else {
                            continue;
                        };
                        let url = info.and_then(|i| i.get("url")).and_then(Value::as_str).unwrap_or("");
                        p.lock().unwrap_or_else(|e| e.into_inner()).push(url.to_string());
                        let _ = conn
                            .call(None, "Target.closeTarget", json!({ "targetId": tid }), limit)
                            .await;
                    }
                }
            }
        });
        Ok(NavGuard {
            task,
            blocked,
            popups,
        })
    }

    /// Undo the interception; returns (blocked navigations, closed popups).
    async fn stop(self, page: &Page) -> (Vec<String>, Vec<String>) {
        // Short limits: a renderer stuck in a handler would hold renderer-side commands.
        // Target discovery stays on: it is browser-wide, and another page may be exploring.
        let limit = Duration::from_secs(1);
        let session = Some(page.session_id());
        let conn = &page.conn;
        let _ = tokio::join!(
            conn.call(session, "Fetch.disable", json!({}), limit),
            conn.call(
                session,
                "Page.setInterceptFileChooserDialog",
                json!({ "enabled": false }),
                limit,
            ),
        );
        self.task.abort();
        let blocked = self
            .blocked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let popups = self
            .popups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        (blocked, popups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_spreads() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<usize> = (0..64).map(|_| a.below(10)).collect();
        let ys: Vec<usize> = (0..64).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        let distinct: BTreeSet<usize> = xs.into_iter().collect();
        assert!(distinct.len() >= 8, "{distinct:?}");
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

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
