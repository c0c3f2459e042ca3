//! Holds: the proxy can keep any response (or each chunk of an HTML document) until a
//! scheduler releases it. The explorer drives network arrival and parsing order with this; the
//! control endpoints expose the same API over HTTP.

use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::{Notify, oneshot};

/// One held item, as listed by [`Holds::pending`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldInfo {
    /// Id to pass to [`Holds::release`].
    pub id: u64,
    /// URL of the response.
    pub url: String,
    /// `response` (whole response) or `chunk` (one part of an HTML document).
    pub kind: &'static str,
    /// For chunks: 0-based index of the chunk and the number of chunks.
    pub chunk: Option<(usize, usize)>,
}

/// How one held document is cut into parts ([`Holds::set_split`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentSplit {
    /// Byte offsets of the decoded body (offsets at 0 or past the end are ignored): before
    /// every script, after every element a recorded gesture targets, after async scripts.
    pub cuts: Vec<usize>,
    /// The document's encoding as the browser would find it (its BOM or `<meta charset>`),
    /// set on a `Content-Type` that names none: without it Chromium buffers the first bytes
    /// of a document to look for a declaration, and a first part released alone is not parsed
    /// until the next one arrives.
    pub charset: Option<String>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    hold_all: bool,
    split_html: bool,
    /// How to cut the decoded body of documents at these URLs, instead of before each
    /// `<script`.
    splits: std::collections::HashMap<String, std::sync::Arc<DocumentSplit>>,
    patterns: Vec<String>,
    pending: BTreeMap<u64, (HeldInfo, oneshot::Sender<()>)>,
}

/// Held items taken out of the list by [`Holds::set_aside`]; dropping this releases them.
#[derive(Debug, Default)]
pub struct SetAside(Vec<oneshot::Sender<()>>);

impl SetAside {
    /// How many items are set aside.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nothing is set aside.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The hold controller. All methods are cheap; only responses that are held touch the lock.
#[derive(Default)]
pub struct Holds {
    inner: Mutex<Inner>,
    changed: Notify,
    active: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Holds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Holds").finish_non_exhaustive()
    }
}

impl Holds {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn refresh_active(&self, g: &Inner) {
        self.active.store(
            g.hold_all || !g.patterns.is_empty(),
            std::sync::atomic::Ordering::Release,
        );
    }

    /// Holds every response from now on (`false` stops holding new ones).
    pub fn set_hold_all(&self, on: bool) {
        let mut g = self.lock();
        g.hold_all = on;
        self.refresh_active(&g);
    }

    /// Holds responses whose URL contains `pattern`.
    pub fn hold_matching(&self, pattern: &str) {
        let mut g = self.lock();
        g.patterns.push(pattern.to_string());
        self.refresh_active(&g);
    }

    /// Delivers held HTML documents in chunks split before each `<script>`, each chunk held.
    pub fn set_split_html(&self, on: bool) {
        self.lock().split_html = on;
    }

    /// Cuts the document at `url` as `split` says when it is held split, instead of before
    /// each `<script`. The explorer computes it from the recorded document.
    pub fn set_split(&self, url: &str, split: DocumentSplit) {
        self.lock()
            .splits
            .insert(url.to_string(), std::sync::Arc::new(split));
    }

    /// The split set for `url`, if any ([`Holds::set_split`]).
    pub fn split(&self, url: &str) -> Option<std::sync::Arc<DocumentSplit>> {
        self.lock().splits.get(url).cloned()
    }

    /// Stops holding new responses (held ones stay held until released).
    pub fn clear_rules(&self) {
        let mut g = self.lock();
        g.hold_all = false;
        g.patterns.clear();
        self.refresh_active(&g);
    }

    /// Whether a response for `url` is to be held, and if so whether HTML is split.
    pub fn should_hold(&self, url: &str) -> Option<bool> {
        if !self.active.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        let g = self.lock();
        if g.hold_all || g.patterns.iter().any(|p| url.contains(p.as_str())) {
            Some(g.split_html)
        } else {
            None
        }
    }

    /// Registers a held item; the receiver completes when it is released.
    pub fn hold(&self, url: &str, chunk: Option<(usize, usize)>) -> (u64, oneshot::Receiver<()>) {
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut g = self.lock();
            g.next_id += 1;
            let id = g.next_id;
            let info = HeldInfo {
                id,
                url: url.to_string(),
                kind: if chunk.is_some() { "chunk" } else { "response" },
                chunk,
            };
            g.pending.insert(id, (info, tx));
            id
        };
        tracing::debug!(id, url, ?chunk, "holding");
        self.changed.notify_waiters();
        (id, rx)
    }

    /// Items currently held, oldest first.
    pub fn pending(&self) -> Vec<HeldInfo> {
        self.lock()
            .pending
            .values()
            .map(|(i, _)| i.clone())
            .collect()
    }

    /// Releases one item; `false` if no such item is held.
    pub fn release(&self, id: u64) -> bool {
        let entry = self.lock().pending.remove(&id);
        match entry {
            Some((_, tx)) => {
                let _ = tx.send(());
                self.changed.notify_waiters();
                true
            }
            None => false,
        }
    }

    /// Releases everything held; returns how many items were released.
    pub fn release_all(&self) -> usize {
        let all = std::mem::take(&mut self.lock().pending);
        let n = all.len();
        for (_, (_, tx)) in all {
            let _ = tx.send(());
        }
        self.changed.notify_waiters();
        n
    }

    /// Takes every held item out of the list without releasing it: its response stays
    /// where it is until the returned [`SetAside`] is dropped (then it goes out, as with
    /// [`Holds::release_all`]). The explorer takes an execution's last screenshot while the
    /// next execution's page loads through the same proxy: the old page's held responses must
    /// neither reach it before its picture nor be listed as the new page's.
    pub fn set_aside(&self) -> SetAside {
        let all = std::mem::take(&mut self.lock().pending);
        self.changed.notify_waiters();
        SetAside(all.into_values().map(|(_, tx)| tx).collect())
    }

    /// Forgets an item whose response was abandoned (client gone).
    pub(crate) fn forget(&self, id: u64) {
        self.lock().pending.remove(&id);
    }

    /// Waits until at least `n` items are held, or `timeout` passes; returns the held items.
    pub async fn wait_pending(&self, n: usize, timeout: Duration) -> Vec<HeldInfo> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            let now = self.pending();
            if now.len() >= n {
                return now;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.pending();
            }
        }
    }
}

/// Removes a held item when the waiting response is dropped before release.
pub(crate) struct HoldGuard<'a> {
    pub holds: &'a Holds,
    pub id: u64,
}

impl Drop for HoldGuard<'_> {
    fn drop(&mut self) {
        self.holds.forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn set_aside_items_leave_the_list_and_go_out_only_when_dropped() {
        let holds = Holds::default();
        let (_, mut old) = holds.hold("https://a.test/x", None);
        let aside = holds.set_aside();
        assert_eq!(aside.len(), 1);
        assert!(holds.pending().is_empty(), "no longer listed");
        assert_eq!(holds.release_all(), 0, "not released with the rest");
        assert!(old.try_recv().is_err(), "still held");
        let (_, _new) = holds.hold("https://a.test/x", None);
        assert_eq!(holds.pending().len(), 1, "a new hold is listed alone");
        drop(aside);
        assert!(old.await.is_err(), "dropped: the waiting response goes out");
    }
}
