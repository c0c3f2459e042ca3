//! Error type of the crate.

/// Everything that can go wrong reading or writing a recording.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite reported an error (corrupt file, disk full, locked beyond the busy timeout).
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    /// File system error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// JSON (HAR) could not be parsed or written.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The file is not a recording, or is from a newer Shepherd.
    #[error("format: {0}")]
    Format(String),
    /// A write was attempted on a recording opened read-only.
    #[error("recording is open read-only")]
    ReadOnly,
    /// The background writer stopped after an error; the message is the first error it hit.
    #[error("recording writer failed: {0}")]
    Writer(String),
    /// The requested item does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A body exceeded the caller's size limit.
    #[error("body larger than {0} bytes")]
    TooLarge(u64),
}

/// Result alias of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
