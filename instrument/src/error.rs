//! The instrumenter's error type.

/// Why the instrumenter could not produce output.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The HTML rewriter failed in a way it could not recover from.
    #[error("HTML rewriting failed: {0}")]
    Rewriting(String),
    /// A cache directory could not be used.
    #[error("cache i/o: {0}")]
    Io(#[from] std::io::Error),
}
