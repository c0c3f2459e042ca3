//! Recording store (one SQLite file per recording), HAR 1.2 import/export, session merging,
//! replay request matching (exact, ignore lists, learned request patterns, fuzzy) and date
//! shifting for replayed responses.
//!
//! Writing (the proxy in record mode):
//! ```no_run
//! # fn main() -> shepherd_recording::Result<()> {
//! use shepherd_recording::*;
//! let rec = Recording::open("site.rec")?;
//! let session = rec.begin_session("record")?;
//! let mut ex = rec.begin_exchange(session, RequestHead {
//!     method: "GET".into(), url: "https://example.com/".into(),
//!     http_version: "HTTP/2".into(), headers: vec![],
//! })?;
//! ex.response_head(ResponseHead { status: 200, reason: String::new(),
//!     http_version: "HTTP/2".into(), headers: vec![Header::new("content-type", "text/html")] });
//! ex.response_body(b"<html>")?;
//! ex.finish(Timings::starting_now())?;
//! rec.flush()?;
//! # Ok(()) }
//! ```
//! Replaying: [`Recording::open_readonly`], [`Recording::replay_requests`] into a
//! [`Matcher`], then [`Recording::exchange`] and [`Recording::response_body`] for the match,
//! with [`DateShift`] applied to the response headers.

mod body;
mod check;
pub mod codec;
mod dates;
mod error;
pub mod har;
mod isotime;
pub mod matcher;
mod merge;
mod model;
mod protocols;
mod schema;
mod store;
mod websocket;

pub use body::BodyReader;
pub use check::CheckReport;
pub use dates::{DateShift, shift_http_date, shift_set_cookie};
pub use error::{Error, Result};
pub use matcher::{LiveRequest, Match, MatchConfig, Matcher, Miss, RecordedRequest, Tier};
pub use merge::{MergeReport, merge, merge_with_progress};
pub use model::*;
pub use protocols::{OriginProtocol, normalize_authority};
pub use schema::SCHEMA_VERSION;
pub use store::{CHUNK_SIZE, ExchangeWriter, GROUP_MAX, INLINE_MAX, Recording};
pub use websocket::{WsKind, WsMessage};
