//! The browser executor: one worker is a replay proxy of its own (holds, replay queues, a trace
//! sink) and one Chromium (launched here, any DevTools endpoint, or a Selenium Grid session
//! driven through the DevTools endpoint the Grid proxies), running one event sequence at a
//! time, one step at a time.
//!
//! A step: wait until the page is quiet (no action open, no request in flight that the proxy
//! does not hold, nothing changed for a short idle period), list every enabled event — HTML
//! chunks and responses held at the proxy, callbacks held by the page's controller (timers are
//! held when registered: virtual time), the next gesture of the recording if its target
//! exists — run exactly one, and note the enabled set. The sequence to run is a plan: the
//! recorded order (the initial execution), or a job of the explorer (a prefix run exactly, a
//! sequence replayed approximately: events not enabled are skipped). When the plan is used up
//! the remaining enabled events run oldest first, gestures last, until nothing is enabled.

use crate::capture;
use crate::grid::{Grid, GridSession};
use anyhow::{Context, bail};
use serde_json::{Value, json};
use shepherd_browser::{Browser, Element, LaunchOptions, Page, origin_of};
use shepherd_explore_model::gesture::{Aim, Gesture, GestureKind};
use shepherd_explore_model::naming::{self, EventName};
use shepherd_explore_model::observation::{Checkpoint, RunOutput, Step};
use shepherd_explore_model::site::Site;
use shepherd_explore_model::snapshot::{self, Snapshot};
use shepherd_policies::PolicySet;
use shepherd_proxy::{CertificateAuthority, HeldInfo, ProxyAuth, ReplayOptions, TraceSink};
use shepherd_session::{MemoryTraces, Run, Stack, StackOptions};
use shepherd_trace::Trace;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default limit of a DevTools command to a browser this process did not launch (a remote
/// browser, a Grid session: one more network hop, maybe a busy node).
const CONNECTED_COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// How long a browser has to answer `Browser.getVersion` after a failed execution before it
/// counts as gone.
const LIVENESS_LIMIT: Duration = Duration::from_secs(10);

/// How far into an execution the next one's page is opened (at once if it ends sooner):
/// opening a page while the page under test loads slowed its first steps by about 100 ms.
const SPARE_DELAY_MS: u64 = 700;

/// How long to wait for what.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Nothing may change for this long before a state counts as quiet (four times as long
    /// when nothing changed at all since the last step).
    pub idle: Duration,
    /// How often the page is asked for its state while something runs in it (a quiet page is
    /// asked again when its quiet period would end, or as soon as the proxy or the network
    /// shows a change).
    pub poll: Duration,
    /// Longest wait for a quiet state (a page that never settles goes on after it).
    pub settle_limit: Duration,
    /// How long an event the plan names is waited for before it is skipped (the recorded
    /// order and a job's prefix; an eighth of it in the approximately replayed part).
    pub patience: Duration,
    /// Longest execution.
    pub run_limit: Duration,
    /// Most steps in one execution (intervals and polling loops never end by themselves).
    pub max_steps: usize,
    /// Take a screenshot of every end state.
    pub screenshots: bool,
    /// Most steps a probe lets the page settle for after its moved events.
    pub settle_steps: usize,
    /// A probe stops settling after this many timer-like steps in a row that changed nothing
    /// in the DOM: what is left is a poller that will not stop by itself.
    pub idle_ticks: usize,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            idle: Duration::from_millis(8),
            poll: Duration::from_millis(3),
            settle_limit: Duration::from_secs(3),
            patience: Duration::from_millis(600),
            run_limit: Duration::from_secs(90),
            max_steps: 400,
            screenshots: true,
            settle_steps: 200,
            idle_ticks: 6,
        }
    }
}

/// Which browser a worker drives.
#[derive(Clone, Debug)]
pub enum BrowserSpec {
    /// Launch a headless Chromium.
    Launch,
    /// Connect to a running browser's DevTools endpoint (`ws://host:port/devtools/browser/…`).
    Connect(String),
    /// A session of this Selenium Grid (created when the worker starts, deleted when it stops),
    /// driven through the DevTools endpoint the Grid proxies for it.
    Grid(Grid),
}

/// How to start a worker.
#[derive(Clone)]
pub struct WorkerConfig {
    /// The recording replayed.
    pub recording: PathBuf,
    /// The browser.
    pub browser: BrowserSpec,
    /// Where the worker's replay proxy listens.
    pub listen: SocketAddr,
    /// The address the browser uses to reach the proxy (default: the listen address).
    pub advertise: Option<String>,
    /// Credentials the proxy requires (`user:pass`), mandatory off loopback.
    pub auth: Option<String>,
    /// Where instrumented scripts are cached on disk.
    pub cache_dir: Option<PathBuf>,
    /// Timing.
    pub timing: Timing,
}

/// A plan for one execution.
#[derive(Clone, Debug)]
pub enum Plan {
    /// Follow the recorded order (the initial execution).
    Recorded,
    /// Run `prefix` exactly and `seq` approximately.
    Job {
        /// Events run as they are.
        prefix: Vec<String>,
        /// Events replayed approximately.
        seq: Vec<String>,
        /// For events of `seq`: the event that enabled it in the parent execution. Once that
        /// one has run here, the event is waited for; while it has not, it cannot be enabled
        /// and is skipped at once.
        enablers: HashMap<String, String>,
    },
    /// A race-directed probe: `prefix` exactly, then the `moved` events in order, each as soon
    /// as it is enabled (gestures among them run even out of the user's recorded order: a user
    /// can act before doing what they did earlier in the recording), then the page settles by
    /// its own means — every enabled event but gestures, oldest first, until nothing is enabled
    /// or only idle pollers are left — and the end state is taken there.
    Probe {
        /// Events run as they are.
        prefix: Vec<String>,
        /// The events the probe is about, in the order to try.
        moved: Vec<String>,
    },
}

/// A replay proxy and a browser.
pub struct Worker {
    stack: Stack,
    browser: Browser,
    /// The Grid session the browser is, deleted when the worker stops (or is dropped).
    session: Option<GridSession>,
    sink: Arc<MemoryTraces>,
    secret: String,
    proxy_addr: String,
    auth: Option<(String, String)>,
    timing: Timing,
    /// A fresh page made while the previous execution ran: opening one (a browser context and
    /// a renderer) takes a quarter of a second, about a tenth of an execution.
    spare: std::sync::Mutex<Option<Page>>,
    /// The next execution's page, navigated while the last one's screenshot was taken.
    prepared: std::sync::Mutex<Option<Prepared>>,
}

/// A page navigated to `url`, and the steps every plan starts with already run
/// ([`Worker::head`]): done while the previous execution's screenshot is taken.
struct Prepared {
    page: Page,
    url: String,
    /// Answers the proxy's credential challenges for the page (when the proxy asks).
    auth: Option<tokio::task::JoinHandle<()>>,
    /// The execution's first step, run before its plan was known.
    head: Option<Head>,
}

impl Prepared {
    /// Closes the page, and stops answering credential challenges for it.
    async fn discard(self) {
        if let Some(task) = self.auth {
            task.abort();
        }
        let _ = self.page.close().await;
    }
}

/// An execution's first step, run before its plan was known ([`Worker::head`]).
struct Head {
    /// The execution's state, from a plan with nothing in it.
    ctx: RunCtx,
    /// The step run: the document's first piece.
    first: Step,
    /// The quiet state after it.
    next: Enabled,
}

impl Head {
    /// The execution as `plan` would have run it: the plan's own choice in the first state
    /// must be the piece that ran, every planned event before it skipped (nothing else can
    /// become enabled before the document's first piece is parsed, so waiting for them, as
    /// the plan would, changes nothing but the time). `None` for the recorded order (its
    /// first state is also asked whether style sheets block painting) and for a probe that
    /// would take its checkpoint before the document.
    fn adopt(self, plan: &Plan, site: &Site, patience: Duration) -> Option<Adopted> {
        if matches!(plan, Plan::Recorded) {
            return None;
        }
        let mut planned = RunCtx::new(plan, site, patience);
        planned.no_waiting = true;
        let choice = planned.choose(std::slice::from_ref(&self.first.name));
        planned.no_waiting = false;
        match choice {
            Choice::Run(e) if e == self.first.name => {}
            _ => return None,
        }
        // A probe offers the gestures it moves in every state: the state after the piece is
        // listed again with them (the page is quiet already, so that takes one quiet period).
        let relist = !planned.plan.moved_gestures.is_empty();
        let mut ctx = self.ctx;
        ctx.plan = planned.plan;
        // The planned waits of the first state ended with its choice.
        ctx.waiting = None;
        ctx.gave_up_at = None;
        Some(Adopted {
            ctx,
            steps: vec![self.first],
            next: (!relist).then_some(self.next),
        })
    }
}

/// A [`Head`] taken over by its plan: where `drive` goes on from.
struct Adopted {
    ctx: RunCtx,
    steps: Vec<Step>,
    /// The quiet state to choose the next step in (`None`: wait for one).
    next: Option<Enabled>,
}

/// What the page's controller reports.
#[derive(Debug, Default, Clone, PartialEq)]
struct PageState {
    ready: bool,
    doc: String,
    actions: u32,
    open: i64,
    /// Held callbacks: (hid, stable, kind).
    held: Vec<(u64, String, String)>,
    /// Released callbacks whose task has not ended; `None` from a runtime that does not count
    /// them.
    releasing: Option<u64>,
    /// Service worker scripts whose registration the page started and has not seen settle.
    registering: Vec<String>,
}

/// Whether the page runs code when a response of this DevTools resource type arrives.
fn runs_code(resource_type: &str) -> bool {
    matches!(resource_type, "Script" | "XHR" | "Fetch" | "EventSource")
}

/// How often the proxy's and the network's side is looked at while the page is quiet (cheap:
/// nothing leaves this process).
const OUTSIDE_POLL: Duration = Duration::from_millis(1);

/// A step's effects as this process sees them: the proxy's held items, requests in flight that
/// it does not hold (and frames parsing a document that has arrived), bytes of the released
/// chunk's document, and whether the browser has loaded anything since the step released a
/// response.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Outside {
    held: Vec<u64>,
    unheld: usize,
    doc_bytes: Option<u64>,
    loaded: bool,
}

impl Outside {
    /// The quiet state this makes with the page's.
    fn sig(&self, page: &PageState) -> Sig {
        (page.clone(), self.held.clone(), self.unheld)
    }
}

/// Connections Chromium opens to one host over HTTP/1.1 (its socket pool's limit per group):
/// with this many responses of one `http:` origin held, its further requests wait in the
/// browser and reach the proxy only when a release frees a connection.
const CONNECTIONS_PER_HOST: usize = 6;

/// The `http:` origins whose connections are all taken by held responses (a document's parts
/// are one response): a request to them that the proxy has not seen is queued in the browser
/// behind the holds, not on its way, so a quiet state need not wait for it.
fn queued_origins(held: &[HeldInfo]) -> HashSet<String> {
    let mut responses: HashMap<String, HashSet<&str>> = HashMap::new();
    for h in held.iter().filter(|h| h.url.starts_with("http:")) {
        if let Some(origin) = origin_of(&h.url) {
            responses.entry(origin).or_default().insert(h.url.as_str());
        }
    }
    responses
        .into_iter()
        .filter(|(_, urls)| urls.len() >= CONNECTIONS_PER_HOST)
        .map(|(origin, _)| origin)
        .collect()
}

/// `scheme://host[:port]` of `url`, as browsers serialize it (the default port left out).
/// What quiet detection compares: the controller's state, the proxy's held items, requests in
/// flight that the proxy does not hold.
type Sig = (PageState, Vec<u64>, usize);

/// A quiet state as a wait for a planned event saw it: the state, and the document's element
/// count while a gesture is waited for.
type Seen = (Sig, Option<u64>);

/// Everything enabled at a quiet point.
struct Enabled {
    names: Vec<String>,
    /// name -> how to run it.
    how: HashMap<String, How>,
    page: PageState,
    /// Proxy id of each enabled hold (a chunk or a response) -> its URL.
    hold_urls: HashMap<u64, String>,
}

#[derive(Clone, Debug)]
enum How {
    Proxy(u64),
    Callback(u64, String),
    Gesture(usize),
}

/// Whether style sheets keep the page from being painted (`Worker::unpainted_by`).
enum Unpainted {
    /// None does.
    Painted,
    /// Some do; this enabled step releases one of them.
    Held(String),
    /// Some do, none of them held (still on its way), or the page could not tell.
    Loading,
}

/// The URLs of the style sheets that block the page's rendering and have not loaded (run in
/// an isolated world: the DOM only).
const UNPAINTED_JS: &str = r#"(() => ({ body: document.body !== null, pending: Array.from(document.querySelectorAll('link[rel]'))
  .filter(l => {
    const rel = l.rel.toLowerCase().split(/\s+/);
    const blocking = (l.getAttribute('blocking') || '').toLowerCase().split(/\s+/);
    return rel.includes('stylesheet') && !rel.includes('alternate') && l.sheet === null
      && !l.disabled && (!l.media || matchMedia(l.media).matches)
      && (l.closest('head') !== null || blocking.includes('render'));
  })
  .map(l => l.href) }))()"#;

/// The URL of the script the parser is stopped at, if any (`Worker::parser_blocked_by`):
/// the last script element while the document loads, when it blocks the parser.
const PARSER_BLOCKED_JS: &str = r#"(() => {
  if (document.readyState !== 'loading') return null;
  const all = document.scripts;
  const s = all.length ? all[all.length - 1] : null;
  if (!s || !s.src || s.async || s.defer || s.noModule) return null;
  const t = (s.type || '').trim().toLowerCase();
  const classic = t === '' || t === 'text/javascript' || t === 'application/javascript';
  return classic ? s.src : null;
})()"#;

const OBSERVE_JS: &str = r#"(() => {
  const S = globalThis.__shepherd;
  if (typeof S !== 'object' || S === null) return null;
  const C = S.control(SECRET);
  if (!C) return null;
  return C.observe();
})()"#;

// Every callback but the user's input is held, with virtual time; the page stays where it is:
// a navigation is stopped and traced, and what would have happened is part of the end state (a
// reversed order that navigates is different). The stack's runtime starts the top-level
// document this way (`StackOptions::explorer`); this covers a document that did not.
const INSTALL_JS: &str = r#"(() => {
  const C = __shepherd.control(SECRET);
  return C.explorerMode();
})()"#;

/// The navigations the runtime stopped, as `navigate URL` lines of the end state's requests.
const NAVIGATIONS_JS: &str = r#"(() => {
  const S = globalThis.__shepherd;
  const C = S && S.control(SECRET);
  if (!C || typeof C.navigations !== 'function') return [];
  return C.navigations().map((n) => String(n.url));
})()"#;

impl Worker {
    /// Starts the replay proxy and the browser.
    pub async fn start(
        cfg: &WorkerConfig,
        policy: Option<&PolicySet>,
        ca: Arc<CertificateAuthority>,
    ) -> anyhow::Result<Worker> {
        let sink = Arc::new(MemoryTraces::default());
        let auth = match &cfg.auth {
            Some(a) => Some(ProxyAuth::parse(a).map_err(anyhow::Error::msg)?),
            None => None,
        };
        let opts = StackOptions {
            listen: cfg.listen,
            auth,
            cache_dir: cfg.cache_dir.clone(),
            trace_sink: Some(sink.clone() as Arc<dyn TraceSink>),
            policy: policy.cloned(),
            explorer: true,
            ..StackOptions::default()
        };
        let spki = ca.spki_sha256_base64();
        let stack = Stack::start(
            Run::Replay {
                recording: cfg.recording.clone(),
                options: ReplayOptions::default(),
                trace_out: None,
            },
            opts,
            ca,
        )
        .await?;
        let secret = stack.proxy().operator_secret().to_string();
        let port = stack.proxy().addr().port();
        let proxy_addr = match &cfg.advertise {
            Some(host) => format!("{host}:{port}"),
            None => stack.proxy().addr().to_string(),
        };
        let mut session = None;
        let browser = match &cfg.browser {
            BrowserSpec::Launch => Browser::launch(LaunchOptions {
                spki_allow: vec![spki],
                ..LaunchOptions::default()
            })
            .await
            .context("launching Chromium (install it with scripts/install-deps)")?,
            BrowserSpec::Connect(url) => {
                let b = Browser::connect(url, CONNECTED_COMMAND_LIMIT)
                    .await
                    .with_context(|| format!("connecting to {url}"))?;
                // A remote browser was not started trusting our CA.
                let _ = b
                    .call(
                        "Security.setIgnoreCertificateErrors",
                        json!({ "ignore": true }),
                    )
                    .await;
                b
            }
            BrowserSpec::Grid(grid) => {
                // The node's browser uses the worker's proxy and trusts the replay CA's key,
                // as a browser launched here does; pages get their own context (and proxy)
                // per execution all the same.
                let flags = LaunchOptions {
                    proxy: Some(proxy_addr.clone()),
                    bypass_loopback_proxy: true,
                    spki_allow: vec![spki],
                    ..LaunchOptions::default()
                }
                .browser_flags();
                let s = grid
                    .create(&format!("proxy {proxy_addr}"), &flags)
                    .await
                    .with_context(|| format!("a session of the Grid at {}", grid.url()))?;
                let b = match Browser::connect(s.cdp_url(), CONNECTED_COMMAND_LIMIT).await {
                    Ok(b) => b,
                    Err(e) => {
                        let url = s.cdp_url().to_string();
                        s.release().await;
                        return Err(anyhow::Error::new(e)
                            .context(format!("connecting to the Grid session's DevTools {url}")));
                    }
                };
                session = Some(s);
                b
            }
        };
        let auth = cfg.auth.as_deref().and_then(|a| {
            a.split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
        });
        Ok(Worker {
            stack,
            browser,
            session,
            sink,
            secret,
            proxy_addr,
            auth,
            timing: cfg.timing.clone(),
            spare: std::sync::Mutex::new(None),
            prepared: std::sync::Mutex::new(None),
        })
    }

    /// Cuts the document at `url` as `split` says when it is replayed (before every script,
    /// after every gesture target: [`shepherd_explore_model::document`]).
    pub fn set_document_split(&self, url: &str, split: shepherd_proxy::DocumentSplit) {
        self.stack.proxy().holds().set_split(url, split);
    }

    /// Stops the browser (if launched here; a Grid session is deleted) and the proxy.
    pub async fn stop(self) {
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        let prepared = self
            .prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if self.browser.connection().closed_reason().is_none() {
            if let Some(page) = spare {
                let _ = page.close().await;
            }
            if let Some(p) = prepared {
                p.discard().await;
            }
        }
        let _ = self.browser.close().await;
        if let Some(session) = self.session {
            session.release().await;
        }
        self.stack.shutdown().await;
    }

    /// Why the worker's browser is gone (crashed, killed, its Grid node dead), or `None` while
    /// it answers. Asked after an execution failed: a sequence that failed because its browser
    /// went away is worth another try elsewhere, one that failed in a live browser is not.
    pub async fn browser_lost(&self) -> Option<String> {
        if let Some(reason) = self.browser.connection().closed_reason() {
            return Some(reason);
        }
        match self
            .browser
            .connection()
            .call(None, "Browser.getVersion", json!({}), LIVENESS_LIMIT)
            .await
        {
            Ok(_) => None,
            Err(e) => Some(format!("{e}")),
        }
    }

    /// The Grid session this worker's browser is, if it is one.
    pub fn grid_session(&self) -> Option<&GridSession> {
        self.session.as_ref()
    }

    /// Executes one plan on a fresh page.
    pub async fn run(&self, site: &Site, plan: &Plan) -> anyhow::Result<RunOutput> {
        let started = Instant::now();
        let holds = self.stack.proxy().holds().clone();
        let prepared = self
            .prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // The prepared page goes on under this plan if the plan would have begun as it did;
        // otherwise a fresh page is loaded.
        let mut adopted = None;
        let prepared = match prepared {
            Some(mut p) if p.url == site.page => match p.head.take() {
                None => Some(p),
                Some(head) => {
                    adopted = head.adopt(plan, site, self.timing.patience);
                    if adopted.is_some() {
                        Some(p)
                    } else {
                        tracing::debug!("the prepared page's first step is not this plan's");
                        p.discard().await;
                        None
                    }
                }
            },
            Some(p) => {
                p.discard().await;
                None
            }
            None => None,
        };
        let prepared = match prepared {
            Some(p) => p,
            None => self.prepare(site, false).await?,
        };
        let Prepared {
            page,
            auth: auth_task,
            ..
        } = prepared;
        tracing::debug!("page ready after {:?}", started.elapsed());
        // The next execution's page opens while this one runs (after its loading steps): the
        // page sits at `about:blank` and asks the proxy nothing until it is navigated.
        let (ended, end) = tokio::sync::oneshot::channel::<()>();
        let drive = async {
            let r = self.drive(&page, site, plan, started, adopted).await;
            let _ = ended.send(());
            r
        };
        let spare = async {
            let _ = tokio::time::timeout(Duration::from_millis(SPARE_DELAY_MS), end).await;
            self.new_page().await
        };
        // Where the renderer's time went (script, style, layout), for `RUST_LOG=…=trace`.
        let profiled = tracing::enabled!(tracing::Level::TRACE)
            && page.call("Performance.enable", json!({})).await.is_ok();
        let (result, next) = tokio::join!(drive, spare);
        if profiled && let Ok(m) = page.call("Performance.getMetrics", json!({})).await {
            let wanted = [
                "TaskDuration",
                "ScriptDuration",
                "RecalcStyleDuration",
                "LayoutDuration",
                "TaskOtherDuration",
            ];
            let figures: Vec<String> = m["metrics"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| {
                    let name = x["name"].as_str()?;
                    let v = x["value"].as_f64()?;
                    wanted
                        .contains(&name)
                        .then(|| format!("{name} {:.0} ms", v * 1000.0))
                })
                .collect();
            tracing::trace!("renderer main thread: {}", figures.join(", "));
        }
        match next {
            Ok(next) => *self.spare.lock().unwrap_or_else(|p| p.into_inner()) = Some(next),
            Err(e) => tracing::debug!("no spare page: {e:#}"),
        }
        let mut out = match result {
            Ok(out) => out,
            Err(e) => {
                // Let go of everything the proxy still holds for this page.
                holds.clear_rules();
                holds.release_all();
                if let Some(task) = auth_task {
                    task.abort();
                }
                let _ = page.close().await;
                return Err(e);
            }
        };
        // The screenshot waits for the browser's next frame (≈ 50 ms whatever the page) and
        // the picture's encoding: the next execution's page is navigated meanwhile. This page
        // must not change before its picture, so what the proxy holds for it stays held, set
        // aside where the next execution does not see it, and what it would ask for now is
        // held in the browser instead of reaching the proxy.
        if let Some(task) = auth_task {
            task.abort();
        }
        let _ = page
            .call(
                "Fetch.enable",
                json!({ "patterns": [{ "urlPattern": "*" }] }),
            )
            .await;
        let aside = holds.set_aside();
        let picture = async {
            if !self.timing.screenshots {
                return None;
            }
            let shot = capture::screenshot(&page).await.ok();
            tracing::trace!(
                "screenshot after {:?} ({} bytes)",
                started.elapsed(),
                shot.as_ref().map_or(0, Vec::len)
            );
            shot
        };
        let (shot, next) = tokio::join!(picture, self.prepare(site, true));
        out.snapshot.screenshot = shot;
        match next {
            Ok(next) => *self.prepared.lock().unwrap_or_else(|p| p.into_inner()) = Some(next),
            Err(e) => tracing::debug!("the next execution's page: {e:#}"),
        }
        out.elapsed = started.elapsed();
        // Closing the page is the browser's work: the next execution need not wait for it.
        tokio::spawn(async move {
            let _ = page.close().await;
            drop(aside);
        });
        tracing::debug!("execution done after {:?}", started.elapsed());
        Ok(out)
    }

    /// Readies the proxy for a new execution and starts one: a page (the spare if there is
    /// one) navigated to the site, its document held at the proxy; with `ahead`, the steps
    /// every plan begins with are run too ([`Worker::head`]).
    async fn prepare(&self, site: &Site, ahead: bool) -> anyhow::Result<Prepared> {
        let holds = self.stack.proxy().holds();
        holds.clear_rules();
        holds.release_all();
        self.stack.proxy().reset_replay();
        self.sink.clear();
        holds.set_split_html(true);
        holds.set_hold_all(true);
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).take();
        let page = match spare {
            Some(page) => page,
            None => self.new_page().await?,
        };
        let auth = match &self.auth {
            Some((u, p)) => Some(page.authenticate_proxy(u, p).await?),
            None => None,
        };
        let t0 = Instant::now();
        page.call("Page.navigate", json!({ "url": site.page }))
            .await
            .with_context(|| format!("loading {}", site.page))?;
        tracing::trace!("navigated in {:?}", t0.elapsed());
        let head = match ahead {
            true => self.head(&page, site).await?,
            false => None,
        };
        Ok(Prepared {
            page,
            url: site.page.clone(),
            auth,
            head,
        })
    }

    /// Runs the enabled event `name` chosen in the quiet state `en` and notes it as a step.
    /// `None` when `en` has no such event.
    async fn step(
        &self,
        page: &Page,
        site: &Site,
        ctx: &mut RunCtx,
        en: &Enabled,
        name: String,
        steps: &mut Vec<Step>,
    ) -> anyhow::Result<Option<How>> {
        ctx.ran.insert(name.clone());
        let Some(how) = en.how.get(&name).cloned() else {
            return Ok(None);
        };
        let kind = match &how {
            How::Proxy(_) if matches!(name.parse(), Ok(EventName::Chunk { .. })) => {
                "chunk".to_string()
            }
            How::Proxy(_) => "net".to_string(),
            How::Callback(_, k) => k.clone(),
            How::Gesture(_) => "user".to_string(),
        };
        ctx.after_chunk = kind == "chunk";
        ctx.after_gesture = kind == "user";
        ctx.after_release = matches!(how, How::Callback(..));
        steps.push(Step {
            name: name.clone(),
            kind,
            enabled: en.names.clone(),
            first_action: en.page.actions,
        });
        let t1 = Instant::now();
        if let Some(sig) = &mut ctx.last_sig {
            match &how {
                How::Proxy(id) => sig.1.retain(|x| x != id),
                How::Callback(hid, _) => sig.0.held.retain(|h| h.0 != *hid),
                How::Gesture(_) => {}
            }
        }
        ctx.chunk_sent = match &how {
            How::Proxy(id) if ctx.after_chunk => en
                .hold_urls
                .get(id)
                .map(|url| (url.clone(), page.document_bytes(url))),
            _ => None,
        };
        ctx.awaits_page = match &how {
            How::Proxy(id) if !ctx.after_chunk => en
                .hold_urls
                .get(id)
                .and_then(|url| page.resource_type(url))
                .is_some_and(|t| runs_code(&t)),
            _ => false,
        };
        ctx.fired_at = match &how {
            How::Proxy(_) => Some(Instant::now()),
            _ => None,
        };
        self.fire(page, site, &how, ctx).await?;
        tracing::trace!(
            "ran {name} in {:?} (actions before it: {})",
            t1.elapsed(),
            en.page.actions
        );
        Ok(Some(how))
    }

    /// What every plan starts with, run before the plan is known: the first quiet state,
    /// where the document's first piece is the only enabled event (nothing else can be
    /// before the page has a document), that piece, and the quiet state after it, in which
    /// the runtime has started. `None` (nothing run) when the first state is anything else.
    async fn head(&self, page: &Page, site: &Site) -> anyhow::Result<Option<Head>> {
        let blank = Plan::Job {
            prefix: Vec::new(),
            seq: Vec::new(),
            enablers: HashMap::new(),
        };
        let mut ctx = RunCtx::new(&blank, site, self.timing.patience);
        let t0 = Instant::now();
        ctx.before_document = true;
        let en = self.enabled(page, site, &mut ctx).await;
        ctx.before_document = false;
        let en = en?;
        tracing::trace!("ahead: quiet after {:?} ({:?})", t0.elapsed(), en.names);
        let [first] = &en.names[..] else {
            return Ok(None);
        };
        let is_chunk = matches!(first.parse(), Ok(EventName::Chunk { .. }))
            && matches!(en.how.get(first), Some(How::Proxy(_)));
        if !is_chunk {
            return Ok(None);
        }
        let mut steps = Vec::new();
        self.step(page, site, &mut ctx, &en, first.clone(), &mut steps)
            .await?;
        let Some(first) = steps.pop() else {
            bail!("the document's first piece was not enabled when run");
        };
        let t0 = Instant::now();
        let next = self.enabled(page, site, &mut ctx).await?;
        tracing::trace!(
            "ahead: quiet after {:?} ({} enabled)",
            t0.elapsed(),
            next.names.len()
        );
        Ok(Some(Head { ctx, first, next }))
    }

    async fn new_page(&self) -> anyhow::Result<Page> {
        Ok(self
            .browser
            .new_isolated_page(Some(&self.proxy_addr), Some("<-loopback>"))
            .await?)
    }

    async fn drive(
        &self,
        page: &Page,
        site: &Site,
        plan: &Plan,
        started: Instant,
        head: Option<Adopted>,
    ) -> anyhow::Result<RunOutput> {
        let (mut ctx, mut steps, mut carried) = match head {
            Some(h) => (h.ctx, h.steps, h.next),
            None => (
                RunCtx::new(plan, site, self.timing.patience),
                Vec::new(),
                None,
            ),
        };
        let mut stopped = None;
        let mut checkpoint: Option<Checkpoint> = None;
        // While a probe settles: DOM mutations seen so far, and timer-like steps in a row that
        // changed nothing.
        let mut mutations = 0u64;
        let mut idle_ticks = 0usize;
        let enabled_after = loop {
            let t0 = Instant::now();
            let en = match carried.take() {
                Some(en) => en,
                None => self.enabled(page, site, &mut ctx).await?,
            };
            tracing::trace!(
                "quiet after {:?} ({} enabled: {:?})",
                t0.elapsed(),
                en.names.len(),
                en.names
            );
            if !ctx.doc.is_empty() && en.page.ready && en.page.doc != ctx.doc {
                stopped = Some("the page navigated to another document".to_string());
                break en.names;
            }
            if steps.len() >= self.timing.max_steps {
                stopped = Some(format!("step limit ({}) reached", self.timing.max_steps));
                break en.names;
            }
            if started.elapsed() >= self.timing.run_limit {
                stopped = Some(format!("time limit ({:?}) reached", self.timing.run_limit));
                break en.names;
            }
            // The recorded order: the page was painted before the user acted, so a style sheet
            // that blocks painting arrives as soon as the page asks for it (a browser on a fast
            // network has it long before the parser is done), not after every piece of the
            // document; the scripts waiting for it then run in their own pieces' steps.
            let early_sheet = if ctx.plan.recorded && !ctx.painted {
                match self.unpainted_by(page, &en.names).await {
                    Unpainted::Painted => {
                        ctx.painted = true;
                        None
                    }
                    Unpainted::Held(sheet) => Some(sheet),
                    Unpainted::Loading => None,
                }
            } else {
                None
            };
            // The recorded order, the parser first: but a parser stopped at a script whose
            // response is held takes no more of the document until that script has run, so
            // the script comes before further pieces (released earlier, their scripts would
            // run in the blocking script's step, and no probe could put a response between).
            ctx.parser_waits_for = if ctx.plan.recorded
                && en.names.iter().any(|n| naming::is_chunk(n))
                && en.names.iter().any(|n| naming::is_loading(n))
            {
                self.parser_blocked_by(page, &en.names).await
            } else {
                None
            };
            let chosen = match (early_sheet, ctx.painted_first.take()) {
                (Some(sheet), first) => {
                    ctx.painted_first = first;
                    Choice::Run(sheet)
                }
                (None, Some((name, _))) if en.names.contains(&name) => Choice::Run(name),
                // The gesture is not offered again yet (the sheet's step is settling).
                (None, Some((name, since))) if since.elapsed() < self.timing.patience => {
                    ctx.painted_first = Some((name, since));
                    Choice::Wait
                }
                (None, _) => {
                    // A planned gesture that is not enabled may be waited for: how much of the
                    // document exists tells a parser still adding nodes from one that is done.
                    ctx.elements = match ctx.wanted() {
                        Some(w) if naming::is_user(w) && !en.names.iter().any(|n| n == w) => {
                            capture::elements(page).await
                        }
                        _ => None,
                    };
                    ctx.choose(&en.names)
                }
            };
            let mut name = match chosen {
                Choice::Run(name) => name,
                Choice::Checkpoint => {
                    checkpoint = Some(Checkpoint {
                        step: steps.len() as u32,
                        visible: capture::visible(page).await.unwrap_or_default(),
                    });
                    mutations = capture::mutations(page).await;
                    continue;
                }
                // The planned event may only be late (a parser still busy, a slow machine).
                Choice::Wait => {
                    ctx.after_gesture = false;
                    ctx.after_release = false;
                    tokio::time::sleep(self.timing.idle).await;
                    continue;
                }
                Choice::Done => {
                    // Nothing enabled: one more quiet period (four times --idle-ms, as nothing
                    // moves) for late requests (the icon, a beacon).
                    if !ctx.drained {
                        ctx.drained = true;
                        ctx.after_gesture = false;
                        ctx.after_release = false;
                        continue;
                    }
                    break en.names;
                }
            };
            if let Some(cp) = &checkpoint {
                let settled_steps = steps.len() - cp.step as usize;
                if settled_steps >= self.timing.settle_steps {
                    stopped = Some(format!(
                        "settle limit ({} steps) reached",
                        self.timing.settle_steps
                    ));
                    break en.names;
                }
                if idle_ticks >= self.timing.idle_ticks {
                    stopped = Some(format!(
                        "settled: only timers that change nothing ran for {idle_ticks} steps"
                    ));
                    break en.names;
                }
            }
            // A user sees nothing of the page while a style sheet that blocks its rendering
            // loads, so cannot click or type there yet (and Chromium holds such input for
            // seconds): the held sheet arrives first, then the gesture.
            if matches!(en.how.get(&name), Some(How::Gesture(_)))
                && let Unpainted::Held(sheet) = self.unpainted_by(page, &en.names).await
            {
                tracing::trace!("{name} waits for {sheet}: the page is not painted before it");
                ctx.painted_first = Some((std::mem::replace(&mut name, sheet), Instant::now()));
            }
            ctx.drained = false;
            let Some(how) = self
                .step(page, site, &mut ctx, &en, name, &mut steps)
                .await?
            else {
                break en.names;
            };
            if checkpoint.is_some() {
                // A poller keeps registering ticks that change nothing: once several in a row
                // have left the DOM as it was, the page has settled.
                let timer_like = matches!(&how, How::Callback(_, k) if is_timer_kind(k));
                if timer_like {
                    // Wait for the step's effect before reading the count.
                    let _ = self.enabled(page, site, &mut ctx).await?;
                    let now = capture::mutations(page).await;
                    idle_ticks = if now == mutations { idle_ticks + 1 } else { 0 };
                    mutations = now;
                } else {
                    idle_ticks = 0;
                }
            }
        };
        let t2 = Instant::now();
        // The trace first (flushing ends the open action), then the DOM (the picture is taken
        // last, by `run`, while the next execution's page loads).
        let mut snap = Snapshot::default();
        let trace = self.flushed_trace(page).await;
        tracing::trace!("trace flushed after {:?}", t2.elapsed());
        if let Some(t) = &trace {
            snapshot::from_trace(t, &mut snap);
        }
        snap.dom = capture::dom(page).await.unwrap_or_default();
        snap.visible = capture::visible(page).await.unwrap_or_default();
        snap.storage = capture::storage(page).await.unwrap_or_default();
        tracing::trace!("dom after {:?}", t2.elapsed());
        // Every request as the page sent it: method, URL, a digest of the body, the cookies;
        // telemetry (beacons, pings) marked, as its own class of difference.
        snap.requests = self
            .stack
            .proxy()
            .replayed_requests()
            .into_iter()
            .filter(|r| !r.url.contains("/__shepherd/") && !r.url.ends_with("/favicon.ico"))
            .map(|r| {
                let mut line = format!(
                    "{}{} {}",
                    if r.telemetry { "telemetry " } else { "" },
                    r.method,
                    r.url
                );
                if let Some(b) = r.body {
                    line.push_str(&format!(" body:{b}"));
                }
                if let Some(c) = r.cookie {
                    line.push_str(&format!(" cookie:{c}"));
                }
                line
            })
            .collect();
        // Navigations away from the page the runtime stopped: the page would have left.
        if let Ok(Value::Array(urls)) = page
            .evaluate(&NAVIGATIONS_JS.replace("SECRET", &js_str(&self.secret)))
            .await
        {
            snap.requests.extend(
                urls.iter()
                    .filter_map(Value::as_str)
                    .map(|u| format!("navigate {u}")),
            );
        }
        snap.requests.sort();
        tracing::debug!(
            "end state in {:?}, execution {:?}, skipped {:?}",
            t2.elapsed(),
            started.elapsed(),
            ctx.plan.skipped
        );
        Ok(RunOutput {
            steps,
            enabled_after,
            trace,
            snapshot: snap,
            skipped: ctx.plan.skipped,
            diverged: ctx.plan.diverged,
            stopped,
            elapsed: started.elapsed(),
            checkpoint,
            inert: ctx.inert.into_iter().collect(),
        })
    }

    /// Waits for a quiet state and lists what is enabled in it.
    async fn enabled(&self, page: &Page, site: &Site, ctx: &mut RunCtx) -> anyhow::Result<Enabled> {
        let holds = self.stack.proxy().holds();
        let start = Instant::now();
        // The last poll's page state and what this process saw with it.
        let mut last: Option<(PageState, Outside)> = None;
        // When the last change was seen: the page reports how long its own state has been
        // unchanged (so a change is dated when it happened, not when a poll saw it); the
        // proxy's holds, requests in flight and document bytes are dated when seen.
        let mut since = Instant::now();
        let mut asked = Instant::now();
        // Whether anything moved since the last step ran: once it has, a short idle period
        // is enough; a step whose effect cannot be seen (a style sheet arriving) waits the
        // long one. A gesture has had its effect: DevTools answers an input event once the
        // renderer has handled it, and the page runs input before the polls that follow.
        let mut moved = ctx.after_gesture;
        loop {
            let asked_before = std::mem::replace(&mut asked, Instant::now());
            let (state, unchanged) = self.page_state(page).await?;
            let seen = Instant::now();
            if state.ready && state.doc != ctx.installed {
                page.evaluate(&INSTALL_JS.replace("SECRET", &js_str(&self.secret)))
                    .await
                    .context("installing the explorer's decider")?;
                ctx.installed = state.doc.clone();
                if ctx.doc.is_empty() {
                    ctx.doc = state.doc.clone();
                }
                continue;
            }
            let outside = self.outside(page, ctx);
            let unheld = outside.unheld;
            if ctx.awaits_page {
                // The browser may run the script, or fire the request's event, well after the
                // network is done with it (its main thread busy): until the page shows a
                // change, the step waits the long quiet period, dated from the response.
                moved |= ctx.last_sig.as_ref().map(|s| &s.0) != Some(&state);
            } else {
                // A released callback has had its effect once its task has ended (the runtime
                // counts them, and the page is not settled before): one that changed nothing
                // visible (a load event nobody listens to any more) needs no long wait.
                moved |= ctx.after_release && state.releasing.is_some();
                moved |= ctx.last_sig.as_ref() != Some(&outside.sig(&state));
                moved |= outside.loaded;
            }
            let quiet_for = if ctx.before_document {
                // Nothing but the document can become enabled before its first piece: the
                // state is complete once the proxy holds it.
                Duration::ZERO
            } else if moved {
                self.timing.idle
            } else {
                self.timing.idle * 4
            };
            // The parser takes a chunk in tasks of its own (it resumes after a parser-blocking
            // script, and when the network hands it the bytes): a pause between them is not
            // the end of the chunk, and ending the step there files the rest of the chunk's
            // nodes under the next step (which then seems to create what the chunk did).
            // A released chunk counts once the browser has received bytes of its document
            // after the release: the parser takes them in the task that receives them. Until
            // then (or when the count never moves: a chunk the rewriter emptied) nothing may
            // change for eight times --idle-ms, as before the count existed.
            let doc_bytes = outside.doc_bytes;
            let arrived = match (&ctx.chunk_sent, doc_bytes) {
                (Some((_, before)), Some(now)) => now > *before,
                _ => false,
            };
            let quiet_for = match ctx.after_chunk {
                true if arrived => quiet_for.max(self.timing.idle * 2),
                true => quiet_for.max(self.timing.idle * 8),
                false => quiet_for,
            };
            // Bytes still arriving (a chunk in several reads) keep the state moving. A document
            // whose first chunk has arrived but whose runtime has not started yet is loading
            // its runtime (the parser waits for it): ending the step there would leave the
            // rest of the chunk to be parsed in the next step.
            let page_changed = last.as_ref().map(|(s, _)| s) != Some(&state);
            // A load is not a change of its own: what it causes is.
            let rest_changed = last.as_ref().is_none_or(|(_, o)| {
                (&o.held, o.unheld, o.doc_bytes)
                    != (&outside.held, outside.unheld, outside.doc_bytes)
            });
            // A page state that differs from the last poll's changed after that poll was sent,
            // whatever the page's clock says; one without a runtime is dated by the poll.
            let page_at = match unchanged {
                Some(d) => Some(seen.checked_sub(d).unwrap_or(seen)),
                None => page_changed.then_some(seen),
            };
            let page_at = page_at.map(|t| if page_changed { t.max(asked_before) } else { t });
            if rest_changed {
                since = seen;
            }
            if let Some(t) = page_at {
                since = since.max(t);
            }
            let settled = state.open < 0
                && unheld == 0
                && state.releasing.unwrap_or(0) == 0
                && self.registrations_requested(&state.registering)
                && (state.ready || !arrived)
                && (!ctx.before_document || !outside.held.is_empty());
            let open = state.open >= 0;
            let quiet = seen.saturating_duration_since(since);
            last = Some((state, outside.clone()));
            if settled && quiet >= quiet_for {
                tracing::trace!("quiet for {quiet_for:?} (moved {moved}, chunk bytes {arrived})");
                break;
            }
            if start.elapsed() >= self.timing.settle_limit {
                tracing::debug!(
                    "no quiet state within {:?} ({unheld} requests in flight, action open: {open}, runtime ready: {}, document bytes arrived: {arrived}; in flight: {:?}, held: {:?})",
                    self.timing.settle_limit,
                    last.as_ref().is_some_and(|(s, _)| s.ready),
                    page.requests_in_flight(),
                    holds
                        .pending()
                        .iter()
                        .map(|h| h.url.clone())
                        .collect::<Vec<_>>(),
                );
                break;
            }
            if !settled {
                // Something runs: look again soon.
                tokio::time::sleep(self.timing.poll).await;
                continue;
            }
            // Settled: the page dates its own changes, so it is asked again only when the
            // quiet period would be over. Until then only what this process sees is watched
            // (each question to the page is a task on its main thread, and DevTools traffic
            // in the browser): the proxy's holds, requests in flight, document bytes, loads.
            let deadline = seen + (quiet_for - quiet);
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                tokio::time::sleep((deadline - now).min(OUTSIDE_POLL)).await;
                if self.outside(page, ctx) != outside {
                    break;
                }
            }
        }
        let Some((state, outside)) = last else {
            bail!("no observation");
        };
        ctx.last_sig = Some(outside.sig(&state));
        // Name what the proxy holds: chunks (only the next one of each document can go out)
        // and responses (numbered per URL in the order the page asked for them).
        let mut names = Vec::new();
        let mut how = HashMap::new();
        let mut next_chunk: HashMap<String, (usize, u64)> = HashMap::new();
        let mut hold_urls = HashMap::new();
        for h in holds.pending() {
            // The browser's own icon request: not the page's, and it comes whenever.
            if h.url.ends_with("/favicon.ico") {
                holds.release(h.id);
                continue;
            }
            match h.chunk {
                Some((k, _)) => {
                    let e = next_chunk.entry(h.url.clone()).or_insert((k, h.id));
                    if k < e.0 {
                        *e = (k, h.id);
                    }
                }
                None => {
                    let name = ctx.proxy_name(h.id, &h.url);
                    how.insert(name.clone(), How::Proxy(h.id));
                    names.push(name);
                    hold_urls.insert(h.id, h.url);
                }
            }
        }
        for (url, (k, id)) in next_chunk {
            let name = EventName::Chunk {
                url: url.clone(),
                part: k,
            }
            .to_string();
            how.insert(name.clone(), How::Proxy(id));
            names.push(name);
            hold_urls.insert(id, url);
        }
        for (hid, stable, kind) in &state.held {
            let mut name = EventName::Callback(stable.clone()).to_string();
            if how.contains_key(&name) {
                // Two held callbacks with one stable id: the second is told apart by its hold.
                name = EventName::Callback(format!("{stable}~{hid}")).to_string();
            }
            how.insert(name.clone(), How::Callback(*hid, kind.clone()));
            names.push(name);
        }
        // The user's next gesture; for a probe also the gestures it moves (a user can act
        // before doing what they did earlier in the recording), but none once it settles.
        let mut offered: Vec<usize> = ctx.plan.moved_gestures.iter().copied().collect();
        if !ctx.settling() {
            offered.push(ctx.next_gesture);
        } else {
            offered.clear();
        }
        offered.sort_unstable();
        offered.dedup();
        let offered: Vec<(usize, &Gesture)> = offered
            .into_iter()
            .filter(|k| !ctx.gestures_run.contains(k))
            .filter_map(|k| Some((k, site.gestures.get(k)?)))
            .collect();
        let gestures: Vec<&Gesture> = offered.iter().map(|(_, g)| *g).collect();
        let answers = self.actionable(page, &gestures).await;
        for ((k, _), act) in offered.into_iter().zip(answers) {
            let name = EventName::User(k).to_string();
            match act {
                Actionable::Yes => {
                    how.insert(name.clone(), How::Gesture(k));
                    names.push(name);
                }
                Actionable::Missing => {}
                Actionable::Inert(why) => {
                    if ctx.plan.moved_gestures.contains(&k) {
                        ctx.inert.entry(name).or_insert(why);
                    }
                }
            }
        }
        names.sort();
        for n in &names {
            ctx.seen(n);
        }
        Ok(Enabled {
            names,
            how,
            page: state,
            hold_urls,
        })
    }

    /// Whether the proxy has had a request for every service worker script the page is
    /// registering: the browser fetches it in its own process, some time after `register()`,
    /// and a step that ended before would leave the request to appear after the next one,
    /// which would then seem to have caused it.
    fn registrations_requested(&self, scripts: &[String]) -> bool {
        if scripts.is_empty() {
            return true;
        }
        let proxy = self.stack.proxy();
        let held = proxy.holds().pending();
        let seen = proxy.replayed_requests();
        // A request carries no fragment.
        scripts.iter().all(|s| {
            let s = s.split_once('#').map_or(s.as_str(), |(u, _)| u);
            held.iter().any(|h| h.url == s) || seen.iter().any(|r| r.url == s)
        })
    }

    /// What this process sees of a step's effects, without asking the page.
    fn outside(&self, page: &Page, ctx: &RunCtx) -> Outside {
        let held = self.stack.proxy().holds().pending();
        let queued = queued_origins(&held);
        let unheld = page
            .requests_in_flight()
            .into_iter()
            .filter(|u| {
                !u.contains("/__shepherd/")
                    && !u.starts_with("data:")
                    && !u.starts_with("blob:")
                    && !held.iter().any(|h| &h.url == u)
                    && (queued.is_empty() || origin_of(u).is_none_or(|o| !queued.contains(&o)))
            })
            .count()
            // A frame whose document has arrived is parsing it until its load: that load (an
            // event of the page) is the step's, not the next step's.
            + page.frames_parsing();
        Outside {
            held: held.iter().map(|h| h.id).collect(),
            unheld,
            doc_bytes: ctx
                .chunk_sent
                .as_ref()
                .map(|(url, _)| page.document_bytes(url)),
            // A released response that the browser has finished loading has had its effect
            // on the network, even when no poll saw it in flight.
            loaded: ctx
                .fired_at
                .is_some_and(|t| page.last_network_activity() > t),
        }
    }

    /// The controller's state, and how long it has been unchanged (`None` with no runtime).
    async fn page_state(&self, page: &Page) -> anyhow::Result<(PageState, Option<Duration>)> {
        let v = match page
            .evaluate(&OBSERVE_JS.replace("SECRET", &js_str(&self.secret)))
            .await
        {
            Ok(v) => v,
            // Between documents (navigation in progress): not ready yet.
            Err(
                shepherd_browser::Error::JavaScript(_) | shepherd_browser::Error::Protocol { .. },
            ) => Value::Null,
            Err(e) => return Err(e.into()),
        };
        if v.is_null() {
            let none = PageState {
                open: -1,
                ..PageState::default()
            };
            return Ok((none, None));
        }
        // A runtime older than `unchangedMs` (a cached script) is dated by the poll, and so is
        // a figure no duration can hold (the page's scripts run in this world).
        let unchanged = v["unchanged"]
            .as_f64()
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok());
        let held = v["held"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|d| {
                        Some((
                            d[0].as_u64()?,
                            d[1].as_str()?.to_string(),
                            d[2].as_str().unwrap_or_default().to_string(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let state = PageState {
            ready: true,
            doc: v["doc"].as_str().unwrap_or_default().to_string(),
            actions: v["actions"].as_u64().unwrap_or(0) as u32,
            open: v["open"].as_i64().unwrap_or(-1),
            held,
            releasing: v["releasing"].as_u64(),
            registering: v["registering"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|u| u.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        };
        Ok((state, unchanged))
    }

    /// What keeps the page from being painted: style sheets of the head that are parser-
    /// inserted (or marked `blocking=render`), whose media apply and which have not loaded;
    /// with the enabled response (a held `net:` step) of one of them.
    async fn unpainted_by(&self, page: &Page, enabled: &[String]) -> Unpainted {
        let Ok(v) = page.evaluate_isolated(UNPAINTED_JS).await else {
            return Unpainted::Loading;
        };
        let pending: Vec<&str> = v["pending"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if pending.is_empty() {
            // Until the body has begun, the head (and its sheets) may still be on its way.
            return if v["body"] == true {
                Unpainted::Painted
            } else {
                Unpainted::Loading
            };
        }
        enabled
            .iter()
            .find(|n| {
                n.strip_prefix("net:")
                    .and_then(|rest| rest.rsplit_once('#'))
                    .is_some_and(|(url, _)| pending.contains(&url))
            })
            .map_or(Unpainted::Loading, |n| Unpainted::Held(n.clone()))
    }

    /// The held response of the script the parser waits for: the document's last script is
    /// a classic external one, neither `async` nor `defer`, while the document is loading, and
    /// its response is enabled (held by the proxy).
    async fn parser_blocked_by(&self, page: &Page, enabled: &[String]) -> Option<String> {
        let v = page.evaluate_isolated(PARSER_BLOCKED_JS).await.ok()?;
        let src = v.as_str()?;
        enabled
            .iter()
            .find(|n| {
                n.strip_prefix("net:")
                    .and_then(|rest| rest.rsplit_once('#'))
                    .is_some_and(|(url, _)| url == src)
            })
            .cloned()
    }

    /// Whether a user could perform each gesture now: its target is there and can be acted
    /// on (a disabled control takes no click or key, a read-only field no typing). One
    /// question for all of them (a probe offers every gesture it moves at every step).
    async fn actionable(&self, page: &Page, gestures: &[&Gesture]) -> Vec<Actionable> {
        // A key the page's focus aimed goes wherever the focus is: the page takes keys once
        // it has a body, whether the recorded target exists yet or not.
        let asked: Vec<Value> = gestures
            .iter()
            .filter_map(|g| {
                let sel = g.needs()?;
                let typing = matches!(
                    g.kind,
                    GestureKind::KeyDown(_) | GestureKind::KeyUp(_) | GestureKind::Text(_)
                );
                Some(json!([sel, typing]))
            })
            .collect();
        let mut answers = if asked.is_empty() {
            Vec::new()
        } else {
            let js = format!(
                "(() => {{ const out = []; for (const [sel, typing] of {}) {{ \
                 let e = null; try {{ e = document.querySelector(sel); }} catch (_) {{}} \
                 if (e === null) out.push('missing'); \
                 else if (e.disabled === true || (e.closest && e.closest('fieldset[disabled]'))) out.push('disabled'); \
                 else if (typing && e.readOnly === true) out.push('read-only'); \
                 else out.push('yes'); }} return out; }})()",
                Value::Array(asked)
            );
            match page.evaluate_isolated(&js).await {
                Ok(Value::Array(a)) => a,
                _ => Vec::new(),
            }
        }
        .into_iter();
        gestures
            .iter()
            .map(|g| {
                if g.needs().is_none() {
                    return Actionable::Yes;
                }
                match answers.next() {
                    Some(Value::String(s)) if s == "yes" => Actionable::Yes,
                    Some(Value::String(s)) if s == "disabled" || s == "read-only" => {
                        Actionable::Inert(format!("{} is {s}", g.path))
                    }
                    _ => Actionable::Missing,
                }
            })
            .collect()
    }

    async fn fire(
        &self,
        page: &Page,
        site: &Site,
        how: &How,
        ctx: &mut RunCtx,
    ) -> anyhow::Result<()> {
        match how {
            How::Proxy(id) => {
                self.stack.proxy().holds().release(*id);
            }
            How::Callback(hid, _) => {
                let js = format!(
                    "__shepherd.control({}).release({hid})",
                    js_str(&self.secret)
                );
                page.evaluate(&js).await?;
            }
            How::Gesture(k) => {
                ctx.gestures_run.insert(*k);
                if !ctx.plan.moved_gestures.contains(k) {
                    ctx.next_gesture = k + 1;
                }
                if let Some(g) = site.gestures.get(*k)
                    && let Err(e) = perform(page, g).await
                {
                    tracing::debug!("gesture {} failed: {e:#}", g.describe());
                }
            }
        }
        Ok(())
    }

    async fn flushed_trace(&self, page: &Page) -> Option<Trace> {
        let js = format!(
            "(async () => {{ const C = __shepherd.control({}); await C.flush(); return __shepherd.doc; }})()",
            js_str(&self.secret)
        );
        let doc = match tokio::time::timeout(Duration::from_secs(10), page.evaluate(&js)).await {
            Ok(Ok(v)) => v.as_str()?.to_string(),
            _ => return None,
        };
        let bytes = self.sink.take(&doc);
        match shepherd_trace::read_jsonl(&bytes[..]) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!("unreadable trace of {doc}: {e}");
                None
            }
        }
    }
}

/// Performs a gesture with trusted input.
async fn perform(page: &Page, g: &Gesture) -> anyhow::Result<()> {
    let sel = g.selector();
    let el = || Element::Selector(sel.clone().unwrap_or_else(|| "body".into()));
    // Keys go where the focus is, as a user's do: the target is focused only when nothing is
    // (the recording's focus came from something the replay does not perform: the driver's
    // focus, an `autofocus`). A field the page focused meanwhile keeps the focus, so an order
    // in which a script moves the focus while the user types sends the keys where that user's
    // would land.
    let focus_target = async {
        if g.focuses && g.aim == Aim::Target && sel.is_some() {
            // The user focused the field as part of this gesture (a click or Tab, then the
            // first key): the focus moves there first, from wherever it was.
            page.focus(el()).await?;
        } else if let Some(s) = sel.as_ref().filter(|_| g.aim == Aim::Target) {
            let js = format!(
                "(() => {{ const a = document.activeElement; \
                 if (a === document.querySelector({})) return 'target'; \
                 return !a || a === document.body || a === document.documentElement ? 'none' : 'other'; }})()",
                js_str(s)
            );
            let focused = page.evaluate_isolated(&js).await.ok();
            if focused.as_ref().and_then(Value::as_str) == Some("none") {
                page.focus(el()).await?;
            }
        }
        anyhow::Ok(())
    };
    match &g.kind {
        GestureKind::Click => {
            page.click(el()).await?;
        }
        GestureKind::Hover => {
            page.hover(el()).await?;
        }
        GestureKind::Focus => {
            page.focus(el()).await?;
        }
        GestureKind::KeyDown(k) => {
            focus_target.await?;
            if page.key_down(k).await.is_err() {
                page.insert_text(k).await?;
            }
        }
        GestureKind::KeyUp(k) => {
            // Keys without a definition were inserted as text: there is nothing to release.
            let _ = page.key_up(k).await;
        }
        GestureKind::Text(want) => {
            focus_target.await?;
            // The field the text goes into: the target, or for text the page's focus aimed,
            // whatever has the focus.
            let field = match (g.aim, &sel) {
                (Aim::Focus, _) => Some("document.activeElement".to_string()),
                (Aim::Target, Some(s)) => Some(format!("document.querySelector({})", js_str(s))),
                (Aim::Target, None) => None,
            };
            let current = match &field {
                Some(f) => page
                    .evaluate_isolated(&format!(
                        "(() => {{ const e = {f}; return e && 'value' in e ? String(e.value) : ''; }})()"
                    ))
                    .await?
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                None => String::new(),
            };
            match want.strip_prefix(current.as_str()) {
                Some(rest) if !rest.is_empty() => page.insert_text(rest).await?,
                Some(_) => {}
                None => {
                    if let Some(f) = &field {
                        let _ = page
                            .evaluate_isolated(&format!(
                                "(() => {{ const e = {f}; if (e && e.select) e.select(); return true; }})()"
                            ))
                            .await;
                    }
                    page.insert_text(want).await?;
                }
            }
        }
    }
    Ok(())
}

/// Whether a controller kind is a timer-like callback (a timeout, an interval tick, a frame,
/// an idle callback): what a poller runs.
fn is_timer_kind(kind: &str) -> bool {
    shepherd_trace::ActionKind::parse(kind).is_timer_like()
}

/// A JavaScript string literal.
fn js_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The enabled event that stands for a planned one: itself or its only fuzzy match, else the
/// only one that differs from it by the parser's delivery ordinals (how the document's pieces
/// were parsed varies between executions).
fn planned(enabled: &[String], want: &str) -> Option<String> {
    match naming::find_recorded(enabled, want)[..] {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// Whether a user could perform a gesture now.
enum Actionable {
    /// Yes.
    Yes,
    /// Its target is not there (yet).
    Missing,
    /// Its target is there but takes no such input, and why (`#total is read-only`).
    Inert(String),
}

/// What to do next.
enum Choice {
    /// Run this enabled event.
    Run(String),
    /// The planned event is not enabled yet: look again shortly.
    Wait,
    /// Nothing is enabled.
    Done,
    /// A probe's moved events have run: take the checkpoint, then let the page settle.
    Checkpoint,
}

/// An execution's plan and how far it has come through it: everything of [`RunCtx`] that
/// depends on the plan (the rest is what the execution has seen), so an execution run ahead
/// before its plan was known takes its plan over as one value ([`Head::adopt`]).
struct PlanState {
    /// Event -> what enabled it in the parent execution.
    enablers: HashMap<String, String>,
    /// The plan as names: prefix, then sequence (recorded order: all in `seq`).
    prefix: Vec<String>,
    seq: Vec<String>,
    pos_prefix: usize,
    pos_seq: usize,
    recorded: bool,
    /// A race-directed probe: after the plan, only the page's own events run.
    probe: bool,
    /// The probe's checkpoint was taken: the page is settling.
    checkpoint_taken: bool,
    skipped: Vec<String>,
    diverged: bool,
    /// Gestures a probe moves: offered whenever their target exists, whatever the user's
    /// recorded order.
    moved_gestures: std::collections::BTreeSet<usize>,
}

/// The state of one execution: its plan and what it has seen.
struct RunCtx {
    /// How long a planned event is waited for before it is skipped (an eighth of it for the
    /// approximately replayed part of a job, where skipping is expected).
    patience: Duration,
    /// The planned event waited for, since when, and the quiet state the wait last saw (with
    /// the document's element count, for a gesture).
    waiting: Option<(String, Instant, Option<Seen>)>,
    /// Elements in the document at this quiet state, read while a planned gesture is not
    /// enabled (`None` otherwise, or when the page could not tell).
    elements: Option<u64>,
    /// The plan, and how far the execution has come through it.
    plan: PlanState,
    /// Events run so far.
    ran: HashSet<String>,
    next_gesture: usize,
    /// Gestures that have run.
    gestures_run: HashSet<usize>,
    /// Moved gestures whose target was there but could not be acted on (read-only, disabled),
    /// with why: what a probe's moved side waited for.
    inert: BTreeMap<String, String>,
    /// Document whose controller has the explorer's decider.
    installed: String,
    /// The first document of the execution.
    doc: String,
    /// Proxy item id -> name.
    names: HashMap<u64, String>,
    per_url: HashMap<String, usize>,
    requests: Vec<String>,
    /// When each name was first enabled (a counter).
    first_seen: HashMap<String, u64>,
    clock: u64,
    /// The last observation had nothing enabled (one more look before ending).
    drained: bool,
    /// The step that just ran released an HTML chunk.
    after_chunk: bool,
    /// The step that just ran was a gesture.
    after_gesture: bool,
    /// The last step released a held callback.
    after_release: bool,
    /// That chunk's document URL and the bytes the browser had received of it before.
    chunk_sent: Option<(String, u64)>,
    /// When the step that just ran released a response or a chunk.
    fired_at: Option<Instant>,
    /// The response the step released is one the page runs code for when it arrives (a
    /// script, an XHR's or a `fetch`'s answer): the step has had its effect once the page has
    /// changed, not once the network is done with it.
    awaits_page: bool,
    /// The quiet state in which a wait for a planned event last ran out.
    gave_up_at: Option<Sig>,
    /// A gesture chosen while the page was not painted yet, and when: it runs as soon as the
    /// style sheet that held the painting has arrived (before anything else is chosen).
    painted_first: Option<(String, Instant)>,
    /// No style sheet keeps the page from being painted any more (the recorded order stops
    /// asking).
    painted: bool,
    /// The held script the parser is stopped at (asked before each step of the recorded
    /// order while document pieces and responses are both enabled).
    parser_waits_for: Option<String>,
    /// What the last quiet state looked like, less what the last step released: any other
    /// difference is the step's effect.
    last_sig: Option<Sig>,
    /// Planned events that are not enabled are skipped at once ([`Head::adopt`]).
    no_waiting: bool,
    /// The page was just navigated and its document is on its way: the first state is the
    /// proxy holding its first piece ([`Worker::head`]).
    before_document: bool,
}

impl RunCtx {
    fn new(plan: &Plan, site: &Site, patience: Duration) -> RunCtx {
        let (prefix, seq, recorded, enablers) = match plan {
            Plan::Recorded => (
                Vec::new(),
                site.recorded_order.clone(),
                true,
                HashMap::new(),
            ),
            Plan::Job {
                prefix,
                seq,
                enablers,
            } => (prefix.clone(), seq.clone(), false, enablers.clone()),
            Plan::Probe { prefix, moved } => (prefix.clone(), moved.clone(), false, HashMap::new()),
        };
        let probe = matches!(plan, Plan::Probe { .. });
        let moved_gestures = if probe {
            seq.iter()
                .filter_map(|n| match n.parse() {
                    Ok(EventName::User(k)) => Some(k),
                    _ => None,
                })
                .collect()
        } else {
            Default::default()
        };
        RunCtx {
            painted_first: None,
            painted: false,
            parser_waits_for: None,
            patience,
            waiting: None,
            elements: None,
            plan: PlanState {
                enablers,
                prefix,
                seq,
                pos_prefix: 0,
                pos_seq: 0,
                recorded,
                probe,
                checkpoint_taken: false,
                skipped: Vec::new(),
                diverged: false,
                moved_gestures,
            },
            ran: HashSet::new(),
            next_gesture: 0,
            gestures_run: HashSet::new(),
            inert: BTreeMap::new(),
            installed: String::new(),
            doc: String::new(),
            names: HashMap::new(),
            per_url: HashMap::new(),
            requests: Vec::new(),
            first_seen: HashMap::new(),
            clock: 0,
            drained: false,
            after_chunk: false,
            after_gesture: false,
            after_release: false,
            chunk_sent: None,
            fired_at: None,
            awaits_page: false,
            gave_up_at: None,
            last_sig: None,
            no_waiting: false,
            before_document: false,
        }
    }

    /// A probe past its checkpoint: no gesture runs any more.
    fn settling(&self) -> bool {
        self.plan.probe && self.plan.checkpoint_taken
    }

    fn proxy_name(&mut self, id: u64, url: &str) -> String {
        if let Some(n) = self.names.get(&id) {
            return n.clone();
        }
        let n = self.per_url.entry(url.to_string()).or_insert(0);
        *n += 1;
        let name = EventName::Net {
            url: url.to_string(),
            nth: *n,
        }
        .to_string();
        self.names.insert(id, name.clone());
        self.requests.push(url.to_string());
        name
    }

    fn seen(&mut self, name: &str) {
        if !self.first_seen.contains_key(name) {
            self.clock += 1;
            self.first_seen.insert(name.to_string(), self.clock);
        }
    }

    /// Whether to wait longer for `want` before skipping it. Never for callbacks held when
    /// registered (they cannot be late). The recorded order and a job's prefix wait the whole
    /// patience (those events did happen at this point); the approximately replayed part skips
    /// at once when what enabled the event in the parent has not run here, and otherwise waits
    /// an eighth of it (skipping is expected there). A gesture waits only while the page
    /// changes: its target is found (and enabled) by the DOM, which only the page's own
    /// actions and the parser change, so a quiet state seen twice with nothing changed between
    /// will not bring it (the browser's own late work, a request or an image's load, is waited
    /// for the whole patience).
    fn patient(&mut self, want: &str, full: bool) -> bool {
        if self.no_waiting {
            return false;
        }
        let Ok(name) = want.parse::<EventName>() else {
            return false;
        };
        if !name.appears_late() {
            return false;
        }
        let limit = if full {
            self.patience
        } else {
            match self.plan.enablers.get(want) {
                Some(by) if !self.ran.contains(by) => return false,
                _ => self.patience / 8,
            }
        };
        // Nothing has changed since the last wait ran out: what did not come then (a
        // transition the browser decided not to run, the second of two such events) is not
        // coming now either.
        if self.gave_up_at.is_some() && self.gave_up_at == self.last_sig {
            return false;
        }
        let gesture = matches!(name, EventName::User(_));
        let now = self.last_sig.clone().map(|sig| (sig, self.elements));
        match &mut self.waiting {
            Some((w, since, seen)) if w == want => {
                // The parser adds nodes without actions of the page: an unchanged element
                // count says it added none either.
                let still = gesture && self.elements.is_some() && seen.is_some() && *seen == now;
                let wait = since.elapsed() < limit && !still;
                if wait {
                    *seen = now;
                } else {
                    self.gave_up_at = self.last_sig.clone();
                }
                wait
            }
            _ => {
                self.waiting = Some((want.to_string(), Instant::now(), now));
                true
            }
        }
    }

    /// The planned event `choose` looks for first: the prefix's next, else the sequence's.
    fn wanted(&self) -> Option<&str> {
        self.plan
            .prefix
            .get(self.plan.pos_prefix)
            .or_else(|| self.plan.seq.get(self.plan.pos_seq))
            .map(String::as_str)
    }

    /// The next event to run.
    fn choose(&mut self, enabled: &[String]) -> Choice {
        while self.plan.pos_prefix < self.plan.prefix.len() {
            let want = self.plan.prefix[self.plan.pos_prefix].clone();
            if let Some(e) = planned(enabled, &want) {
                self.plan.pos_prefix += 1;
                return Choice::Run(e);
            }
            if self.patient(&want, true) {
                return Choice::Wait;
            }
            self.plan.pos_prefix += 1;
            self.plan.diverged = true;
            self.plan.skipped.push(want);
        }
        while self.plan.pos_seq < self.plan.seq.len() {
            let want = self.plan.seq[self.plan.pos_seq].clone();
            let hit = if self.plan.recorded {
                self.oldest_of(naming::find_recorded(enabled, &want))
            } else {
                planned(enabled, &want)
            };
            if let Some(e) = hit {
                self.plan.pos_seq += 1;
                return Choice::Run(e);
            }
            // The recorded order: let the page load further until the event shows up. The
            // parser first: a browser usually parses what it has received before a response
            // it asked for while parsing arrives, and a fixed preference keeps the initial
            // execution the same from run to run (which of the two the proxy saw first is
            // a matter of microseconds).
            if self.plan.recorded
                && let Some(load) = self
                    .parser_waits_for
                    .clone()
                    .filter(|n| enabled.contains(n))
                    .or_else(|| self.oldest(enabled, naming::is_chunk))
                    .or_else(|| self.oldest(enabled, naming::is_loading))
            {
                return Choice::Run(load);
            }
            // A probe waits the whole patience for what it moves: those events are its point.
            if self.patient(&want, self.plan.recorded || self.plan.probe) {
                return Choice::Wait;
            }
            self.plan.pos_seq += 1;
            self.plan.skipped.push(want);
        }
        if self.plan.probe {
            if !self.plan.checkpoint_taken {
                self.plan.checkpoint_taken = true;
                return Choice::Checkpoint;
            }
            // Settling: the page's own events only, oldest first.
            return match self.oldest(enabled, |n| !naming::is_user(n)) {
                Some(n) => Choice::Run(n),
                None => Choice::Done,
            };
        }
        match self
            .oldest(enabled, |n| !naming::is_user(n))
            .or_else(|| self.oldest(enabled, naming::is_user))
        {
            Some(n) => Choice::Run(n),
            None => Choice::Done,
        }
    }

    fn oldest_of(&self, candidates: Vec<&String>) -> Option<String> {
        candidates
            .into_iter()
            .min_by_key(|n| {
                (
                    self.first_seen.get(*n).copied().unwrap_or(u64::MAX),
                    (*n).clone(),
                )
            })
            .cloned()
    }

    fn oldest(&self, enabled: &[String], keep: impl Fn(&str) -> bool) -> Option<String> {
        enabled
            .iter()
            .filter(|n| keep(n))
            .min_by_key(|n| {
                (
                    self.first_seen.get(*n).copied().unwrap_or(u64::MAX),
                    (*n).clone(),
                )
            })
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(id: u64, url: &str) -> HeldInfo {
        HeldInfo {
            id,
            url: url.to_string(),
            kind: "response",
            chunk: None,
        }
    }

    fn quiet(actions: u32) -> Sig {
        let page = PageState {
            ready: true,
            actions,
            ..PageState::default()
        };
        (page, vec![7], 0)
    }

    #[test]
    fn a_gesture_is_given_up_once_a_quiet_page_stays_as_it_was() {
        let site = Site::from_trace(PathBuf::new(), "http://a.test/".into(), Trace::default());
        let plan = Plan::Probe {
            prefix: Vec::new(),
            moved: vec!["user:0".into()],
        };
        let mut ctx = RunCtx::new(&plan, &site, Duration::from_secs(600));
        assert_eq!(ctx.wanted(), Some("user:0"));
        ctx.last_sig = Some(quiet(1));
        ctx.elements = Some(10);
        assert!(
            ctx.patient("user:0", true),
            "the first quiet state starts the wait"
        );
        ctx.last_sig = Some(quiet(2));
        assert!(
            ctx.patient("user:0", true),
            "the page changed: its target may come"
        );
        ctx.elements = Some(12);
        assert!(
            ctx.patient("user:0", true),
            "the parser added elements: its target may come"
        );
        ctx.elements = None;
        assert!(
            ctx.patient("user:0", true),
            "the page could not tell its elements"
        );
        ctx.elements = Some(12);
        assert!(ctx.patient("user:0", true));
        assert!(
            !ctx.patient("user:0", true),
            "quiet twice, the same: it will not"
        );
        assert!(
            !ctx.patient("user:1", true),
            "nothing changed since the last give-up"
        );

        // A response is the browser's to send, whenever: it is waited for the patience.
        let mut ctx = RunCtx::new(&plan, &site, Duration::from_secs(600));
        ctx.last_sig = Some(quiet(1));
        let late = "net:http://a.test/late.png#1";
        assert!(ctx.patient(late, true));
        assert!(ctx.patient(late, true));
        assert!(ctx.patient(late, true));
    }

    #[test]
    fn a_first_step_run_ahead_is_taken_over_only_as_the_plan_would_have_run_it() {
        let site = Site::from_trace(PathBuf::new(), "http://a.test/".into(), Trace::default());
        let chunk = "chunk:http://a.test/#0".to_string();
        assert!(matches!(chunk.parse(), Ok(EventName::Chunk { .. })));
        let after = "net:http://a.test/app.js#1".to_string();
        let head = || {
            let blank = Plan::Job {
                prefix: Vec::new(),
                seq: Vec::new(),
                enablers: HashMap::new(),
            };
            let mut ctx = RunCtx::new(&blank, &site, Duration::from_secs(600));
            ctx.ran.insert(chunk.clone());
            ctx.doc = "doc-1".into();
            Head {
                ctx,
                first: Step {
                    name: chunk.clone(),
                    kind: "chunk".into(),
                    enabled: vec![chunk.clone()],
                    first_action: 0,
                },
                next: Enabled {
                    names: vec![after.clone()],
                    how: HashMap::from([(after.clone(), How::Proxy(2))]),
                    page: PageState::default(),
                    hold_urls: HashMap::new(),
                },
            }
        };
        let patience = Duration::from_secs(600);

        // A job that starts with the piece goes on after it, in the state seen after it.
        let job = Plan::Job {
            prefix: vec![chunk.clone(), after.clone()],
            seq: Vec::new(),
            enablers: HashMap::new(),
        };
        let a = head()
            .adopt(&job, &site, patience)
            .expect("the job begins with the piece");
        assert_eq!(
            (a.ctx.plan.pos_prefix, a.ctx.wanted()),
            (1, Some(after.as_str()))
        );
        assert!(a.ctx.plan.skipped.is_empty() && !a.ctx.plan.diverged);
        assert_eq!(a.ctx.doc, "doc-1", "the execution's own state is kept");
        assert_eq!(a.steps.len(), 1);
        assert!(a.next.is_some_and(|n| n.names == [after.clone()]));

        // A probe that moves typing before the document: the typing cannot come before the
        // piece (its field does not exist), so it is skipped, as the plan's waits would end;
        // the state after the piece is listed again, with the moved gesture offered.
        let probe = Plan::Probe {
            prefix: Vec::new(),
            moved: vec!["user:0".into(), chunk.clone()],
        };
        let a = head()
            .adopt(&probe, &site, patience)
            .expect("the probe runs the piece once the typing is skipped");
        assert_eq!(a.ctx.plan.skipped, ["user:0"]);
        assert!(a.ctx.plan.probe && a.ctx.plan.moved_gestures.contains(&0));
        assert!(a.next.is_none(), "listed again with the moved gesture");
        assert!(!a.ctx.no_waiting, "later waits are the plan's own");

        // A probe whose moved events all come before the piece takes its checkpoint first,
        // in the state before the piece: not what ran ahead.
        let early = Plan::Probe {
            prefix: Vec::new(),
            moved: vec!["user:0".into()],
        };
        assert!(head().adopt(&early, &site, patience).is_none());
        // The recorded order also asks, in its first state, what keeps the page unpainted.
        assert!(head().adopt(&Plan::Recorded, &site, patience).is_none());
    }

    #[test]
    fn origins_are_scheme_host_and_port() {
        let origin = |u| origin_of(u).unwrap_or_default();
        assert_eq!(origin("http://a.test:8080/x/y?z"), "http://a.test:8080");
        assert_eq!(origin("https://a.test?q"), "https://a.test");
        assert_eq!(origin("http://a.test:80/"), "http://a.test");
        assert_eq!(origin_of("data:text/plain,x"), None);
    }

    #[test]
    fn an_origin_is_queued_once_six_of_its_responses_are_held() {
        // A document held in three parts is one connection: with four scripts that is five.
        let mut list: Vec<HeldInfo> = (0..3).map(|i| held(i, "http://a.test/")).collect();
        list.extend((1..=4).map(|i| held(10 + i, &format!("http://a.test/s{i}.js"))));
        list.extend((1..=6).map(|i| held(20 + i, &format!("https://b.test/s{i}.js"))));
        assert!(queued_origins(&list).is_empty(), "five connections, and h2");
        list.push(held(30, "http://a.test/s5.js"));
        assert_eq!(
            queued_origins(&list).into_iter().collect::<Vec<_>>(),
            vec!["http://a.test".to_string()]
        );
    }
}
