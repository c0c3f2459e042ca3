//! One tab: its flattened session, navigation, evaluation, scripts, screenshots and closing.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::connection::{Connection, EventStream};
use crate::error::{Error, Result};
use crate::monitor::{self, ConsoleMessage, Dialog, PageException, PageState};

/// The outcome of a navigation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Navigation {
    /// The main frame id.
    pub frame_id: String,
    /// The new document's loader id; `None` for a same-document navigation (fragment change).
    pub loader_id: Option<String>,
    /// Whether the document's `load` event fired within the wait.
    pub loaded: bool,
}

/// A tab attached over a flattened session. Dropping it closes the tab (best effort).
pub struct Page {
    pub(crate) conn: Connection,
    pub(crate) session: String,
    target_id: String,
    context: Option<String>,
    pub(crate) timeout: Duration,
    pub(crate) state: Arc<Mutex<PageState>>,
    monitor: JoinHandle<()>,
    closed: bool,
}

impl Page {
    pub(crate) async fn create(
        conn: Connection,
        context: Option<String>,
        timeout: Duration,
    ) -> Result<Page> {
        let mut params = json!({ "url": "about:blank" });
        if let Some(c) = &context {
            params["browserContextId"] = Value::String(c.clone());
        }
        let created = conn
            .call(None, "Target.createTarget", params, timeout)
            .await?;
        let target_id = str_field(&created, "targetId", "Target.createTarget")?;
        let attached = conn
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
                timeout,
            )
            .await?;
        let session = str_field(&attached, "sessionId", "Target.attachToTarget")?;
        let state = Arc::new(Mutex::new(PageState::default()));
        let events = conn.subscribe(Some(&session), monitor::METHODS);
        let monitor = tokio::spawn(monitor::run(
            conn.clone(),
            session.clone(),
            events,
            state.clone(),
        ));
        let page = Page {
            conn,
            session,
            target_id,
            context,
            timeout,
            state,
            monitor,
            closed: false,
        };
        for (method, params) in [
            ("Page.enable", json!({})),
            ("Page.setLifecycleEventsEnabled", json!({ "enabled": true })),
            ("Runtime.enable", json!({})),
            ("Network.enable", monitor::network_settings()),
            // Service workers set up in their own context: the monitor counts one that is
            // installing or activating as work in flight.
            ("ServiceWorker.enable", json!({})),
            // Every page behaves as the focused one: pages opened beside it (workers of an
            // exploration, tests in parallel) would otherwise take the window's focus away and
            // give it back, firing focus events nobody caused into the page under test.
            (
                "Emulation.setFocusEmulationEnabled",
                json!({ "enabled": true }),
            ),
            // Workers and frames in other processes, paused until the monitor watches their
            // requests (monitor.rs): their requests count for the page's quiet.
            (
                "Target.setAutoAttach",
                json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true }),
            ),
        ] {
            page.call(method, params).await?;
        }
        Ok(page)
    }

    /// The target id (also the main frame id).
    pub fn target_id(&self) -> &str {
        &self.target_id
    }

    /// The flattened session id.
    pub fn session_id(&self) -> &str {
        &self.session
    }

    /// The browser connection this page's session runs on, for browser-wide commands and
    /// events (`Target.*`) that concern the page.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Main-frame document commits seen so far: a change means the page navigated (a driver
    /// that must stay on the page compares two readings).
    pub fn main_navigations(&self) -> u64 {
        self.lock_state().main_navigations
    }

    /// The default limit for commands and waits.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Change the default limit for commands and waits.
    pub fn set_timeout(&mut self, limit: Duration) {
        self.timeout = limit;
    }

    /// Send a command on this page's session with the default limit.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.conn
            .call(Some(&self.session), method, params, self.timeout)
            .await
    }

    /// Subscribe to this page's events (`methods` empty: all). The domain must be enabled.
    pub fn events(&self, methods: &[&str]) -> EventStream {
        self.conn.subscribe(Some(&self.session), methods)
    }

    /// Navigate and wait for the new document's `load` event; a timeout is an error.
    pub async fn navigate(&self, url: &str) -> Result<Navigation> {
        let nav = self.navigate_with(url, self.timeout).await?;
        if !nav.loaded {
            return Err(Error::Timeout {
                what: format!("load event of {url}"),
                after: self.timeout,
            });
        }
        Ok(nav)
    }

    /// Navigate and wait up to `wait` for `load`; returns with `loaded: false` when the page is
    /// still loading at the limit (a recorder keeps going with such pages).
    pub async fn navigate_with(&self, url: &str, wait: Duration) -> Result<Navigation> {
        let mut events = self.events(&["Page.lifecycleEvent"]);
        let answer = self.call("Page.navigate", json!({ "url": url })).await?;
        if let Some(err) = answer.get("errorText").and_then(Value::as_str)
            && !err.is_empty()
        {
            return Err(Error::Navigation {
                url: url.to_string(),
                error: err.to_string(),
            });
        }
        let frame_id = answer
            .get("frameId")
            .and_then(Value::as_str)
            .unwrap_or(&self.target_id)
            .to_string();
        let Some(loader_id) = answer
            .get("loaderId")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return Ok(Navigation {
                frame_id,
                loader_id: None,
                loaded: true,
            });
        };
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let next = events.next_within(left).await.map_err(|e| {
                // The stream also ends when only this page died: say which.
                match self.conn.closed_reason() {
                    Some(_) => e,
                    None => Error::TargetGone(format!("page closed or crashed loading {url}")),
                }
            })?;
            let Some(ev) = next else {
                return Ok(Navigation {
                    frame_id,
                    loader_id: Some(loader_id),
                    loaded: false,
                });
            };
            let p = &ev.params;
            if p.get("name").and_then(Value::as_str) == Some("load")
                && p.get("loaderId").and_then(Value::as_str) == Some(loader_id.as_str())
            {
                return Ok(Navigation {
                    frame_id,
                    loader_id: Some(loader_id),
                    loaded: true,
                });
            }
        }
    }

    /// Reload the page (bypassing the cache when `ignore_cache`) and wait for the new
    /// document's `load`; a timeout is an error.
    pub async fn reload(&self, ignore_cache: bool) -> Result<()> {
        let mut events = self.events(&["Page.frameNavigated", "Page.lifecycleEvent"]);
        self.call("Page.reload", json!({ "ignoreCache": ignore_cache }))
            .await?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut loader: Option<String> = None;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let next =
                events
                    .next_within(left)
                    .await
                    .map_err(|e| match self.conn.closed_reason() {
                        Some(_) => e,
                        None => Error::TargetGone("page closed or crashed while reloading".into()),
                    })?;
            let Some(ev) = next else {
                return Err(Error::Timeout {
                    what: "load event after reload".into(),
                    after: self.timeout,
                });
            };
            let p = &ev.params;
            if ev.method == "Page.frameNavigated" {
                let frame = p.get("frame");
                if frame.is_some_and(|f| f.get("parentId").is_none()) {
                    loader = frame
                        .and_then(|f| f.get("loaderId"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
            } else if p.get("name").and_then(Value::as_str) == Some("load")
                && loader.is_some()
                && p.get("loaderId").and_then(Value::as_str) == loader.as_deref()
            {
                return Ok(());
            }
        }
    }

    /// Evaluate `expression` in the main frame's page world. Promises are awaited; the result
    /// comes back by value as JSON (`undefined` becomes `null`; `NaN`, `Infinity`, `-0` and
    /// bigints become their source text as a string). A throw or rejection is an
    /// [`Error::JavaScript`].
    pub async fn evaluate(&self, expression: &str) -> Result<Value> {
        let answer = self
            .call(
                "Runtime.evaluate",
                json!({
                    "expression": expression,
                    "awaitPromise": true,
                    "returnByValue": true,
                }),
            )
            .await?;
        remote_value(answer)
    }

    /// Run `source` in every new document of this page (all frames), before its own scripts.
    /// Returns the identifier for [`Page::remove_script_on_new_document`].
    pub async fn add_script_on_new_document(&self, source: &str) -> Result<String> {
        let answer = self
            .call(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({ "source": source }),
            )
            .await?;
        str_field(
            &answer,
            "identifier",
            "Page.addScriptToEvaluateOnNewDocument",
        )
    }

    /// Stop injecting a script added by [`Page::add_script_on_new_document`].
    pub async fn remove_script_on_new_document(&self, identifier: &str) -> Result<()> {
        self.call(
            "Page.removeScriptToEvaluateOnNewDocument",
            json!({ "identifier": identifier }),
        )
        .await?;
        Ok(())
    }

    /// A PNG of the viewport.
    pub async fn screenshot(&self) -> Result<Vec<u8>> {
        let answer = self
            .call(
                "Page.captureScreenshot",
                json!({ "format": "png", "optimizeForSpeed": true }),
            )
            .await?;
        let data = str_field(&answer, "data", "Page.captureScreenshot")?;
        base64::engine::general_purpose::STANDARD
            .decode(data.as_bytes())
            .map_err(|e| Error::BadResponse {
                method: "Page.captureScreenshot".into(),
                detail: format!("bad base64: {e}"),
            })
    }

    /// The main frame's current URL.
    pub async fn url(&self) -> Result<String> {
        let v = self.evaluate("location.href").await?;
        Ok(v.as_str().unwrap_or_default().to_string())
    }

    /// Console messages seen so far (all `console.*` calls of the page and its frames).
    pub fn console_messages(&self) -> Vec<ConsoleMessage> {
        self.lock_state().console.clone()
    }

    /// Uncaught exceptions and unhandled rejections seen so far.
    pub fn exceptions(&self) -> Vec<PageException> {
        self.lock_state().exceptions.clone()
    }

    /// JavaScript dialogs (`alert`, `confirm`, `prompt`, `beforeunload`) seen so far; each was
    /// accepted automatically so the page never blocks.
    pub fn dialogs(&self) -> Vec<Dialog> {
        self.lock_state().dialogs.clone()
    }

    /// URLs of the requests the page has in flight, and the script URLs of its origin's
    /// service workers still installing or activating: what keeps [`Page::wait_quiet`]
    /// waiting.
    pub fn requests_in_flight(&self) -> Vec<String> {
        let st = self.lock_state();
        let mut urls: Vec<String> = st
            .in_flight
            .values()
            .map(|r| r.url.clone())
            .chain(st.workers_starting.values().cloned())
            .collect();
        urls.sort();
        urls
    }

    /// Frames of the page still loading with no request of theirs in flight: parsing their
    /// document or running its scripts, their `load` still to come. Counted by
    /// [`Page::wait_quiet`]; a scheduler that holds requests adds them to what it waits for.
    pub fn frames_parsing(&self) -> usize {
        self.lock_state().frames_parsing()
    }

    /// Body bytes received so far for the document at `url` (a page or a frame; 0 when none),
    /// summed over its requests. URLs longer than 300 characters are compared by their first
    /// 300.
    pub fn document_bytes(&self, url: &str) -> u64 {
        let key = crate::monitor::url_key(url);
        self.lock_state()
            .document_bytes
            .get(&key)
            .copied()
            .unwrap_or(0)
    }

    /// The resource type DevTools reported for the last request of `url` (`Script`, `XHR`,
    /// `Fetch`, `Stylesheet`, `Image`…), compared by its first 300 characters.
    pub fn resource_type(&self, url: &str) -> Option<String> {
        let key = crate::monitor::url_key(url);
        self.lock_state().resource_types.get(&key).cloned()
    }

    /// When the page last started or finished a request.
    pub fn last_network_activity(&self) -> std::time::Instant {
        self.lock_state().last_network
    }

    /// Forget the console messages, exceptions and dialogs collected so far.
    pub fn clear_logs(&self) {
        let mut st = self.lock_state();
        st.console.clear();
        st.exceptions.clear();
        st.dialogs.clear();
    }

    /// Close the tab (and dispose its isolated context, if it has one).
    pub async fn close(mut self) -> Result<()> {
        self.closed = true;
        self.monitor.abort();
        let r = self
            .conn
            .call(
                None,
                "Target.closeTarget",
                json!({ "targetId": self.target_id }),
                self.timeout,
            )
            .await;
        self.conn.kill_session(&self.session, "page closed");
        if let Some(ctx) = self.context.take() {
            let _ = self
                .conn
                .call(
                    None,
                    "Target.disposeBrowserContext",
                    json!({ "browserContextId": ctx }),
                    self.timeout,
                )
                .await;
        }
        r.map(|_| ())
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, PageState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        self.monitor.abort();
        if self.closed {
            return;
        }
        // Best effort: without a runtime (or with the browser gone) the tab dies with Chromium.
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let conn = self.conn.clone();
            let target = self.target_id.clone();
            let context = self.context.take();
            let limit = self.timeout;
            handle.spawn(async move {
                let _ = conn
                    .call(
                        None,
                        "Target.closeTarget",
                        json!({ "targetId": target }),
                        limit,
                    )
                    .await;
                if let Some(ctx) = context {
                    let _ = conn
                        .call(
                            None,
                            "Target.disposeBrowserContext",
                            json!({ "browserContextId": ctx }),
                            limit,
                        )
                        .await;
                }
            });
        }
    }
}

/// Turn a `Runtime.evaluate`/`Runtime.callFunctionOn` answer into a JSON value or an error.
pub(crate) fn remote_value(mut answer: Value) -> Result<Value> {
    if let Some(details) = answer.get("exceptionDetails") {
        return Err(Error::JavaScript(monitor::exception_text(details)));
    }
    let mut result = answer
        .get_mut("result")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if let Some(v) = result.get_mut("value") {
        return Ok(v.take());
    }
    if let Some(u) = result.get("unserializableValue").and_then(Value::as_str) {
        return Ok(Value::String(u.to_string()));
    }
    Ok(Value::Null)
}

pub(crate) fn str_field(v: &Value, field: &str, method: &str) -> Result<String> {
    v.get(field)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| Error::BadResponse {
            method: method.to_string(),
            detail: format!("no string field {field}"),
        })
}
