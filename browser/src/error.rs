//! The one error type of this crate.

use std::time::Duration;

/// Everything that can go wrong while driving Chromium.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The Chromium executable does not exist (or is not executable).
    #[error(
        "Chromium not found at {path}: install it with `scripts/install-deps` (or `apt-get install -y chromium`), or point SHEPHERD_CHROMIUM at an executable"
    )]
    ChromiumMissing {
        /// The path that was tried.
        path: String,
    },
    /// Chromium could not be started or did not come up in time.
    #[error("Chromium failed to start: {reason}{}", stderr_suffix(.stderr))]
    Launch {
        /// What happened.
        reason: String,
        /// The last lines Chromium wrote to stderr, if any.
        stderr: String,
    },
    /// An operating-system error (spawning, profile directory, sockets).
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The DevTools websocket failed.
    #[error("DevTools websocket: {0}")]
    WebSocket(String),
    /// The browser went away (crashed, killed or closed) while we needed it.
    #[error("browser disconnected: {0}")]
    Disconnected(String),
    /// The page's target was detached or its renderer crashed.
    #[error("page target gone: {0}")]
    TargetGone(String),
    /// A DevTools command answered with an error.
    #[error("DevTools command {method} failed ({code}): {message}")]
    Protocol {
        /// The command.
        method: String,
        /// The protocol error code.
        code: i64,
        /// The protocol error message.
        message: String,
    },
    /// A DevTools answer did not have the shape we expected.
    #[error("unexpected DevTools answer to {method}: {detail}")]
    BadResponse {
        /// The command.
        method: String,
        /// What was missing or wrong.
        detail: String,
    },
    /// Something did not happen within its time limit.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What we were waiting for.
        what: String,
        /// The limit.
        after: Duration,
    },
    /// A navigation failed (`net::ERR_…`) before any document committed.
    #[error("navigation to {url} failed: {error}")]
    Navigation {
        /// The URL.
        url: String,
        /// Chromium's error text.
        error: String,
    },
    /// Evaluated JavaScript threw (or its promise rejected).
    #[error("JavaScript exception: {0}")]
    JavaScript(String),
    /// A selector or node id matched no element, or the element has no visible box.
    #[error("element {0}")]
    Element(String),
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- last Chromium stderr ---\n{stderr}")
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
