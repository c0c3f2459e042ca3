//! Keeping a page in place while a tool drives it (the exerciser, the explorer): main-frame
//! navigations are failed before they reach the network, popups closed, file choosers
//! intercepted. The last line of defence: Shepherd's runtime stops and traces the navigations
//! it sees first (`blockNavigations`, docs/runtime-api.md), and this guard catches what it
//! cannot (pages without the runtime, history traversals, navigations the runtime could not
//! cancel).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::Result;
use crate::page::Page;

/// Blocks main-frame navigations and closes popups while it runs (until [`stop`](Self::stop)).
///
/// An aborted navigation never commits, so the current document keeps running: link and
/// submit handlers still run, only their default navigation is dropped. Navigations of
/// subframes continue. Popups are closed as soon as they appear (their first request may have
/// left already), file choosers are intercepted, dialogs are accepted by the page monitor.
pub struct NavigationGuard {
    task: tokio::task::JoinHandle<()>,
    blocked: Arc<Mutex<Vec<String>>>,
    popups: Arc<Mutex<Vec<String>>>,
}

impl NavigationGuard {
    /// Starts guarding `page`.
    pub async fn start(page: &Page) -> Result<NavigationGuard> {
        let mut paused = page.events(&["Fetch.requestPaused"]);
        let mut created = page.connection().subscribe(None, &["Target.targetCreated"]);
        page.connection()
            .call(
                None,
                "Target.setDiscoverTargets",
                json!({ "discover": true }),
                page.timeout(),
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
        let conn = page.connection().clone();
        let session = page.session_id().to_string();
        let main_frame = page.target_id().to_string();
        let limit = page.timeout();
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
        Ok(NavigationGuard {
            task,
            blocked,
            popups,
        })
    }

    /// The URLs of the main-frame navigations blocked so far, oldest first (a tool can tell
    /// within a run whether a gesture tried to leave the page).
    pub fn blocked(&self) -> Vec<String> {
        self.blocked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The URLs of the popups closed so far, oldest first.
    pub fn popups(&self) -> Vec<String> {
        self.popups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Undoes the interception; returns (blocked navigations, closed popups), their URLs.
    pub async fn stop(self, page: &Page) -> (Vec<String>, Vec<String>) {
        // Short limits: a renderer stuck in a handler would hold renderer-side commands.
        // Target discovery stays on: it is browser-wide, and another page may be exercised.
        let limit = Duration::from_secs(1);
        let session = Some(page.session_id());
        let conn = page.connection();
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
