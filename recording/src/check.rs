//! Checking a recording after the fact (after a crash, a copy, a full disk): SQLite's own
//! integrity check, then every stored body against the length and SHA-256 recorded with it.

use crate::error::Result;
use crate::model::{ExchangeId, Part};
use crate::store::{ORPHAN_CHUNK, Recording};
use sha2::{Digest, Sha256};

/// What [`Recording::check`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The lines of SQLite's `PRAGMA integrity_check`: `["ok"]` for a sound file.
    pub sqlite: Vec<String>,
    /// Sessions stored.
    pub sessions: u64,
    /// Exchanges stored (each one whole: an exchange is committed in one piece).
    pub exchanges: u64,
    /// Stored exchanges that carry an error (the origin failed, the client went away): complete
    /// records of a failure, not damage.
    pub failed_exchanges: u64,
    /// Bodies whose stored bytes do not match the length and digest stored with them.
    pub bad_bodies: Vec<(ExchangeId, Part)>,
    /// Body chunks no exchange refers to: written by exchanges that were still in flight when
    /// the writer stopped. Harmless; the next [`Recording::open`] deletes them.
    pub orphan_chunks: u64,
}

impl CheckReport {
    /// Whether the file is sound: SQLite finds nothing wrong and every body matches its digest.
    pub fn is_sound(&self) -> bool {
        self.sqlite == ["ok"] && self.bad_bodies.is_empty()
    }
}

impl Recording {
    /// Checks the whole file: SQLite's integrity check, then every request and response body
    /// read back and compared with its recorded length and SHA-256. Reads everything once, a
    /// chunk at a time; works on read-only handles (and does not remove what it reports).
    pub fn check(&self) -> Result<CheckReport> {
        let conn = self.reader()?;
        let sqlite = {
            let mut stmt = conn.prepare("PRAGMA integrity_check")?;
            let lines = stmt.query_map([], |r| r.get::<_, String>(0))?;
            lines.collect::<std::result::Result<Vec<_>, _>>()?
        };
        let count = |sql: &str| -> Result<u64> {
            Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))?.max(0) as u64)
        };
        let sessions = count("SELECT count(*) FROM sessions")?;
        let exchanges = count("SELECT count(*) FROM exchanges")?;
        let failed_exchanges = count("SELECT count(*) FROM exchanges WHERE error IS NOT NULL")?;
        let orphan_chunks = count(&format!(
            "SELECT count(*) FROM body_chunks WHERE {ORPHAN_CHUNK}"
        ))?;
        let mut bad_bodies = Vec::new();
        let mut stmt = conn.prepare(
            "SELECT id, req_body_len, req_body_sha256, req_body_inline, req_body_blob,
                    resp_body_len, resp_body_sha256, resp_body_inline, resp_body_blob
             FROM exchanges ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let id = ExchangeId(r.get(0)?);
            for (part, at) in [(Part::Request, 1), (Part::Response, 5)] {
                let stored = StoredBody {
                    len: r.get(at)?,
                    sha256: r.get(at + 1)?,
                    inline: r.get(at + 2)?,
                    blob: r.get(at + 3)?,
                };
                if !self.body_matches(stored)? {
                    bad_bodies.push((id, part));
                }
            }
        }
        Ok(CheckReport {
            sqlite,
            sessions,
            exchanges,
            failed_exchanges,
            bad_bodies,
            orphan_chunks,
        })
    }

    fn body_matches(&self, body: StoredBody) -> Result<bool> {
        let mut hasher = Sha256::new();
        let mut len = 0u64;
        match (body.inline, body.blob) {
            (_, Some(blob)) => {
                let mut seq = 0;
                while let Some(chunk) = self.chunk(blob, seq)? {
                    hasher.update(&chunk);
                    len += chunk.len() as u64;
                    seq += 1;
                }
            }
            (Some(data), None) => {
                hasher.update(&data);
                len = data.len() as u64;
            }
            (None, None) => {}
        }
        Ok(i64::try_from(len).ok() == Some(body.len) && hasher.finalize()[..] == body.sha256[..])
    }
}

/// One body as its exchange row describes it.
struct StoredBody {
    len: i64,
    sha256: Vec<u8>,
    inline: Option<Vec<u8>>,
    blob: Option<i64>,
}
