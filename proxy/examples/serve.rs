//! The proxy alone in serve mode, without instrumentation: `serve --listen ADDR
//! [--upstream-ca FILE] [--insecure-upstream] [--reverse URL]` (the flags of `shepherd serve`). Used by
//! `scripts/bench-proxy` when `SHEPHERD_BIN` points at it, to measure the proxy without
//! building the whole CLI.

use shepherd_proxy::{CertificateAuthority, Proxy, ProxyConfig, ResponseSource, UpstreamTrust};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = ProxyConfig::new(ResponseSource::live());
    let mut insecure = false;
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("serve") {
        args.next();
    }
    let mut roots = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => config.listen = args.next().ok_or("--listen ADDR")?.parse()?,
            "--upstream-ca" => {
                let pem = std::fs::read_to_string(args.next().ok_or("--upstream-ca FILE")?)?;
                roots.extend(shepherd_proxy::ca::pem_certs(&pem));
            }
            "--insecure-upstream" => insecure = true,
            "--reverse" => config.reverse = Some(args.next().ok_or("--reverse URL")?.parse()?),
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let trust = if insecure {
        UpstreamTrust::Insecure
    } else if roots.is_empty() {
        UpstreamTrust::WebPki
    } else {
        UpstreamTrust::WithExtraRoots(roots)
    };
    config.source = ResponseSource::Live {
        trust,
        record: None,
    };
    let ca = Arc::new(CertificateAuthority::ephemeral()?);
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let handle = Proxy::start(config, ca).await?;
        eprintln!("listening on {}", handle.addr());
        handle.run_until_ctrl_c().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}
