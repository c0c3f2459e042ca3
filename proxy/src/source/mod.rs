//! Where responses come from, chosen once when the proxy starts: live origins (optionally teed
//! into a recorder) or a recording. Everything that differs between record, serve and replay
//! lives behind [`Source`]; the rest of the request path is the same for all three.
//!
//! A replay source owns no upstream client and a live one no matcher, so "replay that dials
//! out" or "record without a recorder" cannot be built.

mod live;
mod live_websocket;
mod recorder;
mod replay;
mod replay_websocket;

pub(crate) use live::Live;
pub(crate) use recorder::Recorder;
pub(crate) use replay::Replayer;
pub use replay::{ReplayOptions, SeenRequest};

use crate::body::ProxyBody;
use crate::client_body::ClientBody;
use crate::error::ProxyError;
use crate::respond::Answer;
use crate::stats::Stats;
use crate::tls::UpstreamTrust;
use crate::trace_sink::TraceSink;
use http::{Request, Response};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Where responses come from, chosen once at start. Everything that differs between record,
/// serve and replay follows from this choice.
#[derive(Debug)]
pub enum ResponseSource {
    /// Live origins, their certificates checked with `trust`. With `record`, every exchange
    /// (and every trace pages upload) is also stored in the recording at that path.
    Live {
        /// How origin certificates are verified.
        trust: UpstreamTrust,
        /// The recording to create or extend with a new session.
        record: Option<PathBuf>,
    },
    /// The recording at `path`; the proxy never connects anywhere.
    Recording {
        /// The recording served.
        path: PathBuf,
        /// Matching and date shifting.
        options: ReplayOptions,
        /// Where traces of replayed pages go (a recording, as a new session of kind
        /// `replay`); by default the served recording itself.
        trace_out: Option<PathBuf>,
    },
}

impl ResponseSource {
    /// Live origins with the default trust, not recorded (`shepherd serve`).
    pub fn live() -> Self {
        ResponseSource::Live {
            trust: UpstreamTrust::default(),
            record: None,
        }
    }

    /// Live origins recorded into `path` (`shepherd record`).
    pub fn record(path: impl Into<PathBuf>) -> Self {
        ResponseSource::Live {
            trust: UpstreamTrust::default(),
            record: Some(path.into()),
        }
    }

    /// The recording at `path` with default options (`shepherd replay`).
    pub fn replay(path: impl Into<PathBuf>) -> Self {
        ResponseSource::Recording {
            path: path.into(),
            options: ReplayOptions::default(),
            trace_out: None,
        }
    }
}

/// The response source of a running proxy.
pub(crate) enum Source {
    /// Live origins; with a recorder, every exchange is stored as it streams.
    Live(Box<Live>),
    /// A recording; never connects anywhere.
    Replay(Arc<Replayer>),
}

impl Source {
    /// Opens the source described by `config`; also returns where traces uploaded by pages
    /// go unless the embedder chose a sink of its own.
    pub fn open(
        config: ResponseSource,
        stats: &Stats,
    ) -> Result<(Source, Option<Arc<dyn TraceSink>>), ProxyError> {
        match config {
            ResponseSource::Live { trust, record } => {
                let recorder =
                    match record {
                        None => None,
                        Some(path) => Some(Arc::new(Recorder::create(&path, "record").map_err(
                            |e| ProxyError::Recording(format!("{}: {e}", path.display())),
                        )?)),
                    };
                let traces = recorder.clone().map(|r| r as Arc<dyn TraceSink>);
                let live = Live::new(&trust, stats, recorder)?;
                Ok((Source::Live(Box::new(live)), traces))
            }
            ResponseSource::Recording {
                path,
                options,
                trace_out,
            } => {
                let replayer = Replayer::open(&path, options)
                    .map_err(|e| ProxyError::Recording(format!("{}: {e}", path.display())))?;
                // Re-executions are analysed like recordings: their traces go into a new
                // session, of the replayed file unless told otherwise.
                let sink = SessionSink::new(trace_out.unwrap_or(path), "replay");
                Ok((
                    Source::Replay(Arc::new(replayer)),
                    Some(Arc::new(sink) as Arc<dyn TraceSink>),
                ))
            }
        }
    }

    /// One request, forwarded or answered from the recording.
    pub async fn exchange(
        &self,
        stats: &Stats,
        url: http::Uri,
        req: Request<ClientBody>,
    ) -> Answer {
        match self {
            Source::Live(live) => live.exchange(url, req).await,
            Source::Replay(replay) => replay::exchange(replay, stats, url, req).await,
        }
    }

    /// A WebSocket upgrade: tunnelled to the origin, or played back from the recording.
    pub async fn websocket(
        &self,
        stats: &Stats,
        url: http::Uri,
        req: Request<ClientBody>,
    ) -> Response<ProxyBody> {
        match self {
            Source::Live(live) => live_websocket::handle(live, stats, url, req).await,
            Source::Replay(replay) => {
                replay_websocket::serve(&replay.ws, replay.recording(), stats, url, req).await
            }
        }
    }

    /// The TLS configuration to present to the browser for `origin`: replay offers the
    /// protocol the origin spoke when it was recorded; live origins get `base`.
    pub fn tls_config(
        &self,
        origin: &str,
        cert_host: &str,
        base: Arc<rustls::ServerConfig>,
    ) -> Arc<rustls::ServerConfig> {
        match self {
            Source::Live(_) => base,
            Source::Replay(replay) => replay.tls_config(origin, cert_host, base),
        }
    }

    /// The decoded body of `GET url` (a page's own source map, for chaining): fetched from the
    /// origin, or taken from the recording.
    pub async fn fetch(&self, url: &str) -> Option<Vec<u8>> {
        match self {
            Source::Live(live) => live.fetch(url).await,
            Source::Replay(replay) => {
                let replay = replay.clone();
                let url = url.to_string();
                tokio::task::spawn_blocking(move || replay.recorded_get(&url))
                    .await
                    .ok()
                    .flatten()
            }
        }
    }

    /// Starts a new run of a replay (the nth identical request gets the nth response again);
    /// `false` for live sources, which have nothing to rewind.
    pub fn reset(&self) -> bool {
        match self {
            Source::Live(_) => false,
            Source::Replay(replay) => {
                replay.reset();
                true
            }
        }
    }

    /// The requests a replay answered since its last reset (empty for live sources).
    pub fn replayed_requests(&self) -> Vec<SeenRequest> {
        match self {
            Source::Live(_) => Vec::new(),
            Source::Replay(replay) => replay.seen(),
        }
    }

    /// Commits what is queued for the recording.
    pub fn flush(&self) {
        if let Source::Live(live) = self {
            live.flush();
        }
    }

    /// For logs: `live`, `live, recorded` or `replay`.
    pub fn describe(&self) -> &'static str {
        match self {
            Source::Live(live) if live.records() => "live, recorded",
            Source::Live(_) => "live",
            Source::Replay(_) => "replay",
        }
    }
}

/// A trace sink that opens its recording (and begins a session) on the first batch, so a
/// replay that nobody traces leaves its file untouched. A failed open is not remembered: the
/// file may have been busy (another recorder finishing), the next batch tries again.
struct SessionSink {
    path: PathBuf,
    kind: &'static str,
    recorder: Mutex<Option<Arc<Recorder>>>,
}

impl SessionSink {
    fn new(path: PathBuf, kind: &'static str) -> Self {
        SessionSink {
            path,
            kind,
            recorder: Mutex::new(None),
        }
    }

    fn recorder(&self) -> Result<Arc<Recorder>, String> {
        let mut slot = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = slot.as_ref() {
            return Ok(r.clone());
        }
        let r = Arc::new(
            Recorder::create(&self.path, self.kind)
                .map_err(|e| format!("{}: {e}", self.path.display()))?,
        );
        *slot = Some(r.clone());
        Ok(r)
    }
}

impl TraceSink for SessionSink {
    fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String> {
        self.recorder()?.append(doc, seq, data)
    }

    fn flush(&self) {
        let slot = self.recorder.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = slot.as_ref() {
            r.flush();
        }
    }
}
