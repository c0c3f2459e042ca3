//! Reading stored bodies back: as a stream of chunks (bounded memory for any size), whole, or
//! with their content coding undone.

use crate::codec;
use crate::error::{Error, Result};
use crate::model::{ExchangeId, Part, header_value};
use crate::store::Recording;
use rusqlite::OptionalExtension;

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

impl Recording {
    /// Streams a stored body (responses still content-encoded, byte for byte as received).
    /// Reads one chunk at a time, so memory stays bounded for any body size.
    pub fn body(&self, id: ExchangeId, part: Part) -> Result<BodyReader> {
        let (inline_col, blob_col, len_col) = match part {
            Part::Request => ("req_body_inline", "req_body_blob", "req_body_len"),
            Part::Response => ("resp_body_inline", "resp_body_blob", "resp_body_len"),
        };
        let conn = self.reader()?;
        let sql =
            format!("SELECT {inline_col}, {blob_col}, {len_col} FROM exchanges WHERE id = ?1");
        let row: Option<(Option<Vec<u8>>, Option<i64>, i64)> = conn
            .query_row(&sql, [id.0], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        let (inline, blob, len) =
            row.ok_or_else(|| Error::NotFound(format!("exchange {}", id.0)))?;
        Ok(match blob {
            Some(blob) => BodyReader::chunked(self.clone(), blob, len as u64),
            None => BodyReader::inline(inline.unwrap_or_default()),
        })
    }

    /// Streams the request body of `id`.
    pub fn request_body(&self, id: ExchangeId) -> Result<BodyReader> {
        self.body(id, Part::Request)
    }

    /// Streams the response body of `id` (as received on the wire: still content-encoded).
    pub fn response_body(&self, id: ExchangeId) -> Result<BodyReader> {
        self.body(id, Part::Response)
    }

    /// Reads a whole body into memory, failing with [`Error::TooLarge`] above `limit` bytes.
    pub fn body_bytes(&self, id: ExchangeId, part: Part, limit: u64) -> Result<Vec<u8>> {
        self.body(id, part)?.read_to_vec(limit)
    }

    /// The response body of `id` with its `Content-Encoding` undone (gzip, deflate, br, zstd,
    /// chains). `None` when the exchange has no response, the coding is unknown or corrupt, or
    /// the stored or decoded body exceeds `limit` bytes. Errors only for a missing exchange or a
    /// storage failure.
    pub fn decoded_response_body(&self, id: ExchangeId, limit: u64) -> Result<Option<Vec<u8>>> {
        let ex = self.exchange(id)?;
        let Some(resp) = &ex.response else {
            return Ok(None);
        };
        if ex.response_body.len > limit {
            return Ok(None);
        }
        let raw = self.body_bytes(id, Part::Response, limit)?;
        let coding = header_value(&resp.headers, "content-encoding")
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        Ok(codec::decode(&coding, &raw, limit))
    }

    /// Fetches chunk `seq` of chunked body `blob` (used by [`BodyReader`]).
    pub(crate) fn chunk(&self, blob: i64, seq: i64) -> Result<Option<Vec<u8>>> {
        let conn = self.reader()?;
        let mut stmt =
            conn.prepare_cached("SELECT data FROM body_chunks WHERE blob = ?1 AND seq = ?2")?;
        Ok(stmt.query_row([blob, seq], |r| r.get(0)).optional()?)
    }
}
