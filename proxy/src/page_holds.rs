//! Holds a page asks for itself. A repair policy postpones a script the page inserts by
//! holding its response until the page's controller lets it through; the controller marks
//! the request with `__shepherd_hold=TOKEN.N` (TOKEN: 128 random bits drawn by that document),
//! the proxy strips the marker before the request goes anywhere, fetches the response, and
//! delivers it once `POST /__shepherd/hold/release?g=TOKEN&n=N` arrives (or after the limit).
//!
//! The parser's own resources are made holdable the same way, with a token the proxy draws
//! for each HTML document it rewrites (`ResponseMeta::hold_token`): the rewriter marks the
//! document's scripts and images with it, and where the document's own bytes must wait (an
//! inline script held by a rule), it writes a hold point ([`hold_point`]) into its output;
//! the proxy cuts the document there and sends the rest once the page releases that number
//! (`pipeline/gates.rs`).
//!
//! Scoped to the one document that asked: only a request carrying the marker is held, and
//! only the page that knows the token can release it. A page cannot hold anything another
//! visitor or origin requests (those requests carry no marker of its), and what it holds of
//! its own it could as well not have requested. Every hold ends at the limit, a key released
//! once lets later requests carrying it through (a page that copies a marked URL), and the
//! tables are bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The query parameter that marks a request to hold.
pub const HOLD_PARAM: &str = "__shepherd_hold";

/// Most holds waiting at once (further marked requests pass straight through).
const MAX_WAITING: usize = 10_000;
/// Releases are remembered this long: one that came before its request, and one whose key a
/// later request carries again.
const EARLY_RELEASE_TTL: Duration = Duration::from_secs(60);
/// How long a document's parser token is known as one: its holds come while it loads.
const PARSER_TOKEN_TTL: Duration = Duration::from_secs(600);

/// Most answers held at once on HTTP/1.1 connections to one origin, whatever token they carry.
/// A browser opens six connections per origin over HTTP/1.1 and a held answer keeps one busy:
/// with six held, the page's other requests to that origin (one a rule waits for, the release
/// of a hold) queue behind them until the limit. Four leave it two. The browser's connections
/// to an origin serve all its documents (a page and its frames), and one document holds with
/// two tokens (the proxy's for the parser's resources, the page's own for what its scripts
/// insert), so the count is per origin. HTTP/2 multiplexes: no cap.
pub const HTTP1_HOLDS_PER_ORIGIN: usize = 4;

/// What starts a hold point in a rewritten document: `\x01shepherd-hold:` TOKEN `.` N `\x01`.
/// The token is the document's own (128 random bits), so nothing the origin sent can be
/// taken for one.
const HOLD_POINT_PREFIX: &[u8] = b"\x01shepherd-hold:";

/// The bytes a rewriter writes into a document where its rest waits for release `n` of the
/// document's hold token (never sent to the browser).
pub fn hold_point(token: &str, n: u64) -> String {
    format!("\x01shepherd-hold:{token}.{n}\x01")
}

/// The start of every hold point of `token` ([`hold_point`]).
pub(crate) fn hold_point_start(token: &str) -> Vec<u8> {
    let mut v = HOLD_POINT_PREFIX.to_vec();
    v.extend_from_slice(token.as_bytes());
    v.push(b'.');
    v
}

/// A fresh hold token for one document: 32 lowercase hex digits.
pub(crate) fn new_token() -> String {
    let b: [u8; 16] = rand::random();
    hex::encode(b)
}

type Key = (String, u64);

#[derive(Default)]
struct Inner {
    /// The requests waiting for each key, by their serial. A browser can ask for one held URL
    /// twice (a request it cancelled and sent again): both wait for the same release, and
    /// the first one ending takes only its own entry with it.
    waiting: HashMap<Key, Vec<(u64, oneshot::Sender<()>)>>,
    /// Requests in `waiting`.
    requests: usize,
    /// The serial of the next waiting request.
    serial: u64,
    released: HashMap<Key, Instant>,
    /// The requests waiting on HTTP/1.1 connections, per origin.
    http1: HashMap<String, Vec<Http1Hold>>,
    /// The tokens the proxy drew for documents it marked (the parser's resources), and when.
    parser_tokens: HashMap<String, Instant>,
}

/// One hold while it waits: its entry goes when it ends, also when its request is dropped
/// (the browser gave up on it), and so does its place among an origin's HTTP/1.1 holds.
struct Waiting<'a> {
    holds: &'a PageHolds,
    key: Key,
    serial: u64,
    /// The origin whose HTTP/1.1 connection it keeps busy.
    http1: Option<String>,
}

/// A request waiting on an HTTP/1.1 connection.
struct Http1Hold {
    key: Key,
    serial: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut g = self.holds.lock();
        if let Some(list) = g.waiting.get_mut(&self.key) {
            let before = list.len();
            list.retain(|(s, _)| *s != self.serial);
            let gone = before - list.len();
            if list.is_empty() {
                g.waiting.remove(&self.key);
            }
            g.requests -= gone;
        }
        if let Some(origin) = &self.http1
            && let Some(held) = g.http1.get_mut(origin)
        {
            held.retain(|h| h.serial != self.serial);
            if held.is_empty() {
                g.http1.remove(origin);
            }
        }
    }
}

impl Inner {
    /// Lets every request waiting for `key` through.
    fn let_through(&mut self, key: &Key) {
        if let Some(list) = self.waiting.remove(key) {
            self.requests -= list.len();
            for (_, tx) in list {
                let _ = tx.send(());
            }
        }
    }
}

/// Which hold goes through when a request for `key` finds an origin's HTTP/1.1 places taken
/// (`key` itself among them). First the latest (highest number: documents number their holds
/// in order) of a document's parser holds when that document has two or more there, the
/// document holding most: its earlier held scripts keep the later ones waiting anyway, since
/// the parser runs a blocking script only after them. Else the latest of `key`'s own token.
/// So one document holding the parser's scripts (or two documents, a page and its frame) does
/// not take every place from another document or from the scripts a page inserts.
fn let_go(held: &[Http1Hold], key: &Key, is_parser: impl Fn(&str) -> bool) -> Key {
    let tokens = || {
        held.iter()
            .map(|h| h.key.0.as_str())
            .chain(std::iter::once(key.0.as_str()))
    };
    let count = |t: &str| tokens().filter(|x| *x == t).count();
    let latest = |t: &str| {
        held.iter()
            .filter(|h| h.key.0 == t)
            .map(|h| h.key.1)
            .chain((key.0 == t).then_some(key.1))
            .max()
    };
    let mut parser: Option<(&str, usize)> = None;
    for t in tokens() {
        let c = count(t);
        if c >= 2 && parser.is_none_or(|(_, most)| c > most) && is_parser(t) {
            parser = Some((t, c));
        }
    }
    let token = parser.map_or(key.0.as_str(), |(t, _)| t);
    match latest(token) {
        Some(n) => (token.to_string(), n),
        None => key.clone(),
    }
}

/// Holds that pages asked for, keyed by their document's token and a number.
pub struct PageHolds {
    inner: Mutex<Inner>,
    limit: Duration,
}

impl std::fmt::Debug for PageHolds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageHolds")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

/// A marked request's key, and its URL without the marker.
pub(crate) fn take_marker(url: &http::Uri) -> Option<(http::Uri, Key)> {
    let query = url.query()?;
    if !query.contains(HOLD_PARAM) {
        return None;
    }
    let mut key = None;
    let mut kept = Vec::new();
    for part in query.split('&') {
        match part
            .strip_prefix(HOLD_PARAM)
            .and_then(|r| r.strip_prefix('='))
        {
            Some(v) if key.is_none() => key = parse_key(v),
            _ => kept.push(part),
        }
    }
    let key = key?;
    let path = url.path();
    let pq = if kept.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", kept.join("&"))
    };
    let mut parts = url.clone().into_parts();
    parts.path_and_query = pq.parse().ok();
    Some((http::Uri::from_parts(parts).ok()?, key))
}

/// `TOKEN.N`: 32 lowercase hex digits and a number.
fn parse_key(v: &str) -> Option<Key> {
    let (token, n) = v.split_once('.')?;
    let ok = token.len() == 32
        && token
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let n: u64 = n.parse().ok().filter(|n| *n < 1 << 40)?;
    ok.then(|| (token.to_string(), n))
}

impl PageHolds {
    /// A table whose holds last at most `limit`.
    pub fn new(limit: Duration) -> PageHolds {
        PageHolds {
            inner: Mutex::new(Inner::default()),
            limit,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits until the page releases `key`, or the limit passes. `http1_origin`: the origin
    /// when the browser asked over HTTP/1.x. Past [`HTTP1_HOLDS_PER_ORIGIN`] holds there, one
    /// goes through at once (see [`let_go`]), so the page keeps connections for its own
    /// requests and releases. Each such hold not kept is logged.
    pub(crate) async fn wait(&self, key: Key, http1_origin: Option<&str>) {
        let (rx, _waiting) = {
            let mut guard = self.lock();
            let g = &mut *guard;
            let now = Instant::now();
            g.released
                .retain(|_, at| now.duration_since(*at) < EARLY_RELEASE_TTL);
            if g.released.contains_key(&key) || g.requests >= MAX_WAITING {
                return;
            }
            let serial = g.serial;
            g.serial += 1;
            let http1 = match http1_origin {
                Some(origin) => {
                    let held = g.http1.entry(origin.to_string()).or_default();
                    if held.len() >= HTTP1_HOLDS_PER_ORIGIN {
                        let parser = &g.parser_tokens;
                        let go = let_go(held, &key, |t| parser.contains_key(t));
                        tracing::warn!(
                            token = %go.0,
                            n = go.1,
                            origin,
                            "page hold not kept: {HTTP1_HOLDS_PER_ORIGIN} answers are held on HTTP/1.1 connections to this origin, and more would leave the page none for its own requests"
                        );
                        if go == key {
                            return;
                        }
                        held.retain(|h| h.key != go);
                        held.push(Http1Hold {
                            key: key.clone(),
                            serial,
                        });
                        g.let_through(&go);
                    } else {
                        held.push(Http1Hold {
                            key: key.clone(),
                            serial,
                        });
                    }
                    Some(origin.to_string())
                }
                None => None,
            };
            let (tx, rx) = oneshot::channel();
            g.waiting.entry(key.clone()).or_default().push((serial, tx));
            g.requests += 1;
            let waiting = Waiting {
                holds: self,
                key: key.clone(),
                serial,
                http1,
            };
            (rx, waiting)
        };
        if tokio::time::timeout(self.limit, rx).await.is_err() {
            tracing::info!(token = %key.0, n = key.1, "page hold reached its limit, delivered");
        }
    }

    /// `token` was drawn for a document whose parser resources are marked (its holds are the
    /// parser's, see [`let_go`]). Kept [`PARSER_TOKEN_TTL`], at most [`MAX_WAITING`] at once.
    pub(crate) fn parser_token(&self, token: &str) {
        let mut g = self.lock();
        let now = Instant::now();
        g.parser_tokens
            .retain(|_, at| now.duration_since(*at) < PARSER_TOKEN_TTL);
        if g.parser_tokens.len() < MAX_WAITING {
            g.parser_tokens.insert(token.to_string(), now);
        }
    }

    /// The page lets `token.n` through; a release that comes first is remembered.
    pub(crate) fn release(&self, token: &str, n: u64) -> bool {
        let Some(key) = parse_key(&format!("{token}.{n}")) else {
            return false;
        };
        let mut g = self.lock();
        g.let_through(&key);
        if g.released.len() < MAX_WAITING {
            g.released.insert(key, Instant::now());
        }
        true
    }

    /// Requests held right now.
    pub fn waiting(&self) -> usize {
        self.lock().requests
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn markers_are_stripped() {
        let u: http::Uri = format!("https://cdn.test/a.js?v=1&{HOLD_PARAM}={T}.3")
            .parse()
            .unwrap();
        let (clean, key) = take_marker(&u).unwrap();
        assert_eq!(clean.to_string(), "https://cdn.test/a.js?v=1");
        assert_eq!(key, (T.to_string(), 3));
        let u: http::Uri = format!("http://a.test/b.js?{HOLD_PARAM}={T}.1")
            .parse()
            .unwrap();
        assert_eq!(take_marker(&u).unwrap().0.to_string(), "http://a.test/b.js");
        for bad in [
            "x.1",
            &format!("{T}.x"),
            &format!("{}.1", &T[..31]),
            &format!("{}.1", T.to_uppercase()),
        ] {
            let u: http::Uri = format!("http://a.test/b.js?{HOLD_PARAM}={bad}")
                .parse()
                .unwrap();
            assert!(take_marker(&u).is_none(), "{bad}");
        }
        assert!(take_marker(&"http://a.test/b.js?q=1".parse().unwrap()).is_none());
    }

    #[tokio::test]
    async fn release_before_or_after_the_request() {
        // The hold limit is far beyond the waits below, so only a release can end them; the
        // waits themselves end as soon as the release arrives.
        let limit = shepherd_testkit::patience(Duration::from_secs(5));
        let h = std::sync::Arc::new(PageHolds::new(limit * 10));
        assert!(h.release(T, 1));
        tokio::time::timeout(limit, h.wait((T.into(), 1), None))
            .await
            .expect("released early");
        let h2 = h.clone();
        let w = tokio::spawn(async move { h2.wait((T.into(), 2), None).await });
        while h.waiting() == 0 {
            tokio::task::yield_now().await;
        }
        assert!(h.release(T, 2));
        tokio::time::timeout(limit, w)
            .await
            .expect("released")
            .unwrap();
        assert!(!h.release("nope", 1));
        // A key released once lets a later request carrying it through.
        tokio::time::timeout(Duration::from_millis(200), h.wait((T.into(), 2), None))
            .await
            .expect("released before");
    }

    /// Waits until the table counts `count` requests (`what` names the failure).
    async fn settle(h: &PageHolds, count: usize, what: &str) {
        let limit = shepherd_testkit::patience(Duration::from_secs(5));
        tokio::time::timeout(limit, async {
            while h.waiting() != count {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect(what);
    }

    /// Lets every other task run a while: what would go through unreleased has by then.
    async fn others_run() {
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
    }

    /// Spawns a hold of `T.n` and waits until the table counts it.
    async fn held(
        h: &std::sync::Arc<PageHolds>,
        n: u64,
        origin: Option<&'static str>,
    ) -> tokio::task::JoinHandle<()> {
        let before = h.waiting();
        let h2 = h.clone();
        let w = tokio::spawn(async move { h2.wait((T.into(), n), origin).await });
        while h.waiting() == before {
            tokio::task::yield_now().await;
        }
        w
    }

    #[tokio::test]
    async fn http1_holds_leave_the_browser_connections() {
        let limit = shepherd_testkit::patience(Duration::from_secs(5));
        let h = std::sync::Arc::new(PageHolds::new(limit * 10));
        const O: &str = "http://a.test:80";
        let mut first = Vec::new();
        for n in 1..=HTTP1_HOLDS_PER_ORIGIN as u64 {
            first.push(held(&h, n, Some(O)).await);
        }
        assert_eq!(h.waiting(), HTTP1_HOLDS_PER_ORIGIN);
        // One more on HTTP/1.1 to that origin goes through at once.
        tokio::time::timeout(limit, h.wait((T.into(), 10), Some(O)))
            .await
            .expect("past the cap, not held");
        assert_eq!(h.waiting(), HTTP1_HOLDS_PER_ORIGIN);
        // Another origin, and HTTP/2, are held as before.
        let other = held(&h, 11, Some("http://b.test:80")).await;
        let h2 = held(&h, 12, None).await;
        // A released hold and a dropped request free their places.
        assert!(h.release(T, 1));
        first.remove(0).await.unwrap();
        first.remove(0).abort();
        while h.waiting() > HTTP1_HOLDS_PER_ORIGIN {
            tokio::task::yield_now().await;
        }
        let a13 = held(&h, 13, Some(O)).await;
        let a14 = held(&h, 14, Some(O)).await;
        tokio::time::timeout(limit, h.wait((T.into(), 15), Some(O)))
            .await
            .expect("full again: the latest goes through");
        // One earlier in the document is held, and the latest held one goes instead.
        let before = h.waiting();
        let h3 = h.clone();
        let early = tokio::spawn(async move { h3.wait((T.into(), 2), Some(O)).await });
        tokio::time::timeout(limit, a14)
            .await
            .expect("the latest held one went through")
            .unwrap();
        // (14 went because 2 came: 2 is waiting in its place.)
        assert_eq!(h.waiting(), before);
        assert!(!early.is_finished());
        for w in first.into_iter().chain([a13, early, other, h2]) {
            w.abort();
        }
    }

    #[tokio::test]
    async fn http1_places_are_shared_by_the_tokens_of_an_origin() {
        let limit = shepherd_testkit::patience(Duration::from_secs(5));
        let h = std::sync::Arc::new(PageHolds::new(limit * 10));
        const O: &str = "http://a.test:80";
        // T and U: the parser tokens of two documents (a page and its frame); P: a page's own.
        const U: &str = "fedcba9876543210fedcba9876543210";
        const P: &str = "00112233445566778899aabbccddeeff";
        h.parser_token(T);
        h.parser_token(U);
        let hold = |token: &'static str, n: u64| {
            let h2 = h.clone();
            tokio::spawn(async move { h2.wait((token.into(), n), Some(O)).await })
        };
        let through = |w: tokio::task::JoinHandle<()>, what: &'static str| async move {
            tokio::time::timeout(limit, w).await.expect(what).unwrap();
        };
        // The first document's parser takes the places.
        let mut t = Vec::new();
        for n in 1..=4 {
            t.push(hold(T, n));
            settle(&h, t.len(), "the table settles").await;
        }
        // The second document's: the first gives up its latest while it holds more.
        let u1 = hold(U, 1);
        through(t.pop().expect("T.4"), "T.4 went through").await;
        settle(&h, 4, "the table settles").await;
        let u2 = hold(U, 2);
        through(t.pop().expect("T.3"), "T.3 went through").await;
        settle(&h, 4, "the table settles").await;
        // Now the second would hold more: its own latest goes.
        through(hold(U, 3), "U.3 went through").await;
        assert_eq!(h.waiting(), 4);
        // The second document ends; a page's inserted scripts (not the parser's) come: the
        // parser holding two gives up its latest, and keeps its first.
        u1.abort();
        u2.abort();
        settle(&h, 2, "the table settles").await;
        let p1 = hold(P, 1);
        let p2 = hold(P, 2);
        settle(&h, 4, "the table settles").await;
        let p3 = hold(P, 3);
        through(t.pop().expect("T.2"), "T.2 went through").await;
        settle(&h, 4, "the table settles").await;
        // The parser holds one: a page's latest goes itself.
        through(hold(P, 4), "P.4 went through").await;
        others_run().await;
        assert!(t.iter().all(|w| !w.is_finished()), "T.1 is held");
        assert!(!p1.is_finished() && !p2.is_finished() && !p3.is_finished());
        for w in t.into_iter().chain([p1, p2, p3]) {
            w.abort();
        }
        settle(&h, 0, "the table settles").await;
        assert!(h.lock().http1.is_empty());
    }

    #[tokio::test]
    async fn a_request_sent_again_waits_with_the_first() {
        let limit = shepherd_testkit::patience(Duration::from_secs(5));
        let h = std::sync::Arc::new(PageHolds::new(limit * 10));
        const O: &str = "http://a.test:80";
        let first = held(&h, 5, Some(O)).await;
        // The browser asks for the same held URL again: both requests wait for its release.
        let h2 = h.clone();
        let again = tokio::spawn(async move { h2.wait((T.into(), 5), Some(O)).await });
        settle(&h, 2, "both requests are held").await;
        others_run().await;
        assert!(
            !first.is_finished(),
            "the first request went through unreleased"
        );
        assert!(
            !again.is_finished(),
            "the second request went through unreleased"
        );
        // The first is dropped (the browser gave up on it): the second still waits.
        first.abort();
        settle(&h, 1, "the dropped request leaves the table").await;
        others_run().await;
        assert!(
            !again.is_finished(),
            "dropping the first let the second through"
        );
        assert_eq!(h.lock().http1.get(O).map(Vec::len), Some(1));
        assert!(h.release(T, 5));
        tokio::time::timeout(limit, again)
            .await
            .expect("released")
            .unwrap();
        assert_eq!(h.waiting(), 0);
        assert!(h.lock().http1.is_empty());
    }

    #[test]
    fn hold_points_name_their_token() {
        let t = new_token();
        assert_eq!(t.len(), 32);
        assert!(parse_key(&format!("{t}.1")).is_some());
        let p = hold_point(&t, 7);
        assert!(p.as_bytes().starts_with(&hold_point_start(&t)));
        assert!(p.ends_with("7\x01"));
    }

    #[tokio::test]
    async fn holds_end_at_the_limit() {
        let h = PageHolds::new(Duration::from_millis(50));
        let t0 = Instant::now();
        h.wait((T.into(), 9), None).await;
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert_eq!(h.waiting(), 0);
    }
}
