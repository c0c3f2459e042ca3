//! Keeping the page in place while it is exercised: main-frame navigations are failed, popups
//! closed, file choosers intercepted.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use shepherd_browser::{Page, Result};

/// Blocks main-frame navigations and closes popups while the exercise runs.
pub(crate) struct NavGuard {
    task: tokio::task::JoinHandle<()>,
    blocked: Arc<Mutex<Vec<String>>>,
    popups: Arc<Mutex<Vec<String>>>,
}

impl NavGuard {
    pub(crate) async fn start(page: &Page) -> Result<NavGuard> {
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
        Ok(NavGuard {
            task,
            blocked,
            popups,
        })
    }

    /// Undo the interception; returns (blocked navigations, closed popups).
    pub(crate) async fn stop(self, page: &Page) -> (Vec<String>, Vec<String>) {
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
