//! Where trace batches uploaded by pages go.

/// Receives trace batches uploaded to `POST /__shepherd/trace`. Recording proxies store them
/// in the recording and replaying ones in a new session; an embedder may supply its own.
pub trait TraceSink: Send + Sync + 'static {
    /// Stores batch `seq` of document `doc`.
    fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String>;

    /// Commits what is buffered (the proxy is shutting down).
    fn flush(&self) {}
}
