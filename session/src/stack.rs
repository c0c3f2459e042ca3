//! Starting Shepherd for one mode: the proxy with the response source the mode implies, the
//! instrumenting rewriter for that mode, and the runtime rendered for it. [`Run`] ties mode and
//! source together, so a recording proxy that does not record, a replay that dials out, or a
//! repair proxy that rewrites JavaScript cannot be asked for.

use crate::rewriter::InstrumentRewriter;
use anyhow::Context;
use bytes::Bytes;
use shepherd_proxy::{
    CertificateAuthority, Limits, Proxy, ProxyAuth, ProxyConfig, ProxyHandle, ReplayOptions,
    ResponseSource, TraceSink, UpstreamTrust,
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
    /// Credentials required from clients (mandatory off loopback).
    pub auth: Option<ProxyAuth>,
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
}

impl Default for StackOptions {
    fn default() -> Self {
        StackOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            auth: None,
            reverse: None,
            operator_secret: None,
            control_listen: None,
            limits: Limits::default(),
            cache_dir: None,
            deterministic: false,
            trace_sink: None,
            policy: None,
        }
    }
}

/// A running Shepherd proxy and what pages in it are instrumented for.
pub struct Stack {
    proxy: ProxyHandle,
    mode: Mode,
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
        let mut runtime = shepherd_runtime::Config::new(mode, secret.clone());
        runtime.deterministic = opts.deterministic;
        let mut config = ProxyConfig::new(run.into_source());
        let mut gates = shepherd_policies::compile::ParserGates::default();
        if let Some(set) = &opts.policy {
            let compiled = set.compile();
            gates = compiled.gates;
            // A held script never outlasts the policy's liveness limit by much, even when the
            // page that asked for the hold is gone.
            config.page_hold_limit =
                std::time::Duration::from_millis(compiled.max_delay_ms.saturating_add(5_000));
            runtime.policy = Some(shepherd_runtime::RuntimePolicy {
                json: compiled.json,
                js: compiled.js,
            });
            tracing::info!(policies = %set.names(), "repair policies in force");
        }
        config.listen = opts.listen;
        config.auth = opts.auth;
        config.reverse = opts.reverse;
        config.limits = opts.limits;
        config.operator_secret = Some(secret);
        config.control_listen = opts.control_listen;
        config.trace_sink = opts.trace_sink;
        config.runtime_js = Bytes::from(shepherd_runtime::render(&runtime));
        config.rewriter = Some(Arc::new(
            InstrumentRewriter::new(mode, opts.cache_dir)
                .context("setting up the instrumentation cache")?
                .with_worker_runtime(&runtime)
                .with_gates(gates),
        ));
        let proxy = Proxy::start(config, ca)
            .await
            .with_context(|| format!("starting the {mode} proxy"))?;
        Ok(Stack { proxy, mode })
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
