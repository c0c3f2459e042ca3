//! Selenium Grid 4 sessions as the workers' browsers.
//!
//! A worker's browser is created with the W3C WebDriver new-session command (`POST
//! {grid}/session`): Chromium, with the worker's flags in `goog:chromeOptions.args` (headless,
//! its replay proxy, the replay CA's key). The Grid queues the request until a node has a free
//! slot, which may take minutes on a busy farm; [`Grid::queued`] says how many of this
//! process's requests are waiting. The session is then driven over DevTools through the
//! endpoint the Grid proxies for it (the `se:cdp` capability), never with WebDriver commands.
//!
//! No session is leaked: every session this process created is in its [`Grid`]'s registry
//! until it is deleted (`DELETE {grid}/session/{id}`) — by [`GridSession::release`] on the
//! normal path, by a task spawned when a [`GridSession`] is dropped unreleased, and by
//! [`Grid::release_all`], which the exploration calls on every way out (finished, failed,
//! interrupted) and which waits for deletions under way. Every request carries the capability
//! `shepherd:run` (this process's tag), so `release_all` also deletes a session whose creation
//! answer never arrived (a request abandoned while the node was starting the browser), and the
//! Grid's queue and status show whose sessions they are. A request abandoned while it is
//! still queued is dropped by the Grid when its client goes away (Grid 4.48).
//!
//! Parsing what the Grid answers is kept apart from the HTTP calls ([`new_session_payload`],
//! [`parse_new_session`], [`queued_in`], [`sessions_in`]), and nothing the Grid sends is
//! unwrapped: a Grid is a network peer.
//!
//! Only `http://` Grids are supported (the DevTools client speaks `ws://`); a Grid behind TLS
//! or the router's basic authentication needs a local tunnel.

use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The capability that names the process (and worker) a session belongs to.
pub const RUN_CAPABILITY: &str = "shepherd:run";

/// The capability that names the worker within the process.
pub const WORKER_CAPABILITY: &str = "shepherd:worker";

/// Longest answer read from the Grid (a status page of a large farm is a few hundred KB).
const MAX_ANSWER: usize = 16 << 20;

/// Limit of the Grid's answer to a status, queue or delete request.
const CALL_LIMIT: Duration = Duration::from_secs(30);

/// How to ask a Grid for sessions.
#[derive(Clone, Debug)]
pub struct GridOptions {
    /// More capabilities for `alwaysMatch` (for example `platformName`, `browserVersion`, or
    /// `goog:chromeOptions.binary` when the nodes' stereotype does not name Chromium's
    /// executable). `goog:chromeOptions.args` are appended to Shepherd's; anything else given
    /// here replaces Shepherd's value, except the `shepherd:*` tags.
    pub capabilities: Map<String, Value>,
    /// How long a new-session request may wait, queued at the Grid or starting on a node.
    /// The Grid's own `--session-request-timeout` (300 s by default) usually ends it first.
    pub session_wait: Duration,
}

impl Default for GridOptions {
    fn default() -> Self {
        GridOptions {
            capabilities: Map::new(),
            session_wait: Duration::from_secs(600),
        }
    }
}

/// A Selenium Grid 4 (hub, router or standalone server) that sessions are created on. Cheap to
/// clone: clones share one HTTP client and one registry of live sessions.
#[derive(Clone)]
pub struct Grid {
    inner: Arc<Inner>,
}

struct Inner {
    /// `http://host:port[/prefix]`, without a trailing slash.
    base: String,
    /// `host:port` of `base`.
    authority: String,
    loopback: bool,
    client: Client<HttpConnector, Full<Bytes>>,
    options: GridOptions,
    /// This process's tag (`shepherd:run`).
    run: String,
    registry: Mutex<Registry>,
    deleted: tokio::sync::Notify,
}

#[derive(Default)]
struct Registry {
    /// Sessions created and not yet being deleted.
    live: HashSet<String>,
    /// Deletions under way.
    deleting: usize,
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grid")
            .field("url", &self.inner.base)
            .field("run", &self.inner.run)
            .finish()
    }
}

/// A session the Grid reports in its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// The WebDriver session id.
    pub id: String,
    /// The node running it.
    pub node: String,
    /// The node's availability (`UP`, `DOWN`, `DRAINING`).
    pub availability: String,
    /// Its `shepherd:run` tag, when it has one.
    pub run: Option<String>,
}

impl Grid {
    /// A Grid at `url` (`http://host:4444`, or the router's URL with its sub-path). Nothing is
    /// contacted yet.
    pub fn new(url: &str, options: GridOptions) -> anyhow::Result<Grid> {
        let parsed = url::Url::parse(url).with_context(|| format!("--grid {url}"))?;
        match parsed.scheme() {
            "http" => {}
            "https" => bail!(
                "--grid {url}: only http:// Grids are supported (the DevTools client speaks ws://, \
                 not wss://); reach an https Grid through a local TLS tunnel"
            ),
            other => bail!("--grid {url}: {other}:// is not a Grid URL (http://host:4444)"),
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            bail!(
                "--grid {url}: credentials in the URL are not supported (a Grid behind the \
                 router's basic authentication needs a local tunnel)"
            );
        }
        let host = parsed
            .host_str()
            .with_context(|| format!("--grid {url}: no host"))?
            .to_string();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let loopback = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            None => false,
        };
        let authority = match parsed.host() {
            Some(url::Host::Ipv6(ip)) => format!("[{ip}]:{port}"),
            _ => format!("{host}:{port}"),
        };
        let path = parsed.path().trim_end_matches('/');
        let base = format!("http://{authority}{path}");
        let client = Client::builder(TokioExecutor::new()).build_http();
        let secret = shepherd_proxy::random_secret();
        let run = format!(
            "{}-{}",
            std::process::id(),
            secret.get(..8).unwrap_or(&secret)
        );
        Ok(Grid {
            inner: Arc::new(Inner {
                base,
                authority,
                loopback,
                client,
                options,
                run,
                registry: Mutex::new(Registry::default()),
                deleted: tokio::sync::Notify::new(),
            }),
        })
    }

    /// Whether `other` is this Grid (a clone of the same handle).
    pub fn same(&self, other: &Grid) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The Grid's URL as used (`http://host:port[/prefix]`).
    pub fn url(&self) -> &str {
        &self.inner.base
    }

    /// Whether the Grid's host is this machine's loopback (its nodes may then reach a proxy
    /// listening on loopback).
    pub fn is_loopback(&self) -> bool {
        self.inner.loopback
    }

    /// This process's tag, the `shepherd:run` capability of every session it asks for.
    pub fn run_tag(&self) -> &str {
        &self.inner.run
    }

    /// Sessions created here and not yet deleted.
    pub fn live_sessions(&self) -> usize {
        self.registry().live.len()
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.inner
            .registry
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Asks for a Chromium session with `flags` (`goog:chromeOptions.args`) for `worker`, and
    /// waits while the Grid queues the request (up to [`GridOptions::session_wait`]).
    pub async fn create(&self, worker: &str, flags: &[String]) -> anyhow::Result<GridSession> {
        let payload = new_session_payload(
            &self.inner.options.capabilities,
            &self.inner.run,
            worker,
            flags,
        );
        let wait = self.inner.options.session_wait;
        let url = format!("{}/session", self.inner.base);
        let answer = tokio::time::timeout(wait, self.call("POST", &url, Some(&payload)))
            .await
            .map_err(|_| {
                anyhow!(
                    "no session from the Grid at {} within {wait:?}: is a node with a free \
                     Chromium slot registered? (its queue and nodes are at {}/ui)",
                    self.inner.base,
                    self.inner.base
                )
            })??;
        let (id, cdp) = parse_new_session(answer.0, &answer.1)
            .with_context(|| format!("new session at {}", self.inner.base))?;
        self.registry().live.insert(id.clone());
        let cdp = self.cdp_through_grid(&cdp);
        tracing::debug!("Grid session {id} for worker {worker}: {cdp}");
        Ok(GridSession {
            grid: self.clone(),
            id,
            cdp,
            released: false,
        })
    }

    /// `se:cdp` as this process reaches it: the Grid names itself by its own host setting,
    /// which need not be how a client reaches it (a container, a tunnel), so the scheme and
    /// authority of the URL the Grid was given replace the ones it reported.
    fn cdp_through_grid(&self, cdp: &str) -> String {
        match url::Url::parse(cdp) {
            Ok(u) if u.path().contains("/se/cdp") => {
                let query = u.query().map(|q| format!("?{q}")).unwrap_or_default();
                format!("ws://{}{}{query}", self.inner.authority, u.path())
            }
            _ => cdp.to_string(),
        }
    }

    /// How many of this process's new-session requests the Grid's queue holds now
    /// (`GET /se/grid/newsessionqueue/queue`).
    pub async fn queued(&self) -> anyhow::Result<usize> {
        let url = format!("{}/se/grid/newsessionqueue/queue", self.inner.base);
        let (status, body) = tokio::time::timeout(CALL_LIMIT, self.call("GET", &url, None))
            .await
            .map_err(|_| anyhow!("the Grid's queue did not answer within {CALL_LIMIT:?}"))??;
        if !status.is_success() {
            bail!("the Grid's queue answered {status}");
        }
        queued_in(&body, &self.inner.run)
    }

    /// The sessions the Grid's status lists (`GET /status`), on every node it knows, up or
    /// down.
    pub async fn sessions(&self) -> anyhow::Result<Vec<SessionInfo>> {
        let url = format!("{}/status", self.inner.base);
        let (status, body) = tokio::time::timeout(CALL_LIMIT, self.call("GET", &url, None))
            .await
            .map_err(|_| anyhow!("the Grid's status did not answer within {CALL_LIMIT:?}"))??;
        if !status.is_success() {
            bail!("the Grid's status answered {status}");
        }
        sessions_in(&body)
    }

    /// Deletes every session of this process: those still registered (concurrently), then
    /// waits for deletions under way elsewhere, then deletes any session the Grid's status
    /// lists with this process's tag (one whose creation answer was abandoned). Errors are
    /// logged, never returned: this runs on the way out.
    pub async fn release_all(&self) {
        let ids: Vec<String> = self.registry().live.iter().cloned().collect();
        let mut deletions = tokio::task::JoinSet::new();
        for id in ids {
            let grid = self.clone();
            deletions.spawn(async move { grid.delete(&id).await });
        }
        while deletions.join_next().await.is_some() {}
        let waited = tokio::time::timeout(CALL_LIMIT, async {
            loop {
                let notified = self.inner.deleted.notified();
                if self.registry().deleting == 0 {
                    return;
                }
                notified.await;
            }
        })
        .await;
        if waited.is_err() {
            tracing::warn!("Grid session deletions still under way after {CALL_LIMIT:?}");
        }
        match self.sessions().await {
            Ok(sessions) => {
                for s in sessions
                    .into_iter()
                    .filter(|s| s.run.as_deref() == Some(self.inner.run.as_str()))
                {
                    tracing::info!("deleting Grid session {} left on {}", s.id, s.node);
                    self.registry().live.insert(s.id.clone());
                    self.delete(&s.id).await;
                }
            }
            Err(e) => tracing::debug!("no Grid status after releasing sessions: {e:#}"),
        }
    }

    /// Deletes session `id` if it is registered (whoever takes it from the registry deletes
    /// it, so it is deleted once).
    async fn delete(&self, id: &str) {
        {
            let mut reg = self.registry();
            if !reg.live.remove(id) {
                return;
            }
            reg.deleting += 1;
        }
        let url = format!("{}/session/{id}", self.inner.base);
        match tokio::time::timeout(CALL_LIMIT, self.call("DELETE", &url, None)).await {
            Ok(Ok((status, _))) if status.is_success() => {
                tracing::debug!("Grid session {id} deleted");
            }
            // A session on a node that died is gone once the Grid drops the node.
            Ok(Ok((status, body))) => tracing::debug!(
                "deleting Grid session {id}: {status} {}",
                error_message(&body).unwrap_or_default()
            ),
            Ok(Err(e)) => tracing::warn!("deleting Grid session {id}: {e:#}"),
            Err(_) => tracing::warn!("deleting Grid session {id}: no answer in {CALL_LIMIT:?}"),
        }
        self.registry().deleting -= 1;
        self.inner.deleted.notify_waiters();
    }

    /// One HTTP exchange: the status and the body (at most [`MAX_ANSWER`] bytes).
    async fn call(
        &self,
        method: &str,
        url: &str,
        body: Option<&Value>,
    ) -> anyhow::Result<(http::StatusCode, Bytes)> {
        let mut req = http::Request::builder().method(method).uri(url);
        let bytes = match body {
            Some(v) => {
                // The Grid refuses JSON whose type does not name the charset.
                req = req.header(
                    http::header::CONTENT_TYPE,
                    "application/json; charset=utf-8",
                );
                Bytes::from(serde_json::to_vec(v)?)
            }
            None => Bytes::new(),
        };
        let req = req
            .body(Full::new(bytes))
            .with_context(|| format!("{method} {url}"))?;
        let resp = self
            .inner
            .client
            .request(req)
            .await
            .with_context(|| format!("{method} {url}"))?;
        let status = resp.status();
        let body = Limited::new(resp.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|e| anyhow!("{method} {url}: reading the answer: {e}"))?
            .to_bytes();
        Ok((status, body))
    }
}

/// A session on a Grid, deleted by [`GridSession::release`] or, when dropped unreleased, by a
/// task spawned on the current Tokio runtime (and by [`Grid::release_all`] if that task did
/// not get to run).
pub struct GridSession {
    grid: Grid,
    id: String,
    cdp: String,
    released: bool,
}

impl fmt::Debug for GridSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GridSession")
            .field("id", &self.id)
            .field("cdp", &self.cdp)
            .finish()
    }
}

impl GridSession {
    /// The WebDriver session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The browser-level DevTools websocket the Grid proxies for the session.
    pub fn cdp_url(&self) -> &str {
        &self.cdp
    }

    /// Deletes the session (the node quits the browser and frees the slot).
    pub async fn release(mut self) {
        self.released = true;
        self.grid.delete(&self.id).await;
    }
}

impl Drop for GridSession {
    fn drop(&mut self) {
        if self.released {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let grid = self.grid.clone();
            let id = std::mem::take(&mut self.id);
            rt.spawn(async move { grid.delete(&id).await });
        }
    }
}

/// The W3C new-session payload: Chromium (`browserName: chrome`, as Grid nodes call it), the
/// flags, the tags, then the caller's capabilities (their `goog:chromeOptions.args` appended
/// to `flags`, other values replacing Shepherd's, tags kept).
pub fn new_session_payload(
    extra: &Map<String, Value>,
    run: &str,
    worker: &str,
    flags: &[String],
) -> Value {
    let mut caps = Map::new();
    caps.insert("browserName".into(), json!("chrome"));
    caps.insert("goog:chromeOptions".into(), json!({ "args": flags }));
    for (k, v) in extra {
        if k.starts_with("shepherd:") {
            continue;
        }
        match (k.as_str(), caps.get_mut(k.as_str()), v) {
            ("goog:chromeOptions", Some(Value::Object(ours)), Value::Object(theirs)) => {
                for (ok, ov) in theirs {
                    match (ok.as_str(), ours.get_mut(ok.as_str()), ov) {
                        ("args", Some(Value::Array(args)), Value::Array(more)) => {
                            args.extend(more.iter().cloned());
                        }
                        _ => {
                            ours.insert(ok.clone(), ov.clone());
                        }
                    }
                }
            }
            _ => {
                caps.insert(k.clone(), v.clone());
            }
        }
    }
    caps.insert(RUN_CAPABILITY.into(), json!(run));
    caps.insert(WORKER_CAPABILITY.into(), json!(worker));
    json!({ "capabilities": { "alwaysMatch": Value::Object(caps) } })
}

/// The session id and `se:cdp` of a new-session answer, or the Grid's error.
pub fn parse_new_session(
    status: http::StatusCode,
    body: &[u8],
) -> anyhow::Result<(String, String)> {
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        anyhow!(
            "the Grid answered {status} with no JSON ({e}): {}",
            String::from_utf8_lossy(body.get(..200).unwrap_or(body))
        )
    })?;
    if !status.is_success() || v["value"]["error"].is_string() {
        bail!(
            "the Grid answered {status}: {}",
            error_message(body).unwrap_or_else(|| "no error message".into())
        );
    }
    let id = v["value"]["sessionId"]
        .as_str()
        .filter(|s| !s.is_empty())
        .context("the Grid's answer has no sessionId")?;
    let cdp = v["value"]["capabilities"]["se:cdp"]
        .as_str()
        .filter(|s| s.starts_with("ws://") || s.starts_with("wss://"))
        .with_context(|| {
            format!(
                "the Grid's session {id} has no DevTools endpoint (se:cdp): the node's browser \
                 must be Chromium (or Chrome), with the Grid's CDP proxy enabled"
            )
        })?;
    Ok((id.to_string(), cdp.to_string()))
}

/// The first line of a WebDriver error answer's message (`value.error: value.message`).
fn error_message(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let error = v["value"]["error"].as_str().unwrap_or("error");
    let message = v["value"]["message"].as_str()?;
    let first: String = message
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(400)
        .collect();
    Some(format!("{error}: {first}"))
}

/// How many requests of the queue answer `body` carry `run` as their `shepherd:run`.
pub fn queued_in(body: &[u8], run: &str) -> anyhow::Result<usize> {
    let v: Value = serde_json::from_slice(body).context("the Grid's queue is not JSON")?;
    let requests = v["value"]
        .as_array()
        .context("the Grid's queue answer has no list")?;
    Ok(requests
        .iter()
        .filter(|r| {
            r["capabilities"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c[RUN_CAPABILITY].as_str() == Some(run))
        })
        .count())
}

/// The sessions of a `/status` answer (`value.nodes[].slots[].session`).
pub fn sessions_in(body: &[u8]) -> anyhow::Result<Vec<SessionInfo>> {
    let v: Value = serde_json::from_slice(body).context("the Grid's status is not JSON")?;
    let nodes = v["value"]["nodes"]
        .as_array()
        .context("the Grid's status lists no nodes")?;
    let mut out = Vec::new();
    for node in nodes {
        let uri = node["uri"].as_str().unwrap_or_default();
        let availability = node["availability"].as_str().unwrap_or_default();
        for slot in node["slots"].as_array().into_iter().flatten() {
            let s = &slot["session"];
            let Some(id) = s["sessionId"].as_str() else {
                continue;
            };
            out.push(SessionInfo {
                id: id.to_string(),
                node: uri.to_string(),
                availability: availability.to_string(),
                run: s["capabilities"][RUN_CAPABILITY]
                    .as_str()
                    .map(str::to_string),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_asks_for_chromium_with_the_flags_and_the_tags() {
        let mut extra = Map::new();
        extra.insert(
            "goog:chromeOptions".into(),
            json!({ "args": ["--lang=fr"], "binary": "/usr/bin/chromium" }),
        );
        extra.insert("platformName".into(), json!("linux"));
        extra.insert(RUN_CAPABILITY.into(), json!("not yours"));
        let p = new_session_payload(&extra, "7-abc", "3", &["--headless".to_string()]);
        let caps = &p["capabilities"]["alwaysMatch"];
        assert_eq!(caps["browserName"], "chrome");
        assert_eq!(
            caps["goog:chromeOptions"]["args"],
            json!(["--headless", "--lang=fr"])
        );
        assert_eq!(caps["goog:chromeOptions"]["binary"], "/usr/bin/chromium");
        assert_eq!(caps["platformName"], "linux");
        assert_eq!(caps[RUN_CAPABILITY], "7-abc");
        assert_eq!(caps[WORKER_CAPABILITY], "3");
    }

    #[test]
    fn new_session_answers_and_errors() {
        let ok = br#"{"value":{"sessionId":"s1","capabilities":{"se:cdp":"ws://10.0.0.1:4444/session/s1/se/cdp"}}}"#;
        assert_eq!(
            parse_new_session(http::StatusCode::OK, ok).unwrap(),
            ("s1".into(), "ws://10.0.0.1:4444/session/s1/se/cdp".into())
        );
        let err = br#"{"value":{"error":"session not created","message":"Could not start a new session.\nBuild info: ..."}}"#;
        let e = parse_new_session(http::StatusCode::INTERNAL_SERVER_ERROR, err).unwrap_err();
        assert!(
            e.to_string()
                .contains("session not created: Could not start a new session."),
            "{e}"
        );
        assert!(!e.to_string().contains("Build info"), "{e}");
        let no_cdp = br#"{"value":{"sessionId":"s2","capabilities":{}}}"#;
        let e = parse_new_session(http::StatusCode::OK, no_cdp).unwrap_err();
        assert!(e.to_string().contains("se:cdp"), "{e}");
        for junk in [&b"<html>"[..], b"", b"{\"value\":3}", b"[1]"] {
            assert!(parse_new_session(http::StatusCode::OK, junk).is_err());
        }
    }

    #[test]
    fn cdp_goes_through_the_url_the_grid_was_given() {
        let g = Grid::new("http://127.0.0.1:4444/", GridOptions::default()).unwrap();
        assert_eq!(g.url(), "http://127.0.0.1:4444");
        assert!(g.is_loopback());
        assert_eq!(
            g.cdp_through_grid("ws://172.17.0.2:4444/session/s1/se/cdp"),
            "ws://127.0.0.1:4444/session/s1/se/cdp"
        );
        assert_eq!(
            g.cdp_through_grid("ws://x:9/devtools/browser/b"),
            "ws://x:9/devtools/browser/b"
        );
        assert!(
            !Grid::new("http://grid.test:4444/wd/hub", GridOptions::default())
                .unwrap()
                .is_loopback()
        );
        for bad in [
            "https://grid.test",
            "ftp://grid.test",
            "http://u:p@grid.test",
            "grid",
        ] {
            assert!(Grid::new(bad, GridOptions::default()).is_err(), "{bad}");
        }
    }

    #[test]
    fn queue_and_status_answers() {
        let queue = br#"{"value":[{"capabilities":[{"browserName":"chrome","shepherd:run":"me"}],"requestId":"r1"},{"capabilities":[{"shepherd:run":"other"}]},{"capabilities":[{}]}]}"#;
        assert_eq!(queued_in(queue, "me").unwrap(), 1);
        assert!(queued_in(b"{}", "me").is_err());
        let status = br#"{"value":{"ready":true,"nodes":[
            {"uri":"http://127.0.0.1:5555","availability":"UP","slots":[
                {"session":{"sessionId":"a","capabilities":{"shepherd:run":"me"}}},
                {"session":null}]},
            {"uri":"http://127.0.0.1:5556","availability":"DOWN","slots":[
                {"session":{"sessionId":"b","capabilities":{}}}]}]}}"#;
        let s = sessions_in(status).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].run.as_deref(), Some("me"));
        assert_eq!(
            (s[1].id.as_str(), s[1].availability.as_str()),
            ("b", "DOWN")
        );
        assert!(sessions_in(b"{\"value\":{}}").is_err());
    }
}
