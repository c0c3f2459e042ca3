//! Reading stored bodies back as a stream of chunks.

use crate::error::{Error, Result};
use crate::store::Recording;

/// A stored body, read one chunk at a time (an iterator of byte chunks, and `std::io::Read`).
/// Each chunk is fetched with its own short query, so a reader can be held across `.await`
/// points and many can be open at once; memory is one chunk (≤ 256 KiB) per reader.
pub struct BodyReader {
    source: Source,
    len: u64,
    /// Unread part of the current chunk (for `io::Read`).
    pending: Vec<u8>,
    pending_pos: usize,
}

enum Source {
    Inline(Option<Vec<u8>>),
    Chunked {
        rec: Recording,
        blob: i64,
        next: i64,
    },
}

impl BodyReader {
    pub(crate) fn inline(data: Vec<u8>) -> Self {
        BodyReader {
            len: data.len() as u64,
            source: Source::Inline(Some(data)),
            pending: Vec::new(),
            pending_pos: 0,
        }
    }

    pub(crate) fn chunked(rec: Recording, blob: i64, len: u64) -> Self {
        BodyReader {
            source: Source::Chunked { rec, blob, next: 0 },
            len,
            pending: Vec::new(),
            pending_pos: 0,
        }
    }

    /// Total length of the body in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Next chunk, `Ok(None)` at the end. Errors if the file lost chunks (never for a file
    /// written by this crate).
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        match &mut self.source {
            Source::Inline(data) => Ok(data.take().filter(|d| !d.is_empty())),
            Source::Chunked { rec, blob, next } => {
                let chunk = rec.chunk(*blob, *next)?;
                match chunk {
                    Some(c) => {
                        *next += 1;
                        Ok(Some(c))
                    }
                    None if *next == 0 && self.len > 0 => Err(Error::Format(format!(
                        "body blob {blob} has no chunks but {} bytes were recorded",
                        self.len
                    ))),
                    None => Ok(None),
                }
            }
        }
    }

    /// Reads everything, failing with [`Error::TooLarge`] when the body exceeds `limit`.
    pub fn read_to_vec(mut self, limit: u64) -> Result<Vec<u8>> {
        if self.len > limit {
            return Err(Error::TooLarge(limit));
        }
        let mut out = Vec::with_capacity(self.len as usize);
        while let Some(c) = self.next_chunk()? {
            if out.len() as u64 + c.len() as u64 > limit {
                return Err(Error::TooLarge(limit));
            }
            if out.is_empty() {
                out = c;
            } else {
                out.extend_from_slice(&c);
            }
        }
        Ok(out)
    }
}

impl Iterator for BodyReader {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_chunk().transpose()
    }
}

impl std::io::Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pending_pos >= self.pending.len() {
            match self.next_chunk() {
                Ok(Some(c)) => {
                    self.pending = c;
                    self.pending_pos = 0;
                }
                Ok(None) => return Ok(0),
                Err(e) => return Err(std::io::Error::other(e)),
            }
        }
        let n = buf.len().min(self.pending.len() - self.pending_pos);
        buf[..n].copy_from_slice(&self.pending[self.pending_pos..self.pending_pos + n]);
        self.pending_pos += n;
        Ok(n)
    }
}
