//! A site to explore, recorded through the harness as the explorer tests need it: the page
//! loaded and settled, the test's actions, settled again.

use crate::{Harness, patience};
use anyhow::{Result, ensure};
use shepherd_browser::Page;
use shepherd_explore_model::site::Site;
use std::time::Duration;

/// Records `path` (loaded, then `act`, then settled): the site to explore.
pub async fn record(
    h: &Harness,
    path: &str,
    act: impl AsyncFn(&Page) -> Result<()>,
) -> Result<Site> {
    let page = h.open(path).await?;
    settle(&page).await?;
    act(&page).await?;
    settle(&page).await?;
    let t = h.flushed_trace(&page).await?;
    let _ = page.close().await;
    h.origin.flush().await;
    let site = Site::from_trace(
        h.origin.recording().to_path_buf(),
        h.origin.url(path),
        t.trace,
    );
    ensure!(!site.recorded_order.is_empty(), "nothing to schedule");
    Ok(site)
}

/// Lets the page finish what it started: 400 ms for its timers, then until no request has been
/// in flight and the DOM has not changed for 200 ms (a loaded machine may take longer to
/// answer a delayed request than the pause).
async fn settle(page: &Page) -> Result<()> {
    tokio::time::sleep(Duration::from_millis(400)).await;
    let quiet = page
        .wait_quiet(Duration::from_millis(200), patience(Duration::from_secs(5)))
        .await?;
    ensure!(quiet.reached, "the page never settled: {quiet:?}");
    Ok(())
}
