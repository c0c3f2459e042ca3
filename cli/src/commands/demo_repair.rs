//! The repair half of `shepherd demo`: the shop's "Show price" race (a click before the late
//! `slow.js` defined what the handler reads) forced twice through `shepherd serve`, once
//! without a policy and once with `init-user`, and what the user sees in each.

use anyhow::{Context, bail};
use shepherd_browser::{Browser, LaunchOptions, Page};
use shepherd_proxy::{CertificateAuthority, UpstreamTrust};
use shepherd_session::{Run, Stack, StackOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one run showed.
pub(crate) struct Outcome {
    /// The price line after the page loaded (`not ready` is the race's wrong result).
    pub price: String,
    /// How long the click waited for the policy (ms), when it did.
    pub waited_ms: Option<f64>,
    /// Whether the spinner was up while the click waited.
    pub spinner: bool,
}

async fn poll(page: &Page, expr: &str, limit: Duration) -> anyhow::Result<bool> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if page.evaluate(expr).await.ok() == Some(serde_json::Value::Bool(true)) {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    Ok(false)
}

/// Opens the shop through a serve stack with `policy`, clicks "Show price" while `slow.js`
/// is still loading, and reads what the page shows.
pub(crate) async fn run_once(
    browser: &Browser,
    url: &str,
    policy: Option<&str>,
    ca: Arc<CertificateAuthority>,
) -> anyhow::Result<Outcome> {
    let opts = StackOptions {
        policy: policy
            .map(shepherd_policies::load)
            .transpose()
            .map_err(|e| anyhow::anyhow!("{e}"))?,
        ..StackOptions::default()
    };
    let stack = Stack::start(
        Run::Serve {
            trust: UpstreamTrust::WebPki,
        },
        opts,
        ca,
    )
    .await?;
    let secret = stack.proxy().operator_secret().to_string();
    let proxy = stack.proxy().addr().to_string();
    let page = browser
        .new_isolated_page(Some(&proxy), Some("<-loopback>"))
        .await?;
    page.call("Page.navigate", serde_json::json!({ "url": url }))
        .await?;
    if !poll(
        &page,
        "!!document.getElementById('b1') && document.readyState === 'loading'",
        Duration::from_secs(5),
    )
    .await?
    {
        bail!("the page finished loading before the click could be made");
    }
    page.click("#b1").await.context("clicking Show price")?;
    let spinner = page
        .evaluate("!!document.querySelector('shepherd-busy')")
        .await?
        .as_bool()
        .unwrap_or(false);
    poll(
        &page,
        "document.readyState === 'complete'",
        Duration::from_secs(10),
    )
    .await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let price = page
        .evaluate("document.getElementById('price').textContent")
        .await?
        .as_str()
        .unwrap_or("")
        .to_string();
    let figures = page
        .evaluate(&format!("__shepherd.control({secret:?}).repair()"))
        .await
        .unwrap_or_default();
    let waited_ms = figures["delays"]
        .as_array()
        .and_then(|d| d.first())
        .and_then(|v| v.as_f64());
    let _ = page.close().await;
    stack.shutdown().await;
    Ok(Outcome {
        price,
        waited_ms,
        spinner,
    })
}

/// Both runs, printed.
pub(crate) async fn show(
    url: &str,
    headful: bool,
    ca: Arc<CertificateAuthority>,
) -> anyhow::Result<()> {
    let browser = Browser::launch(LaunchOptions {
        headless: !headful,
        ..LaunchOptions::default()
    })
    .await
    .context("launching Chromium")?;
    let plain = run_once(&browser, url, None, ca.clone()).await;
    let repaired = run_once(&browser, url, Some("init-user"), ca).await;
    let _ = browser.close().await;
    let (plain, repaired) = (plain?, repaired?);
    println!(
        "\nrepair: \"Show price\" clicked while slow.js is still loading (the race on init and y):"
    );
    println!(
        "  shepherd serve                     the price shows {:?}",
        plain.price
    );
    let how = match repaired.waited_ms {
        Some(ms) => format!(
            "the click waited {ms:.0} ms for the page to be parsed{}",
            if repaired.spinner {
                " (spinner shown)"
            } else {
                ""
            }
        ),
        None => "the click was not held".to_string(),
    };
    println!(
        "  shepherd serve --policy init-user  {how}; the price shows {:?}",
        repaired.price
    );
    Ok(())
}
