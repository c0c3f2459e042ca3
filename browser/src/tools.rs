//! What a tool driving a page needs besides the page's own world: evaluating in a private
//! isolated world (reads the DOM without running, or being seen by, the page's scripts and
//! wrappers) and answering proxy authentication for the page's requests.

use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::page::{Page, remote_value};

const WORLD: &str = "__shepherd_tools";

impl Page {
    /// Evaluates `expression` in a private isolated world of the main frame: the same DOM, but
    /// none of the page's globals or patched prototypes (so an instrumented page logs nothing
    /// and cannot observe it). Promises are awaited; the result comes back by value as with
    /// [`Page::evaluate`]. The world is created on first use after each navigation.
    pub async fn evaluate_isolated(&self, expression: &str) -> Result<Value> {
        for attempt in 0..2 {
            let ctx = self.tools_world().await?;
            let answer = self
                .call(
                    "Runtime.evaluate",
                    json!({
                        "expression": expression,
                        "contextId": ctx,
                        "awaitPromise": true,
                        "returnByValue": true,
                    }),
                )
                .await;
            match answer {
                Ok(a) => return remote_value(a),
                // The document changed under us: a new world, once.
                Err(Error::Protocol { .. }) if attempt == 0 => {
                    self.lock_state().tools_world = None;
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::BadResponse {
            method: "Runtime.evaluate".into(),
            detail: "no isolated world".into(),
        })
    }

    async fn tools_world(&self) -> Result<i64> {
        {
            let st = self.lock_state();
            if let Some((nav, ctx)) = st.tools_world
                && nav == st.main_navigations
            {
                return Ok(ctx);
            }
        }
        let id = self.create_world(WORLD).await?;
        let mut st = self.lock_state();
        st.tools_world = Some((st.main_navigations, id));
        Ok(id)
    }

    /// A new isolated world named `name` in the main frame; its execution context id.
    pub(crate) async fn create_world(&self, name: &str) -> Result<i64> {
        let world = self
            .call(
                "Page.createIsolatedWorld",
                json!({ "frameId": self.target_id(), "worldName": name }),
            )
            .await?;
        world
            .get("executionContextId")
            .and_then(Value::as_i64)
            .ok_or_else(|| Error::BadResponse {
                method: "Page.createIsolatedWorld".into(),
                detail: "no executionContextId".into(),
            })
    }

    /// Answers the proxy's authentication challenges for this page's requests with
    /// `user`/`password` (a proxy that requires `Proxy-Authorization`, e.g. one listening off
    /// loopback for remote browsers). Every request of the page is briefly paused by the
    /// `Fetch` domain to make this possible; the returned task ends with the page.
    pub async fn authenticate_proxy(&self, user: &str, password: &str) -> Result<JoinHandle<()>> {
        let mut events = self.events(&["Fetch.requestPaused", "Fetch.authRequired"]);
        self.call(
            "Fetch.enable",
            json!({ "handleAuthRequests": true, "patterns": [{ "urlPattern": "*" }] }),
        )
        .await?;
        let conn = self.conn.clone();
        let session = self.session.clone();
        let limit = self.timeout;
        let (user, password) = (user.to_string(), password.to_string());
        Ok(tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                let Some(id) = ev.params.get("requestId").and_then(Value::as_str) else {
                    continue;
                };
                let (method, params) = if ev.method == "Fetch.authRequired" {
                    let proxy = ev
                        .params
                        .pointer("/authChallenge/source")
                        .and_then(Value::as_str)
                        == Some("Proxy");
                    let response = if proxy {
                        json!({ "response": "ProvideCredentials", "username": user, "password": password })
                    } else {
                        json!({ "response": "Default" })
                    };
                    (
                        "Fetch.continueWithAuth",
                        json!({ "requestId": id, "authChallengeResponse": response }),
                    )
                } else {
                    ("Fetch.continueRequest", json!({ "requestId": id }))
                };
                let _ = conn.call(Some(&session), method, params, limit).await;
            }
        }))
    }
}
