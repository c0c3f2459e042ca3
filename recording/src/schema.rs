//! Schema and migration chain. A recording stores its schema version in `meta`; opening an older
//! file applies each step after its version in order, inside one transaction per step, so an
//! interrupted migration leaves the file at the last completed version. Files from a newer
//! Shepherd are refused rather than guessed at.

use crate::error::{Error, Result};
use crate::model::Header;
use rusqlite::{Connection, OptionalExtension};

/// Value of `meta.format`; files without it are not recordings.
pub const FORMAT_NAME: &str = "shepherd-recording";

/// Schema version written by this build.
pub const SCHEMA_VERSION: u32 = 3;

/// The oldest version read-only handles accept: every read of a newer table checks the
/// version first (version 2 files simply have no WebSocket messages).
pub const READABLE_FROM: u32 = 2;

/// Migration steps: `MIGRATIONS[i]` turns version `i` into version `i + 1`.
/// Never edit a released step; append a new one and bump [`SCHEMA_VERSION`].
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: exchanges, sessions, chunked bodies, per-host protocols.
    r#"
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE sessions (
        id INTEGER PRIMARY KEY,
        label TEXT NOT NULL,
        started_unix_us INTEGER NOT NULL
    );
    CREATE TABLE exchanges (
        id INTEGER PRIMARY KEY,
        session INTEGER NOT NULL,
        method TEXT NOT NULL,
        url TEXT NOT NULL,
        req_http_version TEXT NOT NULL,
        req_headers BLOB NOT NULL,
        req_body_len INTEGER NOT NULL,
        req_body_sha256 BLOB NOT NULL,
        req_body_inline BLOB,
        req_body_blob INTEGER,
        status INTEGER,
        reason TEXT,
        resp_http_version TEXT,
        resp_headers BLOB,
        resp_body_len INTEGER NOT NULL,
        resp_body_sha256 BLOB NOT NULL,
        resp_body_inline BLOB,
        resp_body_blob INTEGER,
        started_unix_us INTEGER NOT NULL,
        blocked_us INTEGER,
        dns_us INTEGER,
        connect_us INTEGER,
        ssl_us INTEGER,
        send_us INTEGER NOT NULL,
        wait_us INTEGER NOT NULL,
        receive_us INTEGER NOT NULL,
        websocket INTEGER NOT NULL DEFAULT 0,
        error TEXT
    );
    CREATE INDEX exchanges_by_session ON exchanges (session, id);
    CREATE TABLE body_chunks (
        blob INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (blob, seq)
    );
    CREATE TABLE hosts (
        session INTEGER NOT NULL,
        authority TEXT NOT NULL,
        alpn TEXT NOT NULL,
        PRIMARY KEY (session, authority)
    );
    "#,
    // 1 -> 2: traces uploaded by the runtime, one per document, appended in batches.
    r#"
    CREATE TABLE traces (
        id INTEGER PRIMARY KEY,
        session INTEGER NOT NULL,
        doc TEXT NOT NULL,
        page_url TEXT,
        UNIQUE (session, doc)
    );
    CREATE TABLE trace_batches (
        trace INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (trace, seq)
    );
    "#,
    // 2 -> 3: WebSocket messages of upgraded exchanges, both directions, in order.
    r#"
    CREATE TABLE ws_messages (
        exchange INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        from_client INTEGER NOT NULL,
        opcode INTEGER NOT NULL,
        at_us INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (exchange, seq)
    );
    "#,
];

/// Reads the schema version; 0 for an empty database. Errors for a non-recording.
pub fn current_version(conn: &Connection) -> Result<u32> {
    let has_meta: bool = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |_| Ok(true),
        )
        .optional()?
        .unwrap_or(false);
    if !has_meta {
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(Error::Format(
                "SQLite file has tables but no `meta` table: not a Shepherd recording".into(),
            ));
        }
        return Ok(0);
    }
    let format: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
            r.get(0)
        })
        .optional()?;
    if format.as_deref() != Some(FORMAT_NAME) {
        return Err(Error::Format(format!(
            "meta.format is {format:?}, expected {FORMAT_NAME:?}"
        )));
    }
    let version: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    version
        .as_deref()
        .and_then(|v| v.parse::<u32>().ok())
        .ok_or_else(|| Error::Format(format!("bad meta.schema_version {version:?}")))
}

/// Brings the database to `target` (normally [`SCHEMA_VERSION`]), one transaction per step.
pub fn migrate_to(conn: &mut Connection, target: u32) -> Result<u32> {
    let mut version = current_version(conn)?;
    if version > SCHEMA_VERSION {
        return Err(Error::Format(format!(
            "recording has schema version {version}, this Shepherd reads up to {SCHEMA_VERSION}; upgrade Shepherd"
        )));
    }
    while version < target {
        let step = MIGRATIONS
            .get(version as usize)
            .ok_or_else(|| Error::Format(format!("no migration from version {version}")))?;
        let tx = conn.transaction()?;
        tx.execute_batch(step)?;
        if version == 0 {
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('format', ?1)",
                [FORMAT_NAME],
            )?;
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('created_unix_us', ?1)",
                [crate::model::now_unix_us().to_string()],
            )?;
        }
        version += 1;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [version.to_string()],
        )?;
        tx.commit()?;
    }
    Ok(version)
}

/// Header lists are stored as one blob: for each header, a big-endian u32 name length, the name
/// bytes, a big-endian u32 value length, the value bytes. Compact and byte-exact.
pub fn encode_headers(headers: &[Header]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        headers
            .iter()
            .map(|h| 8 + h.name.len() + h.value.len())
            .sum(),
    );
    for h in headers {
        out.extend_from_slice(&(h.name.len() as u32).to_be_bytes());
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(&(h.value.len() as u32).to_be_bytes());
        out.extend_from_slice(&h.value);
    }
    out
}

/// Inverse of [`encode_headers`]; errors on truncated or non-UTF-8 names.
pub fn decode_headers(mut bytes: &[u8]) -> Result<Vec<Header>> {
    fn take<'a>(bytes: &mut &'a [u8]) -> Result<&'a [u8]> {
        if bytes.len() < 4 {
            return Err(Error::Format("truncated header blob".into()));
        }
        let (len, rest) = bytes.split_at(4);
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        if rest.len() < len {
            return Err(Error::Format("truncated header blob".into()));
        }
        let (item, rest) = rest.split_at(len);
        *bytes = rest;
        Ok(item)
    }
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let name = take(&mut bytes)?;
        let name = std::str::from_utf8(name)
            .map_err(|_| Error::Format("header name is not UTF-8".into()))?
            .to_owned();
        let value = take(&mut bytes)?.to_vec();
        out.push(Header { name, value });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_one_file_migrates_and_keeps_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.rec");
        {
            let mut c = Connection::open(&path).unwrap();
            assert_eq!(migrate_to(&mut c, 1).unwrap(), 1);
            c.execute(
                "INSERT INTO sessions (id, label, started_unix_us) VALUES (1, 'old', 5)",
                [],
            )
            .unwrap();
        }
        let rec = crate::Recording::open(&path).unwrap();
        assert_eq!(rec.schema_version().unwrap(), SCHEMA_VERSION);
        assert_eq!(rec.sessions().unwrap()[0].label, "old");
        assert!(rec.traces().unwrap().is_empty(), "v2 tables exist");
    }

    #[test]
    fn headers_blob_round_trips_and_rejects_truncation() {
        let h = vec![
            crate::Header::new("A", vec![0u8, 255, 10]),
            crate::Header::new("", Vec::new()),
            crate::Header::new("Set-Cookie", "x=1"),
        ];
        let blob = encode_headers(&h);
        assert_eq!(decode_headers(&blob).unwrap(), h);
        // A cut at a header boundary is itself a valid (shorter) list; any other cut is an error.
        let boundaries: Vec<usize> = (0..h.len())
            .map(|k| encode_headers(&h[..k]).len())
            .collect();
        for cut in 1..blob.len() {
            let r = decode_headers(&blob[..cut]);
            match boundaries.iter().position(|&b| b == cut) {
                Some(k) => assert_eq!(r.unwrap(), h[..k], "cut {cut}"),
                None => assert!(r.is_err(), "cut {cut} accepted"),
            }
        }
    }
}
