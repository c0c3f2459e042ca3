//! Starting Shepherd for one mode: the proxy with the response source the mode implies, the
//! instrumenting rewriter for that mode, and the runtime rendered for it. [`Run`] ties mode and
//! source together, so a recording proxy that does not record, a replay that dials out, or a
//! repair proxy that rewrites JavaScript cannot be asked for.

use crate::rewriter::InstrumentRewriter;
use anyhow::Context;
use bytes::Bytes;
use shepherd_policies::compile::DocumentGates;
use shepherd_proxy::{
    AllowList, CertificateAuthority, Limits, Proxy, ProxyAuth, ProxyConfig, ProxyHandle,
    ReplayOptions, ResponseSource, SiteCertificates, TraceSink, UpstreamTrust,
};
use shepherd_runtime::Mode;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// What to run.
#[derive(Debug)]
pub enum Run {
    /// Live traffic, recorded into `out` (a new session): pages instrumented, their traces
    /// uploaded into the same file.
    Record {
        /// The recording to create or extend.
        out: PathBuf,
        /// How origin certificates are verified.
        trust: UpstreamTrust,
    },
    /// Live traffic in front of a site (forward, or reverse with [`StackOptions::reverse`]):
    /// the runtime is injected so policies can act, nothing is rewritten or recorded.
    Serve {
        /// How origin certificates are verified.
        trust: UpstreamTrust,
    },
    /// A recording served with no network, pages instrumented as when recorded and run in
    /// deterministic mode; their traces go into a new session of `trace_out` (default: the
    /// recording itself).
    Replay {
        /// The recording served.
        recording: PathBuf,
        /// Matching and date shifting.
        options: ReplayOptions,
        /// Where traces of replayed pages go.
        trace_out: Option<PathBuf>,
    },
}

impl Run {
    /// The mode this run puts pages in.
    pub fn mode(&self) -> Mode {
        match self {
            Run::Record { .. } => Mode::Record,
            Run::Serve { .. } => Mode::Repair,
            Run::Replay { .. } => Mode::Replay,
        }
    }

    fn into_source(self) -> ResponseSource {
        match self {
            Run::Record { out, trust } => ResponseSource::Live {
                trust,
                record: Some(out),
            },
            Run::Serve { trust } => ResponseSource::Live {
                trust,
                record: None,
            },
            Run::Replay {
                recording,
                options,
                trace_out,
            } => ResponseSource::Recording {
                path: recording,
                options,
                trace_out,
            },
        }
    }
}

/// How the proxy of a run listens and what the runtime is configured with.
#[derive(Clone)]
pub struct StackOptions {
    /// Address to listen on (loopback, port 0 by default).
    pub listen: SocketAddr,
    /// Credentials required from clients (off loopback, these or an allow list are
    /// mandatory).
    pub auth: Option<ProxyAuth>,
    /// Networks clients may connect from (`None`: any).
    pub allow: Option<AllowList>,
    /// The site's own certificates, for visitors of a reverse proxy that start TLS on the
    /// listener (empty: leaves of the CA).
    pub site_certs: Arc<SiteCertificates>,
    /// Reverse-proxy every origin-form request to this origin.
    pub reverse: Option<http::Uri>,
    /// The operator secret (random when `None`): the control listener's bearer token and what
    /// `__shepherd.control(secret)` answers to; pages only ever see its hash.
    pub operator_secret: Option<String>,
    /// Where the control listener listens (`None`: control in process only).
    pub control_listen: Option<SocketAddr>,
    /// Safety limits.
    pub limits: Limits,
    /// Where instrumented scripts are cached on disk (memory only when `None`).
    pub cache_dir: Option<PathBuf>,
    /// Seeded randomness and a virtual clock outside replay too (replay always has them).
    pub deterministic: bool,
    /// Where pages' traces go instead of the run's recording (tests and the explorer read
    /// them in process).
    pub trace_sink: Option<Arc<dyn TraceSink>>,
    /// Repair policies the controller enforces (`--policy`): compiled into the runtime's
    /// configuration, so they are in force before any page script runs.
    pub policy: Option<shepherd_policies::PolicySet>,
    /// Top-level documents hold their callbacks for the explorer from the first one on
    /// (`shepherd_runtime::Config::explorer`).
    pub explorer: bool,
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            auth: None,
            allow: None,
            site_certs: Arc::new(SiteCertificates::default()),
            reverse: None,
            operator_secret: None,
            control_listen: None,
            limits: Limits::default(),
            cache_dir: None,
            deterministic: false,
            trace_sink: None,
            policy: None,
            explorer: false,
        }
    }
}

/// A running Shepherd proxy and what pages in it are instrumented for.
pub struct Stack {
    proxy: ProxyHandle,
    mode: Mode,
    /// The runtime's configuration without policies, to render it again when policies are
    /// reloaded.
    runtime: shepherd_runtime::Config,
    rewriter: Arc<InstrumentRewriter>,
    /// The hold limit the proxy started with (its page holds keep it).
    page_hold_limit: std::time::Duration,
}

/// The runtime configuration of `base` with `policy` compiled in, the longest a held
/// script must wait for it (the policy's liveness limit, plus slack), and the parser's
/// resources its rules may postpone, by page.
fn with_policy(
    base: &shepherd_runtime::Config,
    policy: Option<&shepherd_policies::PolicySet>,
) -> (
    shepherd_runtime::Config,
    Option<std::time::Duration>,
    DocumentGates,
) {
    let mut runtime = base.clone();
    let Some(set) = policy else {
        runtime.policy = None;
        return (runtime, None, DocumentGates::default());
    };
    let compiled = set.compile();
    runtime.policy = Some(shepherd_runtime::RuntimePolicy {
        json: compiled.json,
        js: compiled.js,
    });
    let limit = std::time::Duration::from_millis(compiled.max_delay_ms.saturating_add(5_000));
    (runtime, Some(limit), compiled.document_gates)
}

impl Stack {
    /// Starts `run` with `opts` on the current tokio runtime.
    pub async fn start(
        run: Run,
        opts: StackOptions,
        ca: Arc<CertificateAuthority>,
    ) -> anyhow::Result<Stack> {
        let mode = run.mode();
        let secret = opts
            .operator_secret
            .clone()
            .unwrap_or_else(shepherd_proxy::random_secret);
        let mut base = shepherd_runtime::Config::new(mode, secret.clone());
        base.deterministic = opts.deterministic;
        base.explorer = opts.explorer;
        let mut config = ProxyConfig::new(run.into_source());
        let (runtime, limit, gates) = with_policy(&base, opts.policy.as_ref());
        if let Some(limit) = limit {
            // A held script never outlasts the policy's liveness limit by much, even when the
            // page that asked for the hold is gone.
            config.page_hold_limit = limit;
        }
        if let Some(set) = &opts.policy {
            tracing::info!(policies = %set.names(), "repair policies in force");
        }
        let page_hold_limit = config.page_hold_limit;
        config.listen = opts.listen;
        config.auth = opts.auth;
        config.allow = opts.allow;
        config.site_certs = opts.site_certs;
        config.reverse = opts.reverse;
        config.limits = opts.limits;
        config.operator_secret = Some(secret);
        config.control_listen = opts.control_listen;
        config.trace_sink = opts.trace_sink;
        config.runtime_js = Bytes::from(shepherd_runtime::render(&runtime));
        let rewriter = Arc::new(
            InstrumentRewriter::new(mode, opts.cache_dir)
                .context("setting up the instrumentation cache")?
                .with_worker_runtime(&runtime)
                .with_gates(gates),
        );
        config.rewriter = Some(rewriter.clone());
        let proxy = Proxy::start(config, ca)
            .await
            .with_context(|| format!("starting the {mode} proxy"))?;
        proxy
            .metrics()
            .set_policy(opts.policy.as_ref().map(|s| s.names()));
        Ok(Stack {
            proxy,
            mode,
            runtime: base,
            rewriter,
            page_hold_limit,
        })
    }

    /// Puts `policy` in force instead of the running policies (`None`: none): documents
    /// loaded from now on, and the workers they start, get the runtime with it compiled in
    /// (and the parser's resources it may postpone made holdable in them);
    /// pages already open keep the policy they loaded with. The caller checks the policy
    /// first (`shepherd_policies::load`): a set that does not load changes nothing.
    pub fn set_policy(&self, policy: Option<&shepherd_policies::PolicySet>) {
        let (runtime, limit, gates) = with_policy(&self.runtime, policy);
        if let Some(limit) = limit
            && limit > self.page_hold_limit
        {
            tracing::warn!(
                "the new policies may hold scripts for {:.0} s, but held scripts are released \
                 after {:.0} s (the limit at start): restart to raise it",
                limit.as_secs_f64(),
                self.page_hold_limit.as_secs_f64()
            );
        }
        self.rewriter.set_worker_runtime(&runtime);
        self.rewriter.set_gates(gates);
        self.proxy
            .set_runtime_js(Bytes::from(shepherd_runtime::render(&runtime)));
        self.proxy.metrics().set_policy(policy.map(|s| s.names()));
    }

    /// The proxy (address, secret, holds, counters).
    pub fn proxy(&self) -> &ProxyHandle {
        &self.proxy
    }

    /// What pages are instrumented for.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Stops accepting and flushes what the recording still queues.
    pub async fn shutdown(self) {
        self.proxy.shutdown().await;
    }

    /// Runs until Ctrl-C, then shuts down.
    pub async fn run_until_ctrl_c(self) {
        self.proxy.run_until_ctrl_c().await;
    }
}
