//! `shepherd record --listen`, `shepherd replay REC`, `shepherd serve`: the proxy modes.

use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use shepherd_proxy::{Mode, Proxy, ProxyAuth, ProxyConfig, ReplayOptions, UpstreamTrust};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Options shared by every proxy mode.
#[derive(ClapArgs, Debug)]
pub(crate) struct Common {
    /// Address to listen on. Non-loopback addresses require --auth.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Require these credentials from clients (`user:pass`, Proxy-Authorization: Basic).
    #[arg(long, value_name = "USER:PASS")]
    auth: Option<String>,
    /// Also trust this root (PEM file, may hold several) for upstream TLS.
    #[arg(long, value_name = "FILE")]
    upstream_ca: Vec<PathBuf>,
    /// Do not verify upstream certificates at all.
    #[arg(long, conflicts_with = "upstream_ca")]
    insecure_upstream: bool,
    /// Use this per-run secret instead of a random one (tests, external controllers).
    #[arg(long, env = "SHEPHERD_SECRET", hide_env_values = true)]
    secret: Option<String>,
    /// Cut off a client that stops sending a request body for this long (408), e.g. 30s.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    body_timeout: std::time::Duration,
}

/// Record every exchange while proxying live traffic: either browse yourself through
/// `--listen`, or give a URL and Shepherd drives headless Chromium through the proxy.
#[derive(ClapArgs, Debug)]
pub(crate) struct RecordArgs {
    /// Page to load in headless Chromium (without it, the proxy waits for your browser).
    url: Option<String>,
    #[command(flatten)]
    common: Common,
    /// Recording file to create or extend (a new session is added).
    #[arg(long)]
    out: PathBuf,
    /// With URL: fire user events at elements with handlers for this long (e.g. 15s, 500ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    explore: Option<std::time::Duration>,
    /// With URL: at most this many user events.
    #[arg(long, default_value_t = 250)]
    max_events: usize,
    /// With URL: seed of the exploration's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// With URL: show the browser window instead of running headless.
    #[arg(long)]
    headful: bool,
}

/// Parses `15s`, `500ms`, `2m` or a bare number of seconds.
pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, "s"),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (try 15s, 500ms, 2m)"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" | "min" => n * 60.0,
        _ => return Err(format!("unknown unit {unit:?} in {s:?} (ms, s, m)")),
    };
    if !(0.0..=86_400.0).contains(&secs) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// Serve a recording with no network access.
#[derive(ClapArgs, Debug)]
pub(crate) struct ReplayArgs {
    /// The recording to serve.
    recording: PathBuf,
    #[command(flatten)]
    common: Common,
    /// Status answered when no recorded request matches.
    #[arg(long, default_value_t = 404)]
    miss_status: u16,
    /// Query parameter ignored by the matcher's ignore tier (repeatable).
    #[arg(long, value_name = "NAME")]
    ignore_param: Vec<String>,
    /// Body parameter (form field or top-level JSON key) ignored by the ignore tier.
    #[arg(long, value_name = "NAME")]
    ignore_body_param: Vec<String>,
    /// Disable the learned request-pattern tier.
    #[arg(long)]
    no_learned: bool,
    /// Disable the fuzzy tier.
    #[arg(long)]
    no_fuzzy: bool,
    /// Serve recorded Date/Expires/Last-Modified/cookie expiry unshifted.
    #[arg(long)]
    no_date_shift: bool,
}

/// Proxy live traffic (forward proxy, or reverse proxy with --reverse).
#[derive(ClapArgs, Debug)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    common: Common,
    /// Reverse-proxy every request to this origin (e.g. https://staging.example).
    #[arg(long, value_name = "URL")]
    reverse: Option<String>,
}

fn config(
    common: &Common,
    mode: Mode,
    runtime_mode: shepherd_runtime::Mode,
) -> anyhow::Result<ProxyConfig> {
    let mut config = ProxyConfig::new(mode);
    config.listen = common.listen;
    config.limits.body_timeout = common.body_timeout;
    if let Some(a) = &common.auth {
        config.auth = Some(ProxyAuth::parse(a).map_err(anyhow::Error::msg)?);
    }
    config.upstream_trust = if common.insecure_upstream {
        UpstreamTrust::Insecure
    } else if common.upstream_ca.is_empty() {
        UpstreamTrust::WebPki
    } else {
        let mut roots = Vec::new();
        for path in &common.upstream_ca {
            let pem = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let certs = shepherd_proxy::ca::pem_certs(&pem);
            if certs.is_empty() {
                bail!("{}: no PEM certificate found", path.display());
            }
            roots.extend(certs);
        }
        UpstreamTrust::WithExtraRoots(roots)
    };
    let secret = common
        .secret
        .clone()
        .unwrap_or_else(shepherd_proxy::random_secret);
    let script =
        shepherd_runtime::render(&shepherd_runtime::Config::new(runtime_mode, secret.clone()));
    // One script per process, alive until exit.
    config.runtime_js = Box::leak(script.into_boxed_str());
    let run_mode = match runtime_mode {
        shepherd_runtime::Mode::Record => shepherd_proxy::RunMode::Record,
        shepherd_runtime::Mode::Repair => shepherd_proxy::RunMode::Serve,
        shepherd_runtime::Mode::Replay => shepherd_proxy::RunMode::Replay,
    };
    config.rewriter = Some(Arc::new(crate::rewriter::InstrumentRewriter::new(
        run_mode, None,
    )?));
    config.secret = Some(secret);
    Ok(config)
}

fn run_proxy(config: ProxyConfig, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let ca = Arc::new(super::ca::load_ca(home)?);
    let spki = ca.spki_sha256_base64();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let handle = Proxy::start(config, ca).await?;
        let addr = handle.addr();
        eprintln!("shepherd: listening on {addr}");
        eprintln!(
            "shepherd: chromium --proxy-server=http://{addr} --proxy-bypass-list='<-loopback>' --ignore-certificate-errors-spki-list={spki} --disable-quic"
        );
        handle.run_until_ctrl_c().await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_record(args: RecordArgs, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.url {
        let opts = crate::drive::DriveOptions {
            url: url.clone(),
            out: args.out.clone(),
            explore: args.explore.unwrap_or_default(),
            max_events: args.max_events,
            seed: args.seed,
            headful: args.headful,
            cache_dir: None,
        };
        let ca = Arc::new(super::ca::load_ca(home)?);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let summary = rt.block_on(crate::drive::record_url(&opts, ca))?;
        let stats = crate::trace_source::load(&args.out, None)
            .ok()
            .map(|src| shepherd_trace::TraceStats::of(&src.loaded.trace));
        let (actions, arcs, locations) = stats
            .map(|s| (s.actions, s.arcs, s.locations))
            .unwrap_or_default();
        println!(
            "recorded {url}: {} exchanges, {} trace(s), {actions} actions, {arcs} arcs, {locations} locations, {} user events, {} page errors, {:.1}s -> {}",
            summary.exchanges,
            summary.traces,
            summary.events_fired,
            summary.page_errors,
            summary.elapsed.as_secs_f64(),
            args.out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let config = config(
        &args.common,
        Mode::Record(args.out.clone()),
        shepherd_runtime::Mode::Record,
    )?;
    eprintln!("shepherd: recording to {}", args.out.display());
    run_proxy(config, home)
}

pub(crate) fn run_replay(args: ReplayArgs, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if !args.recording.exists() {
        bail!("{}: no such recording", args.recording.display());
    }
    let mut opts = ReplayOptions {
        miss_status: args.miss_status,
        shift_dates: !args.no_date_shift,
        ..ReplayOptions::default()
    };
    opts.matching.ignore_query_params = args.ignore_param.clone();
    opts.matching.ignore_body_params = args.ignore_body_param.clone();
    opts.matching.learned = !args.no_learned;
    opts.matching.fuzzy = !args.no_fuzzy;
    let config = config(
        &args.common,
        Mode::Replay(args.recording.clone(), opts),
        shepherd_runtime::Mode::Replay,
    )?;
    run_proxy(config, home)
}

pub(crate) fn run_serve(args: ServeArgs, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let mut config = config(&args.common, Mode::Serve, shepherd_runtime::Mode::Repair)?;
    if let Some(r) = &args.reverse {
        let uri: shepherd_proxy::http::Uri = r.parse().with_context(|| format!("--reverse {r}"))?;
        if uri.authority().is_none() {
            bail!("--reverse needs an absolute URL such as https://staging.example");
        }
        config.reverse = Some(uri);
    }
    run_proxy(config, home)
}
