//! `shepherd record --listen`, `shepherd replay REC`, `shepherd serve`: the proxy modes.

use anyhow::{Context, bail};
use clap::Args as ClapArgs;
use shepherd_proxy::{AllowList, ProxyAuth, ReplayOptions, SiteCertificates, UpstreamTrust};
use shepherd_session::{Run, Stack, StackOptions};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Options shared by every proxy mode.
#[derive(ClapArgs, Debug)]
pub(crate) struct Common {
    /// Address to listen on. Non-loopback addresses require --auth or --allow.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Require these credentials from clients (`user:pass`, Proxy-Authorization: Basic; a
    /// reverse proxy's visitors send Authorization: Basic).
    #[arg(long, value_name = "USER:PASS")]
    auth: Option<String>,
    /// Accept connections only from this network (`10.0.0.0/8`, `2001:db8::/32`, or one
    /// address); repeatable or comma-separated. Others are closed at once. The alternative
    /// to --auth off loopback, for a site with its own login.
    #[arg(long, value_name = "CIDR", value_delimiter = ',')]
    allow: Vec<String>,
    /// Once listening, write the browser's flags to this file as JSON (`proxy`, `spki`,
    /// `args`), for scripts that start a browser or a test suite through the proxy.
    #[arg(long, value_name = "FILE.json")]
    browser_flags: Option<PathBuf>,
    /// Also trust this root (PEM file, may hold several) for upstream TLS.
    #[arg(long, value_name = "FILE")]
    upstream_ca: Vec<PathBuf>,
    /// Do not verify upstream certificates at all.
    #[arg(long, conflicts_with = "upstream_ca")]
    insecure_upstream: bool,
    /// The operator secret (random by default): the control listener's bearer token and what
    /// the in-page controller answers to over DevTools; never written into a page.
    #[arg(long, env = "SHEPHERD_SECRET", hide_env_values = true)]
    secret: Option<String>,
    /// Serve the control surface (holds, releases, replay reset, stats) on this address, for
    /// external controllers; requests need `Authorization: Bearer <operator secret>`.
    #[arg(long, value_name = "ADDR")]
    control: Option<SocketAddr>,
    /// Serve at most this many client connections at once (default: half the open-file limit,
    /// which Shepherd raises to the hard limit at start); more wait briefly for a slot or are
    /// closed at once.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
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
    /// With URL: exercise the page for this long (e.g. 15s, 500ms): every visible, enabled
    /// control gets its gestures (clicks, typing, choices in selects, keys, focus, hovers),
    /// what was not exercised first; navigations away are stopped and traced as events. The
    /// summary says how many controls were exercised.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    explore: Option<std::time::Duration>,
    /// With URL: at most this many user events.
    #[arg(long, default_value_t = 250)]
    max_events: usize,
    /// With URL: seed of the exercise's random choices (same seed, same page: same events).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// With URL: show the browser window instead of running headless.
    #[arg(long)]
    headful: bool,
}

/// Up to eight control descriptions, then how many more.
fn missed_list(missed: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut s = missed
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if missed.len() > SHOWN {
        s.push_str(&format!(" and {} more", missed.len() - SHOWN));
    }
    s
}

/// Parses a duration of at most a day: `15s`, `500ms`, `2m`, `1.5h`, `1m30s` (humantime's
/// forms) or a bare number of seconds (`15`, `0.5`).
pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    let hint = "try 15s, 500ms, 2m";
    // The leading number is read here and written back in humantime's form: humantime wants
    // digits on both sides of a point and a unit, while `.5s`, `1.s` and a bare number of
    // seconds have always been accepted.
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let num: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration ({hint})"))?;
    let unit = if unit.is_empty() { "s" } else { unit };
    let d = humantime::parse_duration(&format!("{num}{unit}"))
        .map_err(|e| format!("{s:?} is not a duration: {e} ({hint})"))?;
    if d > std::time::Duration::from_secs(86_400) {
        return Err(format!("{s:?} is out of range (at most 24h)"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_in_every_form_accepted_before() {
        let ms = |n| Ok(Duration::from_millis(n));
        assert_eq!(parse_duration("15s"), ms(15_000));
        assert_eq!(parse_duration("500ms"), ms(500));
        assert_eq!(parse_duration("2m"), ms(120_000));
        assert_eq!(parse_duration("2min"), ms(120_000));
        assert_eq!(parse_duration("1h"), ms(3_600_000));
        assert_eq!(parse_duration("1.5s"), ms(1_500));
        assert_eq!(parse_duration(".5s"), ms(500));
        assert_eq!(parse_duration("0.25m"), ms(15_000));
        assert_eq!(parse_duration("1.s"), ms(1_000));
        assert_eq!(parse_duration("15"), ms(15_000));
        assert_eq!(parse_duration("0.5"), ms(500));
        assert_eq!(parse_duration(" 30s "), ms(30_000));
        assert_eq!(parse_duration("0s"), ms(0));
        assert_eq!(parse_duration("24h"), ms(86_400_000));
    }

    #[test]
    fn humantimes_forms_are_accepted_too() {
        let ms = |n| Ok(Duration::from_millis(n));
        assert_eq!(parse_duration("1m30s"), ms(90_000));
        assert_eq!(parse_duration("1m 30s"), ms(90_000));
        assert_eq!(parse_duration("2sec"), ms(2_000));
        assert_eq!(parse_duration("1hour"), ms(3_600_000));
    }

    #[test]
    fn bad_durations_say_what_is_wrong() {
        let err = |s| parse_duration(s).expect_err(s);
        assert!(
            err("15x").contains("\"15x\" is not a duration"),
            "{}",
            err("15x")
        );
        assert!(err("15x").contains("try 15s"), "{}", err("15x"));
        assert!(err("abc").contains("not a duration"));
        assert!(err("").contains("not a duration"));
        assert!(err("-1s").contains("not a duration"));
        assert!(err("1.2.3").contains("not a duration"));
        assert!(err("25h").contains("out of range"));
        assert!(err("86401").contains("out of range"));
    }
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
    /// Store traces of replayed pages in this recording (a new session) instead of the
    /// replayed one.
    #[arg(long, value_name = "FILE.rec")]
    trace_out: Option<PathBuf>,
}

/// Proxy live traffic (forward proxy, or reverse proxy with --reverse).
#[derive(ClapArgs, Debug)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    common: Common,
    /// Reverse-proxy every request to this origin (e.g. https://staging.example).
    #[arg(long, value_name = "URL")]
    reverse: Option<String>,
    /// Enforce repair policies: shipped names (`shepherd policy list`) or policy files,
    /// comma-separated (e.g. init-user,async-fifo). SIGHUP reloads them: a set that does not
    /// load keeps the running one and logs each error with its line and column.
    #[arg(long, value_name = "P")]
    policy: Option<String>,
    /// The site's certificate chain (PEM) shown to visitors that connect with TLS (with
    /// --reverse), instead of a leaf of Shepherd's CA. Repeatable, each paired with the
    /// --tls-key at the same position: a visitor gets the first certificate valid for the
    /// name it asks for (SNI), the first one when none is.
    #[arg(long, value_name = "CERT.pem", requires = "tls_key")]
    tls_cert: Vec<PathBuf>,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1) of the --tls-cert at the same position.
    #[arg(long, value_name = "KEY.pem", requires = "tls_cert")]
    tls_key: Vec<PathBuf>,
}

impl Common {
    /// How origin certificates are checked: the web's roots, plus `--upstream-ca`, or none.
    fn trust(&self) -> anyhow::Result<UpstreamTrust> {
        if self.insecure_upstream {
            return Ok(UpstreamTrust::Insecure);
        }
        if self.upstream_ca.is_empty() {
            return Ok(UpstreamTrust::WebPki);
        }
        let mut roots = Vec::new();
        for path in &self.upstream_ca {
            let pem = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let certs = shepherd_proxy::ca::pem_certs(&pem);
            if certs.is_empty() {
                bail!("{}: no PEM certificate found", path.display());
            }
            roots.extend(certs);
        }
        Ok(UpstreamTrust::WithExtraRoots(roots))
    }

    fn stack_options(&self) -> anyhow::Result<StackOptions> {
        let mut opts = StackOptions {
            listen: self.listen,
            operator_secret: self.secret.clone(),
            control_listen: self.control,
            ..StackOptions::default()
        };
        opts.limits.body_timeout = self.body_timeout;
        if let Some(n) = self.max_connections {
            if n == 0 {
                bail!("--max-connections must be at least 1");
            }
            opts.limits.max_connections = n;
        }
        if let Some(a) = &self.auth {
            opts.auth = Some(ProxyAuth::parse(a).map_err(anyhow::Error::msg)?);
        }
        if !self.allow.is_empty() {
            let list = AllowList::parse(&self.allow).map_err(|e| anyhow::anyhow!("--allow {e}"))?;
            eprintln!(
                "shepherd: accepting connections only from {}",
                list.describe()
            );
            opts.allow = Some(list);
        }
        Ok(opts)
    }
}

/// What a browser needs to go through the proxy at `addr` whose CA has the SPKI hash `spki`.
fn browser_flags(addr: SocketAddr, spki: &str) -> Vec<String> {
    vec![
        format!("--proxy-server=http://{addr}"),
        // Chromium bypasses the proxy for loopback by default; test sites often live there.
        "--proxy-bypass-list=<-loopback>".to_string(),
        format!("--ignore-certificate-errors-spki-list={spki}"),
        // QUIC would go around an HTTP proxy.
        "--disable-quic".to_string(),
    ]
}

/// Runs a proxy until Ctrl-C or SIGTERM. `policy`: the `--policy` spec, loaded again on
/// SIGHUP. `flags_file`: where to write the browser's flags once listening.
fn run_proxy(
    run: Run,
    opts: StackOptions,
    home: Option<PathBuf>,
    policy: Option<String>,
    flags_file: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let ca = Arc::new(super::ca::load_ca(home)?);
    let spki = ca.spki_sha256_base64();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(crate::memory::worker_idle)
        .build()
        .context("starting the async runtime")?;
    rt.spawn(crate::memory::wake_idle_workers());
    rt.block_on(async move {
        let random_secret = opts.operator_secret.is_none();
        let stack = Stack::start(run, opts, ca).await?;
        let addr = stack.proxy().addr();
        if let Some(control) = stack.proxy().control_addr() {
            eprintln!("shepherd: control listener on http://{control} (Authorization: Bearer <operator secret>)");
            if random_secret {
                eprintln!(
                    "shepherd: operator secret {} (pass --secret to choose one)",
                    stack.proxy().operator_secret()
                );
            }
        }
        eprintln!("shepherd: {} mode", stack.mode());
        eprintln!("shepherd: listening on {addr}");
        let flags = browser_flags(addr, &spki);
        let quoted: Vec<String> = flags
            .iter()
            .map(|f| if f.contains('<') { format!("'{f}'") } else { f.clone() })
            .collect();
        eprintln!("shepherd: chromium {}", quoted.join(" "));
        eprintln!(
            "shepherd: browser args (Playwright's or Puppeteer's launch args): {}",
            serde_json::to_string(&flags)?
        );
        if let Some(path) = &flags_file {
            let doc = serde_json::json!({
                "proxy": format!("http://{addr}"),
                "spki": spki,
                "args": flags,
            });
            // Written whole, then renamed: a script polling for the file never reads half.
            let tmp = path.with_extension("partial");
            std::fs::write(&tmp, serde_json::to_vec_pretty(&doc)?)
                .with_context(|| format!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))?;
        }
        serve_until_stopped(&stack, policy.as_deref()).await?;
        stack.shutdown().await;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Waits for Ctrl-C or SIGTERM; on SIGHUP loads `policy` again and puts it in force, or
/// keeps the running one when it does not load.
async fn serve_until_stopped(stack: &Stack, policy: Option<&str>) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hup = signal(SignalKind::hangup()).context("listening for SIGHUP")?;
    let mut term = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = term.recv() => break,
            _ = hup.recv() => reload_policy(stack, policy),
        }
    }
    tracing::info!("shutting down");
    Ok(())
}

/// SIGHUP: the `--policy` spec loaded again. Every error is logged with its file, line and
/// column, and the running policy stays in force.
fn reload_policy(stack: &Stack, policy: Option<&str>) {
    let Some(spec) = policy else {
        tracing::info!("SIGHUP: no --policy to reload");
        return;
    };
    match shepherd_policies::load(spec) {
        Ok(set) => {
            for line in set.warnings.lines().filter(|l| !l.is_empty()) {
                tracing::warn!("policy reload: {line}");
            }
            stack.set_policy(Some(&set));
            stack.proxy().metrics().reloaded(true);
            tracing::info!(policies = %set.names(), "policy reloaded: in force for pages loaded from now on");
        }
        Err(e) => {
            stack.proxy().metrics().reloaded(false);
            let errors: Vec<_> = e
                .diagnostics
                .iter()
                .filter(|d| d.severity == shepherd_policies::diag::Severity::Error)
                .collect();
            for d in &errors {
                tracing::error!(
                    file = %e.file,
                    line = d.span.line,
                    col = d.span.col,
                    "policy reload: {}",
                    d.message
                );
            }
            if errors.is_empty() {
                tracing::error!("policy reload: {}", e.rendered.trim_end());
            }
            tracing::error!(
                policies = stack.proxy().metrics().policy().unwrap_or_default(),
                "policy reload failed ({} error(s)): the running policy stays in force",
                errors.len().max(1)
            );
        }
    }
}

pub(crate) fn run_record(args: RecordArgs, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.url {
        let explore = args.explore.unwrap_or_default();
        let progress = (!explore.is_zero())
            .then(|| crate::progress::Progress::countdown(explore, "exploring", "events"));
        let on_events = progress.as_ref().map(|p| {
            let set = p.position_setter();
            shepherd_session::drive::EventCounter(Arc::new(move |n: usize| set(n as u64)))
        });
        let opts = shepherd_session::drive::DriveOptions {
            explore,
            on_events,
            max_events: args.max_events,
            seed: args.seed,
            headful: args.headful,
            trust: args.common.trust()?,
            ..shepherd_session::drive::DriveOptions::new(url.clone(), args.out.clone())
        };
        let ca = Arc::new(super::ca::load_ca(home)?);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let summary = rt.block_on(shepherd_session::drive::record_url(&opts, ca))?;
        drop(progress);
        let stats = shepherd_analysis::trace_file::load(&args.out, None)
            .ok()
            .map(|src| shepherd_trace::TraceStats::of(&src.loaded.trace));
        let (actions, arcs, locations) = stats
            .map(|s| (s.actions, s.arcs, s.locations))
            .unwrap_or_default();
        let c = &summary.coverage;
        let controls = if explore.is_zero() {
            String::new()
        } else {
            format!(", {} of {} controls exercised", c.exercised, c.present)
        };
        println!(
            "recorded {url}: {} exchanges, {} trace(s), {actions} actions, {arcs} arcs, {locations} locations, {} user events{controls}, {} page errors, {:.1}s -> {}",
            summary.exchanges,
            summary.traces,
            summary.events_fired,
            summary.page_errors,
            summary.elapsed.as_secs_f64(),
            args.out.display()
        );
        if !c.missed.is_empty() {
            println!("  not exercised: {}", missed_list(&c.missed));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let run = Run::Record {
        out: args.out.clone(),
        trust: args.common.trust()?,
    };
    eprintln!("shepherd: recording to {}", args.out.display());
    let flags = args.common.browser_flags.clone();
    run_proxy(run, args.common.stack_options()?, home, None, flags)
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
    let run = Run::Replay {
        recording: args.recording.clone(),
        options: opts,
        trace_out: args.trace_out.clone(),
    };
    match &args.trace_out {
        Some(out) => eprintln!("shepherd: traces of replayed pages go to {}", out.display()),
        None => eprintln!(
            "shepherd: traces of replayed pages go into {} as new sessions",
            args.recording.display()
        ),
    }
    let flags = args.common.browser_flags.clone();
    run_proxy(run, args.common.stack_options()?, home, None, flags)
}

pub(crate) fn run_serve(args: ServeArgs, home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let mut opts = args.common.stack_options()?;
    // Checked before anything starts: a policy with errors starts nothing.
    if let Some(p) = &args.policy {
        let set = super::policy::load_or_report(p)?;
        eprintln!("shepherd: enforcing {}", set.names());
        opts.policy = Some(set);
    }
    if let Some(r) = &args.reverse {
        let uri: shepherd_proxy::http::Uri = r.parse().with_context(|| format!("--reverse {r}"))?;
        if uri.authority().is_none() {
            bail!("--reverse needs an absolute URL such as https://staging.example");
        }
        opts.reverse = Some(uri);
    }
    if args.tls_cert.len() != args.tls_key.len() {
        bail!(
            "--tls-cert and --tls-key come in pairs ({} certificates, {} keys)",
            args.tls_cert.len(),
            args.tls_key.len()
        );
    }
    if !args.tls_cert.is_empty() {
        let pairs: Vec<(PathBuf, PathBuf)> = args
            .tls_cert
            .iter()
            .cloned()
            .zip(args.tls_key.iter().cloned())
            .collect();
        let certs = SiteCertificates::load(&pairs).map_err(anyhow::Error::msg)?;
        eprintln!("shepherd: visitors starting TLS get the site's certificate ({certs:?})");
        opts.site_certs = Arc::new(certs);
    }
    let run = Run::Serve {
        trust: args.common.trust()?,
    };
    let flags = args.common.browser_flags.clone();
    run_proxy(run, opts, home, args.policy.clone(), flags)
}
