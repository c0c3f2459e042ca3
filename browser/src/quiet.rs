//! Deciding that a page is quiet: no request in flight and no DOM mutation for a while.
//!
//! Requests come from the Network domain (tracked by the page monitor from the page's
//! creation). Mutations come from a `MutationObserver` installed in a private isolated world,
//! so nothing is visible to (or instrumented by) the page's own scripts; the world is polled
//! for the time of the last mutation. Only the main frame's document is observed.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::{Error, Result};
use crate::page::{Page, remote_value};

/// The outcome of [`Page::wait_quiet`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quiet {
    /// Whether the page was quiet for the whole idle period before the limit.
    pub reached: bool,
    /// How long the wait took.
    pub waited: Duration,
    /// Requests (and service workers being set up) still in flight when the wait ended.
    pub in_flight: usize,
}

const WORLD: &str = "__shepherd_quiet";

/// Installs the observer once per world and reports milliseconds since the last mutation.
const PROBE: &str = r#"(() => {
  const g = globalThis;
  if (!g.__q) {
    g.__q = { last: performance.now() };
    const root = document.documentElement || document;
    new MutationObserver(() => { g.__q.last = performance.now(); })
      .observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
  }
  return performance.now() - g.__q.last;
})()"#;

impl Page {
    /// Wait until no request has been in flight and the DOM has not changed for `idle`, or
    /// until `limit` passes (then `reached` is false; this is not an error, since a page with
    /// a long poll is never quiet). Errors only when the page or browser is gone.
    pub async fn wait_quiet(&self, idle: Duration, limit: Duration) -> Result<Quiet> {
        let start = Instant::now();
        let poll = (idle / 4).clamp(Duration::from_millis(5), Duration::from_millis(50));
        let mut context = {
            let st = self.lock_state();
            st.quiet_world
                .filter(|(nav, _)| *nav == st.main_navigations)
                .map(|(_, ctx)| ctx)
        };
        loop {
            let (in_flight, since_net) = {
                let st = self.lock_state();
                (
                    st.in_flight.len() + st.workers_starting.len() + st.frames_parsing(),
                    st.last_network.elapsed(),
                )
            };
            let since_dom = match self.dom_idle(&mut context).await {
                Ok(d) => d,
                // The document changed under us (navigation): start a new world next round.
                Err(Error::Protocol { .. } | Error::JavaScript(_)) => {
                    context = None;
                    Duration::ZERO
                }
                Err(e) => return Err(e),
            };
            if in_flight == 0 && since_net >= idle && since_dom >= idle {
                return Ok(Quiet {
                    reached: true,
                    waited: start.elapsed(),
                    in_flight,
                });
            }
            if start.elapsed() >= limit {
                return Ok(Quiet {
                    reached: false,
                    waited: start.elapsed(),
                    in_flight,
                });
            }
            tokio::time::sleep(poll).await;
        }
    }

    async fn dom_idle(&self, context: &mut Option<i64>) -> Result<Duration> {
        let ctx = match context {
            Some(c) => *c,
            None => {
                let id = self.create_world(WORLD).await?;
                *context = Some(id);
                let mut st = self.lock_state();
                st.quiet_world = Some((st.main_navigations, id));
                id
            }
        };
        let answer = self
            .call(
                "Runtime.evaluate",
                json!({ "expression": PROBE, "contextId": ctx, "returnByValue": true }),
            )
            .await?;
        let ms = remote_value(answer)?.as_f64().unwrap_or(0.0).max(0.0);
        Ok(Duration::from_secs_f64(ms / 1000.0))
    }
}
