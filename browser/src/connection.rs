//! JSON-RPC over the browser's one DevTools websocket, with flattened sessions.
//!
//! One reader task owns the incoming half: answers are routed to the waiting caller by id,
//! events are copied to every subscriber whose session and method filter match. One writer task
//! owns the outgoing half. When the socket closes, every pending call fails and every
//! subscription ends, so nothing waits forever on a dead browser.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::error::{Error, Result};

/// One DevTools event.
#[derive(Debug, Clone)]
pub struct Event {
    /// Protocol method, for example `Page.loadEventFired`.
    pub method: String,
    /// Its parameters (an object; `null` when absent).
    pub params: Value,
    /// The flattened session it belongs to; `None` for browser-level events.
    pub session_id: Option<String>,
}

/// A stream of events from one subscription; ends when the browser disconnects.
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<Event>,
}

impl EventStream {
    /// The next event, or `None` once the connection (or the subscription) is gone.
    pub async fn next(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// The next event within `limit`: `Ok(None)` on timeout, `Err` when the browser is gone.
    pub async fn next_within(&mut self, limit: Duration) -> Result<Option<Event>> {
        match tokio::time::timeout(limit, self.rx.recv()).await {
            Ok(Some(ev)) => Ok(Some(ev)),
            Ok(None) => Err(Error::Disconnected("event stream closed".into())),
            Err(_) => Ok(None),
        }
    }

    /// An event already queued, without waiting.
    pub fn try_next(&mut self) -> Option<Event> {
        self.rx.try_recv().ok()
    }
}

struct Pending {
    method: String,
    session: Option<String>,
    tx: oneshot::Sender<Result<Value>>,
}

struct Subscriber {
    session: Option<String>,
    /// Empty means every method.
    methods: Vec<String>,
    tx: mpsc::UnboundedSender<Event>,
}

#[derive(Default)]
struct State {
    pending: HashMap<u64, Pending>,
    subscribers: Vec<Subscriber>,
    /// Why the connection is closed, once it is.
    closed: Option<String>,
    /// Sessions whose target detached or crashed, with the reason.
    dead_sessions: HashMap<String, String>,
}

struct Inner {
    next_id: AtomicU64,
    state: Mutex<State>,
    out: mpsc::UnboundedSender<String>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the maps inconsistent in a way that
        // matters more than losing the connection, so poisoning is ignored.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A cloneable handle to the DevTools connection.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
    /// Aborts the reader and writer when the last handle goes.
    _tasks: Arc<Tasks>,
}

struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

impl Connection {
    /// Connect to a browser-level DevTools websocket URL.
    pub async fn connect(ws_url: &str, limit: Duration) -> Result<Connection> {
        let config = WebSocketConfig::default()
            .max_message_size(Some(512 << 20))
            .max_frame_size(Some(512 << 20));
        let connecting = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true);
        let (ws, _) = tokio::time::timeout(limit, connecting)
            .await
            .map_err(|_| Error::Timeout {
                what: format!("DevTools websocket {ws_url}"),
                after: limit,
            })?
            .map_err(|e| Error::WebSocket(e.to_string()))?;
        let (mut sink, mut stream) = ws.split();
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
        let inner = Arc::new(Inner {
            next_id: AtomicU64::new(1),
            state: Mutex::new(State::default()),
            out: out_tx,
        });

        let writer_inner = Arc::downgrade(&inner);
        let writer = tokio::spawn(async move {
            while let Some(text) = out_rx.recv().await {
                if let Err(e) = sink.send(Message::Text(text.into())).await {
                    if let Some(inner) = writer_inner.upgrade() {
                        shut_down(&inner, format!("write failed: {e}"));
                    }
                    return;
                }
            }
            let _ = sink.close().await;
        });

        let reader_inner = Arc::downgrade(&inner);
        let reader = tokio::spawn(async move {
            let reason = loop {
                let msg = match stream.next().await {
                    None => break "websocket closed".to_string(),
                    Some(Err(e)) => break format!("websocket error: {e}"),
                    Some(Ok(m)) => m,
                };
                let text = match msg {
                    Message::Text(t) => t.to_string(),
                    Message::Binary(b) => String::from_utf8_lossy(&b).into_owned(),
                    Message::Close(_) => break "websocket closed by browser".to_string(),
                    _ => continue,
                };
                let Some(inner) = reader_inner.upgrade() else {
                    return;
                };
                dispatch(&inner, &text);
            };
            if let Some(inner) = reader_inner.upgrade() {
                shut_down(&inner, reason);
            }
        });

        Ok(Connection {
            inner,
            _tasks: Arc::new(Tasks(vec![writer, reader])),
        })
    }

    /// Send `method` (to the browser when `session` is `None`) and wait up to `limit` for the
    /// answer's `result`.
    pub async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut st = self.inner.lock();
            if let Some(reason) = &st.closed {
                return Err(Error::Disconnected(reason.clone()));
            }
            if let Some(s) = session
                && let Some(reason) = st.dead_sessions.get(s)
            {
                return Err(Error::TargetGone(reason.clone()));
            }
            st.pending.insert(
                id,
                Pending {
                    method: method.to_string(),
                    session: session.map(str::to_string),
                    tx,
                },
            );
        }
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = Value::String(s.to_string());
        }
        if self.inner.out.send(msg.to_string()).is_err() {
            self.inner.lock().pending.remove(&id);
            return Err(Error::Disconnected("writer stopped".into()));
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(Error::Disconnected("answer channel dropped".into())),
            Err(_) => {
                self.inner.lock().pending.remove(&id);
                Err(Error::Timeout {
                    what: format!("answer to {method}"),
                    after: limit,
                })
            }
        }
    }

    /// Subscribe to events of one session (`None`: browser-level events) whose method is in
    /// `methods` (empty: all). Subscribe *before* triggering what you wait for.
    pub fn subscribe(&self, session: Option<&str>, methods: &[&str]) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut st = self.inner.lock();
        // With the connection closed, dropping `tx` right away makes the stream end at once.
        if st.closed.is_none() {
            st.subscribers.push(Subscriber {
                session: session.map(str::to_string),
                methods: methods.iter().map(|m| m.to_string()).collect(),
                tx,
            });
        }
        EventStream { rx }
    }

    /// Why the connection closed, if it has.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.lock().closed.clone()
    }

    /// Mark a session dead: its pending calls fail and later calls fail fast.
    pub(crate) fn kill_session(&self, session: &str, reason: &str) {
        let mut st = self.inner.lock();
        kill_session_locked(&mut st, session, reason);
    }
}

fn kill_session_locked(st: &mut State, session: &str, reason: &str) {
    st.dead_sessions
        .insert(session.to_string(), reason.to_string());
    let ids: Vec<u64> = st
        .pending
        .iter()
        .filter(|(_, p)| p.session.as_deref() == Some(session))
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        if let Some(p) = st.pending.remove(&id) {
            let _ = p.tx.send(Err(Error::TargetGone(reason.to_string())));
        }
    }
    st.subscribers
        .retain(|s| s.session.as_deref() != Some(session));
}

fn shut_down(inner: &Inner, reason: String) {
    let mut st = inner.lock();
    if st.closed.is_some() {
        return;
    }
    st.closed = Some(reason.clone());
    for (_, p) in st.pending.drain() {
        let _ = p.tx.send(Err(Error::Disconnected(reason.clone())));
    }
    st.subscribers.clear();
}

fn dispatch(inner: &Inner, text: &str) {
    let Ok(mut msg) = serde_json::from_str::<Value>(text) else {
        tracing::debug!("ignoring non-JSON DevTools message");
        return;
    };
    let session_id = msg
        .get("sessionId")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(id) = msg.get("id").and_then(Value::as_u64) {
        let Some(p) = inner.lock().pending.remove(&id) else {
            return;
        };
        let result = if let Some(err) = msg.get("error") {
            Err(Error::Protocol {
                method: p.method,
                code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: err
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            })
        } else {
            Ok(msg
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null))
        };
        let _ = p.tx.send(result);
        return;
    }
    let Some(method) = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let params = msg
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let mut st = inner.lock();
    // Crashes and detaches end a session: fail its waiters instead of letting them time out.
    match method.as_str() {
        "Target.detachedFromTarget" => {
            if let Some(s) = params.get("sessionId").and_then(Value::as_str) {
                kill_session_locked(&mut st, s, "target detached");
            }
        }
        "Inspector.targetCrashed" => {
            if let Some(s) = &session_id {
                kill_session_locked(&mut st, s, "renderer crashed");
                return;
            }
        }
        _ => {}
    }
    let event = Event {
        method,
        params,
        session_id,
    };
    st.subscribers.retain(|s| {
        if s.session != event.session_id
            || (!s.methods.is_empty() && !s.methods.contains(&event.method))
        {
            return !s.tx.is_closed();
        }
        s.tx.send(event.clone()).is_ok()
    });
}
