//! Traces kept in memory instead of a recording: an embedder's [`TraceSink`] (tests, the
//! explorer) that reads each document's trace back as the page uploaded it.

use shepherd_proxy::TraceSink;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// Trace batches uploaded by pages: document id -> batch number -> body. A batch that arrives
/// twice (the exit beacon repeats the last one) keeps its first body, as the recorder does.
#[derive(Default)]
pub struct MemoryTraces(Mutex<BTreeMap<String, BTreeMap<u64, Vec<u8>>>>);

impl TraceSink for MemoryTraces {
    fn append(&self, doc: &str, seq: u64, data: &[u8]) -> Result<(), String> {
        self.lock()
            .entry(doc.to_string())
            .or_default()
            .entry(seq)
            .or_insert_with(|| data.to_vec());
        Ok(())
    }
}

impl MemoryTraces {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BTreeMap<u64, Vec<u8>>>> {
        // A panic while holding the lock leaves at worst a batch missing.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Documents that uploaded at least one batch.
    pub fn docs(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// The contiguous prefix (batches 0, 1, …) of what `doc` uploaded: a JSONL trace.
    pub fn bytes(&self, doc: &str) -> Vec<u8> {
        contiguous(self.lock().get(doc))
    }

    /// Like [`MemoryTraces::bytes`], and forgets every document.
    pub fn take(&self, doc: &str) -> Vec<u8> {
        let mut g = self.lock();
        let out = contiguous(g.get(doc));
        g.clear();
        out
    }

    /// Forgets every document.
    pub fn clear(&self) {
        self.lock().clear();
    }
}

fn contiguous(batches: Option<&BTreeMap<u64, Vec<u8>>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (want, (seq, body)) in batches.into_iter().flatten().enumerate() {
        if *seq != want as u64 {
            break;
        }
        out.extend_from_slice(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_body_wins_and_gaps_cut_the_trace() {
        let m = MemoryTraces::default();
        m.append("d", 0, b"a").unwrap();
        m.append("d", 0, b"x").unwrap();
        m.append("d", 2, b"c").unwrap();
        assert_eq!(m.bytes("d"), b"a");
        m.append("d", 1, b"b").unwrap();
        assert_eq!(m.bytes("d"), b"abc");
        assert_eq!(m.docs(), vec!["d".to_string()]);
        assert_eq!(m.take("d"), b"abc");
        assert!(m.docs().is_empty());
    }
}
