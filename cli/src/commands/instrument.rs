//! `shepherd instrument`: print what the instrumenter makes of a file (HTML or JavaScript), for
//! users debugging the instrumenter and for tests.

use anyhow::{Context, bail};
use shepherd_instrument::{CspHeader, HtmlConfig, Mode, ScriptCache, ScriptKind, instrument_html};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Instrument one file and print the result to stdout.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// record, replay or repair (repair rewrites no JavaScript).
    #[arg(long, default_value = "record")]
    mode: String,
    /// html, script, module, handler or js-url (default: from the file extension).
    #[arg(long)]
    kind: Option<String>,
    /// Content-Type of the response (its charset takes part in encoding detection).
    #[arg(long)]
    content_type: Option<String>,
    /// A Content-Security-Policy header of the response (repeatable).
    #[arg(long)]
    csp: Vec<String>,
    /// Print the report (counters, CSP/SRI changes, encoding) as JSON to stderr.
    #[arg(long)]
    report: bool,
    /// Page credential to put in the runtime URL (the proxy derives one per origin).
    #[arg(long, default_value = "TOKEN")]
    page_token: String,
    /// The file (`-` for stdin).
    file: PathBuf,
}

pub(crate) fn run(args: Args, _home: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let mode: Mode = args.mode.parse().map_err(anyhow::Error::msg)?;
    let mut input = Vec::new();
    if args.file.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut input)
            .context("reading stdin")?;
    } else {
        input = std::fs::read(&args.file)
            .with_context(|| format!("reading {}", args.file.display()))?;
    }
    let kind = match args.kind.as_deref() {
        Some(k) => k.to_ascii_lowercase(),
        None => match args
            .file
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("html" | "htm" | "xhtml") => "html".into(),
            Some("mjs") => "module".into(),
            Some("js" | "cjs") => "script".into(),
            _ => bail!("cannot tell the kind from the file name: pass --kind"),
        },
    };
    let cache = Arc::new(ScriptCache::new(mode, 64 << 20, None)?);
    let mut stdout = std::io::stdout().lock();
    if kind == "html" {
        let mut cfg = HtmlConfig::new(mode, args.page_token);
        cfg.content_type = args.content_type;
        cfg.cache = Some(cache);
        let csp: Vec<(CspHeader, &str)> = args
            .csp
            .iter()
            .map(|v| (CspHeader::Enforce, v.as_str()))
            .collect();
        let (out, report, headers) = instrument_html(&input, cfg, &csp)?;
        stdout.write_all(&out)?;
        if args.report {
            for h in headers {
                eprintln!("content-security-policy: {h}");
            }
            eprintln!("{}", serde_json::to_string_pretty(&report)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let kind: ScriptKind = kind.parse().map_err(anyhow::Error::msg)?;
    let charset = args
        .content_type
        .as_deref()
        .and_then(shepherd_instrument::charset_label);
    let out = match kind {
        ScriptKind::Script | ScriptKind::Module => {
            cache.instrument_script(&input, kind, charset.as_deref())
        }
        ScriptKind::Handler | ScriptKind::JsUrl => {
            let src = String::from_utf8(input.clone())
                .context("handler and js-url input must be UTF-8")?;
            cache.instrument_snippet(&src, kind)
        }
    };
    match out.body_bytes() {
        Some(body) => stdout.write_all(&body)?,
        None => {
            stdout.write_all(&input)?;
            if let Some(r) = &out.kept_reason {
                eprintln!("kept the original: {r}");
            }
        }
    }
    if args.report
        && let Some(map) = out.map_id.as_deref().and_then(|id| cache.source_map(id))
    {
        eprintln!("source map: {map}");
    }
    Ok(ExitCode::SUCCESS)
}
