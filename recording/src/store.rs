//! The recording handle: one SQLite file per recording, written by a dedicated thread.
//! Other files extend the handle and use this one, never the reverse: reading bodies back
//! (`body.rs`), WebSocket messages (`websocket.rs`), origin protocols (`protocols.rs`), the
//! matcher's input (`matcher/load.rs`).
//!
//! Why a writer thread: the proxy runs on tokio and records thousands of exchanges per second.
//! Calls on [`Recording`] and [`ExchangeWriter`] only hash bytes and push messages onto a
//! bounded channel, so async tasks never wait on disk I/O (they block only when the writer is
//! more than [`CHANNEL_CAPACITY`] messages behind — backpressure instead of unbounded memory).
//! The thread owns the only writing connection. A completed exchange is one message, inserted
//! whole, so it is never half-stored. The writer commits whenever its queue runs empty: at
//! ordinary rates every exchange gets its own transaction the moment it completes; under load,
//! the exchanges that queued up while the previous commit ran share the next one (group commit,
//! capped at [`GROUP_MAX`] messages / 32 MiB). Either way nothing waits for a timer, and a crash
//! loses only exchanges that had not reached the disk yet — the ones still in flight.
//!
//! Durability: WAL with `synchronous=NORMAL`. In WAL mode a commit is a `write()` of the WAL
//! frames into the OS page cache; NORMAL skips the fsync at commit and syncs at checkpoints.
//! A killed *process* (SIGKILL, panic, OOM) therefore loses nothing that was committed: the
//! kernel still holds the frames and the next open replays the WAL. Only an OS crash or power
//! loss can roll back the last commits — and even then the file stays consistent. FULL would
//! add one fsync per exchange (milliseconds on real disks), capping recording at a few hundred
//! exchanges per second for a guarantee the requirement ("SIGKILL loses at most in-flight
//! exchanges") does not ask for.
//!
//! Bodies: up to [`INLINE_MAX`] bytes are kept in memory and stored inline in the exchange row.
//! Larger bodies spill into `body_chunks` as they stream (chunks of [`CHUNK_SIZE`]), so memory
//! per exchange stays bounded; the exchange row that references them is committed at the end.
//! Chunks of exchanges that never complete are deleted (on drop, or at the next writable open).

use crate::error::{Error, Result};
use crate::model::*;
use crate::schema;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};

/// Bodies up to this size are stored inline in the exchange row.
pub const INLINE_MAX: usize = 256 * 1024;
/// Size of the rows large bodies are split into.
pub const CHUNK_SIZE: usize = 256 * 1024;
/// Messages the writer may lag behind before callers block (bounds memory to ~64 MiB of chunks).
pub const CHANNEL_CAPACITY: usize = 256;
/// Bytes the writer lets accumulate in one transaction before committing.
const CHUNK_TX_BYTES: usize = 32 * 1024 * 1024;
/// Messages the writer lets accumulate in one transaction before committing.
pub const GROUP_MAX: usize = 512;

/// A completed exchange on its way to the writer thread.
pub(crate) struct ExchangeRow {
    id: i64,
    session: i64,
    request: RequestHead,
    req_body: StoredBody,
    response: Option<ResponseHead>,
    resp_body: StoredBody,
    timings: Timings,
    websocket: bool,
    error: Option<String>,
}

/// Where a body ended up.
struct StoredBody {
    len: u64,
    sha256: [u8; 32],
    inline: Option<Vec<u8>>,
    blob: Option<i64>,
}

/// What the writer thread is asked to do, in order.
pub(crate) enum Cmd {
    Session {
        id: i64,
        label: String,
        started_unix_us: i64,
    },
    Chunk {
        blob: i64,
        seq: i64,
        data: Vec<u8>,
    },
    DiscardBlob(i64),
    Exchange(Box<ExchangeRow>),
    Host {
        session: i64,
        authority: String,
        alpn: String,
    },
    Trace {
        session: i64,
        doc: String,
        seq: i64,
        data: Vec<u8>,
    },
    /// A `ws_messages` row (`websocket.rs` builds it).
    WsMessage {
        exchange: i64,
        seq: i64,
        from_client: bool,
        opcode: u8,
        at_us: i64,
        data: Vec<u8>,
    },
    Flush(SyncSender<Result<(), String>>),
}

struct Shared {
    path: PathBuf,
    tx: Option<SyncSender<Cmd>>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Idle read connections; reads take one (or open one) so replay streams many bodies in
    /// parallel instead of queueing on a single connection.
    readers: Mutex<Vec<Connection>>,
    next_exchange: AtomicI64,
    next_blob: AtomicI64,
    next_session: AtomicI64,
    /// Schema version of the file (read-only handles may read an older one).
    version: u32,
    error: Arc<Mutex<Option<String>>>,
    /// Exclusive advisory lock (flock) held by the writing handle, so a second recorder on the
    /// same file fails at open instead of colliding on ids. SQLite's own locks are fcntl locks,
    /// which are independent of flock on Linux.
    _writer_lock: Option<std::fs::File>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Close the reader first so the writer's connection is the last one: only then does
        // SQLite checkpoint and delete the `-wal`/`-shm` files, leaving one self-contained file.
        self.readers
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        // Closing the channel lets the writer commit what is queued and exit.
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// An open recording. Cheap to clone (shared handle), `Send + Sync`; all clones write through the
/// same background writer. Dropping the last clone commits everything queued and closes the file.
/// One writing process per file at a time; any number of read-only opens may run alongside.
#[derive(Clone)]
pub struct Recording {
    inner: Arc<Shared>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave a Connection half-updated in a way SQLite
    // does not recover from, so poisoning is ignored.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The condition on `body_chunks` rows no exchange refers to: chunks written by exchanges that
/// were still in flight when their writer stopped.
pub(crate) const ORPHAN_CHUNK: &str = "blob NOT IN (
    SELECT req_body_blob FROM exchanges WHERE req_body_blob IS NOT NULL
    UNION SELECT resp_body_blob FROM exchanges WHERE resp_body_blob IS NOT NULL)";

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    Ok(())
}

impl Recording {
    /// Opens `path` for recording, creating it if missing and migrating an older schema.
    /// Chunks left behind by exchanges that were in flight when a previous writer died are
    /// removed.
    pub fn open(path: impl AsRef<Path>) -> Result<Recording> {
        let path = path.as_ref().to_path_buf();
        let mut conn = Connection::open(&path)?;
        let lock_file = std::fs::OpenOptions::new().read(true).open(&path)?;
        match lock_file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Format(format!(
                    "{} is being written by another recorder",
                    path.display()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e.into()),
        }
        configure(&conn)?;
        // Only takes effect when the file is new. Larger pages mean shorter overflow chains for
        // 256 KiB body chunks (measured in benches/store.rs).
        conn.pragma_update(None, "page_size", PAGE_SIZE)?;
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Format(format!(
                "could not switch {} to WAL (journal_mode={mode})",
                path.display()
            )));
        }
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        schema::migrate_to(&mut conn, schema::SCHEMA_VERSION)?;
        conn.execute(&format!("DELETE FROM body_chunks WHERE {ORPHAN_CHUNK}"), [])?;
        let max = |sql: &str| -> Result<i64> { Ok(conn.query_row(sql, [], |r| r.get(0))?) };
        let next_exchange = max("SELECT coalesce(max(id), 0) + 1 FROM exchanges")?;
        let next_session = max("SELECT coalesce(max(id), 0) + 1 FROM sessions")?;
        let next_blob = max("SELECT coalesce(max(blob), 0) + 1 FROM body_chunks")?.max(
            max("SELECT coalesce(max(max(coalesce(req_body_blob, 0), coalesce(resp_body_blob, 0))), 0) + 1 FROM exchanges")?,
        );
        let reader = open_reader(&path)?;
        let (tx, rx) = sync_channel(CHANNEL_CAPACITY);
        let error = Arc::new(Mutex::new(None));
        let thread_error = error.clone();
        let thread = std::thread::Builder::new()
            .name("recording-writer".into())
            .spawn(move || writer_loop(conn, rx, thread_error))?;
        Ok(Recording {
            inner: Arc::new(Shared {
                path,
                tx: Some(tx),
                thread: Some(thread),
                readers: Mutex::new(vec![reader]),
                next_exchange: AtomicI64::new(next_exchange),
                next_blob: AtomicI64::new(next_blob),
                next_session: AtomicI64::new(next_session),
                version: schema::SCHEMA_VERSION,
                error,
                _writer_lock: Some(lock_file),
            }),
        })
    }

    /// Opens an existing recording for reading only (replay, export). Refuses files with an
    /// older schema (open them once with [`Recording::open`] to migrate) or a newer one.
    pub fn open_readonly(path: impl AsRef<Path>) -> Result<Recording> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(Error::NotFound(format!("{}", path.display())));
        }
        let reader = open_reader(&path)?;
        let version = schema::current_version(&reader)?;
        if !(schema::READABLE_FROM..=schema::SCHEMA_VERSION).contains(&version) {
            return Err(Error::Format(format!(
                "recording has schema version {version}, this Shepherd reads {} to {}{}",
                schema::READABLE_FROM,
                schema::SCHEMA_VERSION,
                if version < schema::READABLE_FROM {
                    "; open it writable once to migrate"
                } else {
                    ""
                }
            )));
        }
        Ok(Recording {
            inner: Arc::new(Shared {
                path,
                tx: None,
                thread: None,
                readers: Mutex::new(vec![reader]),
                next_exchange: AtomicI64::new(0),
                next_blob: AtomicI64::new(0),
                next_session: AtomicI64::new(0),
                version,
                error: Arc::new(Mutex::new(None)),
                _writer_lock: None,
            }),
        })
    }

    /// Path of the recording file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Queues `cmd` for the writer thread (read-only handles refuse).
    pub(crate) fn send(&self, cmd: Cmd) -> Result<()> {
        let tx = self.inner.tx.as_ref().ok_or(Error::ReadOnly)?;
        if let Some(e) = lock(&self.inner.error).clone() {
            return Err(Error::Writer(e));
        }
        tx.send(cmd)
            .map_err(|_| Error::Writer("writer thread has stopped".into()))
    }

    /// Starts a new session (one `shepherd record` run, one HAR import...). Returns immediately.
    pub fn begin_session(&self, label: &str) -> Result<SessionId> {
        self.begin_session_at(label, now_unix_us())
    }

    /// Like [`Recording::begin_session`] with an explicit start time (imports, merges).
    pub fn begin_session_at(&self, label: &str, started_unix_us: i64) -> Result<SessionId> {
        if self.inner.tx.is_none() {
            return Err(Error::ReadOnly);
        }
        let id = self.inner.next_session.fetch_add(1, Ordering::Relaxed);
        self.send(Cmd::Session {
            id,
            label: label.to_owned(),
            started_unix_us,
        })?;
        Ok(SessionId(id))
    }

    /// Starts recording an exchange: call when the request head has arrived. The id (and so the
    /// recording order) is fixed now; nothing is stored until [`ExchangeWriter::finish`].
    pub fn begin_exchange(
        &self,
        session: SessionId,
        request: RequestHead,
    ) -> Result<ExchangeWriter> {
        if self.inner.tx.is_none() {
            return Err(Error::ReadOnly);
        }
        let id = self.inner.next_exchange.fetch_add(1, Ordering::Relaxed);
        Ok(ExchangeWriter {
            rec: self.clone(),
            id,
            session: session.0,
            request,
            req_body: BodyAcc::default(),
            response: None,
            resp_body: BodyAcc::default(),
            websocket: false,
            error: None,
            finished: false,
        })
    }

    /// Records the protocol negotiated with an origin (`authority` = `host:port`, `alpn` = `h2`,
    /// `http/1.1`, or empty for plain HTTP). Later calls for the same origin overwrite.
    pub fn set_host_protocol(&self, session: SessionId, authority: &str, alpn: &str) -> Result<()> {
        self.send(Cmd::Host {
            session: session.0,
            authority: authority.to_owned(),
            alpn: alpn.to_owned(),
        })
    }

    /// Appends one batch of trace records (JSON Lines as uploaded by the runtime) for document
    /// `doc`. Batches are kept by `seq` and read back in `seq` order; a repeated `seq` is
    /// ignored (retried upload). The page URL is taken from the trace header line when the
    /// batch contains it. Each batch is committed in its own transaction.
    pub fn append_trace_batch(
        &self,
        session: SessionId,
        doc: &str,
        seq: u64,
        bytes: &[u8],
    ) -> Result<()> {
        let seq = i64::try_from(seq).map_err(|_| Error::Format("trace seq too large".into()))?;
        self.send(Cmd::Trace {
            session: session.0,
            doc: doc.to_owned(),
            seq,
            data: bytes.to_vec(),
        })
    }

    /// Schema version of the file.
    pub(crate) fn version(&self) -> u32 {
        self.inner.version
    }

    /// Waits until everything queued so far is committed; returns the writer's first error.
    /// A no-op for read-only handles.
    pub fn flush(&self) -> Result<()> {
        let Some(tx) = self.inner.tx.as_ref() else {
            return Ok(());
        };
        let (done_tx, done_rx) = sync_channel(1);
        tx.send(Cmd::Flush(done_tx))
            .map_err(|_| Error::Writer("writer thread has stopped".into()))?;
        match done_rx.recv() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::Writer(e)),
            Err(_) => Err(Error::Writer("writer thread has stopped".into())),
        }
    }

    pub(crate) fn reader(&self) -> Result<PooledReader<'_>> {
        let idle = lock(&self.inner.readers).pop();
        let conn = match idle {
            Some(c) => c,
            None => open_reader(&self.inner.path)?,
        };
        Ok(PooledReader {
            shared: &self.inner,
            conn: Some(conn),
        })
    }

    /// All sessions, oldest first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>> {
        let conn = self.reader()?;
        let mut stmt =
            conn.prepare_cached("SELECT id, label, started_unix_us FROM sessions ORDER BY id")?;
        let rows = stmt.query_map([], |r| {
            Ok(SessionInfo {
                id: SessionId(r.get(0)?),
                label: r.get(1)?,
                started_unix_us: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// All committed exchanges (heads only) in recording order; `session` filters.
    pub fn exchanges(&self, session: Option<SessionId>) -> Result<Vec<Exchange>> {
        let conn = self.reader()?;
        let sql = format!(
            "SELECT {EXCHANGE_COLUMNS} FROM exchanges WHERE (?1 IS NULL OR session = ?1) ORDER BY id"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([session.map(|s| s.0)])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(exchange_from_row(row)?);
        }
        Ok(out)
    }

    /// Number of committed exchanges.
    pub fn exchange_count(&self) -> Result<u64> {
        let n: i64 = self
            .reader()?
            .query_row("SELECT count(*) FROM exchanges", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// One committed exchange (heads only).
    pub fn exchange(&self, id: ExchangeId) -> Result<Exchange> {
        let conn = self.reader()?;
        let sql = format!("SELECT {EXCHANGE_COLUMNS} FROM exchanges WHERE id = ?1");
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([id.0])?;
        match rows.next()? {
            Some(row) => exchange_from_row(row),
            None => Err(Error::NotFound(format!("exchange {}", id.0))),
        }
    }

    /// Protocols negotiated per origin, per session.
    pub fn host_protocols(&self) -> Result<Vec<HostProtocol>> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(
            "SELECT session, authority, alpn FROM hosts ORDER BY session, authority",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(HostProtocol {
                session: SessionId(r.get(0)?),
                authority: r.get(1)?,
                alpn: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// All stored traces.
    pub fn traces(&self) -> Result<Vec<TraceInfo>> {
        let conn = self.reader()?;
        let mut stmt = conn.prepare_cached(
            "SELECT t.session, t.doc, t.page_url, count(b.seq), coalesce(sum(length(b.data)), 0)
             FROM traces t LEFT JOIN trace_batches b ON b.trace = t.id
             GROUP BY t.id ORDER BY t.id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(TraceInfo {
                session: SessionId(r.get(0)?),
                doc: r.get(1)?,
                page_url: r.get(2)?,
                batches: r.get::<_, i64>(3)? as u64,
                bytes: r.get::<_, i64>(4)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// Writes the trace of `doc` in `session` as JSON Lines (batches in `seq` order, each ending
    /// with a newline) to `out`, one batch in memory at a time.
    pub fn write_trace_jsonl(
        &self,
        session: SessionId,
        doc: &str,
        out: &mut dyn std::io::Write,
    ) -> Result<()> {
        let trace: i64 = self
            .reader()?
            .query_row(
                "SELECT id FROM traces WHERE session = ?1 AND doc = ?2",
                params![session.0, doc],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| Error::NotFound(format!("trace {doc} in session {}", session.0)))?;
        // Batches come in `seq` order. One that never arrived (an upload lost when the page
        // closed or the proxy stopped) leaves a hole no reader can bridge: the action open at
        // the hole has no end and what follows has no begin. The trace ends at the hole.
        let mut next: i64 = i64::MIN;
        let mut expected: Option<i64> = None;
        loop {
            let batch: Option<(i64, Vec<u8>)> = self
                .reader()?
                .query_row(
                    "SELECT seq, data FROM trace_batches WHERE trace = ?1 AND seq >= ?2 ORDER BY seq LIMIT 1",
                    params![trace, next],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let Some((seq, data)) = batch else { break };
            if let Some(missing) = expected
                && seq != missing
            {
                tracing::warn!(
                    doc,
                    missing,
                    "trace batch missing: the trace ends before it (later batches left out)"
                );
                break;
            }
            expected = seq.checked_add(1);
            out.write_all(&data)?;
            if !data.is_empty() && !data.ends_with(b"\n") {
                out.write_all(b"\n")?;
            }
            match seq.checked_add(1) {
                Some(n) => next = n,
                None => break,
            }
        }
        Ok(())
    }

    /// The trace of `doc` in `session` as JSON Lines, in memory.
    pub fn trace_jsonl(&self, session: SessionId, doc: &str) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_trace_jsonl(session, doc, &mut out)?;
        Ok(out)
    }

    /// Schema version of the open file.
    pub fn schema_version(&self) -> Result<u32> {
        schema::current_version(&*self.reader()?)
    }

    fn alloc_blob(&self) -> i64 {
        self.inner.next_blob.fetch_add(1, Ordering::Relaxed)
    }
}

/// SQLite page size of new recordings.
const PAGE_SIZE: i64 = 16384;

/// Idle read connections kept open per recording.
const MAX_IDLE_READERS: usize = 8;

/// Opens a read connection: read-write restricted by `query_only`, so that as the last
/// connection to close it may remove the `-wal`/`-shm` files (a SQLITE_OPEN_READ_ONLY
/// connection creates them but never deletes them). Falls back to a true read-only open for
/// read-only media.
fn open_reader(path: &Path) -> Result<Connection> {
    let conn = match Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => {
            c.pragma_update(None, "query_only", true)?;
            c
        }
        Err(_) => Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?,
    };
    configure(&conn)?;
    Ok(conn)
}

/// A read connection borrowed from the pool; returned on drop.
pub(crate) struct PooledReader<'a> {
    shared: &'a Shared,
    conn: Option<Connection>,
}

impl std::ops::Deref for PooledReader<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        // Only `drop` takes the connection out.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for PooledReader<'_> {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            let mut idle = lock(&self.shared.readers);
            if idle.len() < MAX_IDLE_READERS {
                idle.push(c);
            }
        }
    }
}

const EXCHANGE_COLUMNS: &str = "id, session, method, url, req_http_version, req_headers, \
     req_body_len, req_body_sha256, status, reason, resp_http_version, resp_headers, \
     resp_body_len, resp_body_sha256, started_unix_us, blocked_us, dns_us, connect_us, ssl_us, \
     send_us, wait_us, receive_us, websocket, error";

fn sha_from(v: Vec<u8>) -> Result<[u8; 32]> {
    v.try_into()
        .map_err(|_| Error::Format("stored body digest is not 32 bytes".into()))
}

fn exchange_from_row(r: &rusqlite::Row<'_>) -> Result<Exchange> {
    let req_headers: Vec<u8> = r.get(5)?;
    let status: Option<i64> = r.get(8)?;
    let response = match status {
        Some(status) => {
            let headers: Option<Vec<u8>> = r.get(11)?;
            Some(ResponseHead {
                status: u16::try_from(status)
                    .map_err(|_| Error::Format(format!("stored status {status}")))?,
                reason: r.get::<_, Option<String>>(9)?.unwrap_or_default(),
                http_version: r.get::<_, Option<String>>(10)?.unwrap_or_default(),
                headers: schema::decode_headers(headers.as_deref().unwrap_or_default())?,
            })
        }
        None => None,
    };
    Ok(Exchange {
        id: ExchangeId(r.get(0)?),
        session: SessionId(r.get(1)?),
        request: RequestHead {
            method: r.get(2)?,
            url: r.get(3)?,
            http_version: r.get(4)?,
            headers: schema::decode_headers(&req_headers)?,
        },
        request_body: BodyInfo {
            len: r.get::<_, i64>(6)? as u64,
            sha256: sha_from(r.get(7)?)?,
        },
        response,
        response_body: BodyInfo {
            len: r.get::<_, i64>(12)? as u64,
            sha256: sha_from(r.get(13)?)?,
        },
        timings: Timings {
            started_unix_us: r.get(14)?,
            blocked_us: r.get(15)?,
            dns_us: r.get(16)?,
            connect_us: r.get(17)?,
            ssl_us: r.get(18)?,
            send_us: r.get(19)?,
            wait_us: r.get(20)?,
            receive_us: r.get(21)?,
        },
        websocket: r.get::<_, i64>(22)? != 0,
        error: r.get(23)?,
    })
}

/// Accumulates one body: hashes everything, keeps small bodies in memory, streams big ones to
/// `body_chunks`.
#[derive(Default)]
struct BodyAcc {
    hasher: Sha256,
    len: u64,
    buf: Vec<u8>,
    blob: Option<i64>,
    next_seq: i64,
}

impl BodyAcc {
    fn push(&mut self, rec: &Recording, data: &[u8]) -> Result<()> {
        self.hasher.update(data);
        self.len += data.len() as u64;
        self.buf.extend_from_slice(data);
        if self.blob.is_none() && self.buf.len() <= INLINE_MAX {
            return Ok(());
        }
        let blob = *self.blob.get_or_insert_with(|| rec.alloc_blob());
        while self.buf.len() >= CHUNK_SIZE {
            let rest = self.buf.split_off(CHUNK_SIZE);
            let chunk = std::mem::replace(&mut self.buf, rest);
            rec.send(Cmd::Chunk {
                blob,
                seq: self.next_seq,
                data: chunk,
            })?;
            self.next_seq += 1;
        }
        Ok(())
    }

    fn finish(self, rec: &Recording) -> Result<StoredBody> {
        let sha256: [u8; 32] = self.hasher.finalize().into();
        match self.blob {
            None => Ok(StoredBody {
                len: self.len,
                sha256,
                inline: Some(self.buf),
                blob: None,
            }),
            Some(blob) => {
                if !self.buf.is_empty() {
                    rec.send(Cmd::Chunk {
                        blob,
                        seq: self.next_seq,
                        data: self.buf,
                    })?;
                }
                Ok(StoredBody {
                    len: self.len,
                    sha256,
                    inline: None,
                    blob: Some(blob),
                })
            }
        }
    }
}

/// Collects one exchange as it streams through the proxy. Feed body chunks as they pass (memory
/// stays bounded), then call [`ExchangeWriter::finish`]. Dropping it unfinished discards the
/// exchange (a cancelled request), including any chunks already written.
pub struct ExchangeWriter {
    rec: Recording,
    id: i64,
    session: i64,
    request: RequestHead,
    req_body: BodyAcc,
    response: Option<ResponseHead>,
    resp_body: BodyAcc,
    websocket: bool,
    error: Option<String>,
    finished: bool,
}

impl ExchangeWriter {
    /// The id this exchange will have once committed.
    pub fn id(&self) -> ExchangeId {
        ExchangeId(self.id)
    }

    /// Appends request body bytes.
    pub fn request_body(&mut self, chunk: &[u8]) -> Result<()> {
        self.req_body.push(&self.rec, chunk)
    }

    /// Sets the response head (status line and headers exactly as the origin sent them).
    pub fn response_head(&mut self, head: ResponseHead) {
        self.response = Some(head);
    }

    /// Appends response body bytes as received from the origin (before decoding or rewriting).
    pub fn response_body(&mut self, chunk: &[u8]) -> Result<()> {
        self.resp_body.push(&self.rec, chunk)
    }

    /// Marks the exchange as a WebSocket upgrade (only the handshake is stored).
    pub fn set_websocket(&mut self) {
        self.websocket = true;
    }

    /// Records why the exchange failed (stored together with whatever arrived).
    pub fn set_error(&mut self, error: impl Into<String>) {
        self.error = Some(error.into());
    }

    /// Queues the exchange for commit (its own transaction) and returns at once. Use
    /// [`Recording::flush`] to wait for it to be on disk.
    pub fn finish(mut self, timings: Timings) -> Result<ExchangeId> {
        self.finished = true;
        let rec = self.rec.clone();
        let req_body = std::mem::take(&mut self.req_body).finish(&rec)?;
        let resp_body = std::mem::take(&mut self.resp_body).finish(&rec)?;
        let row = ExchangeRow {
            id: self.id,
            session: self.session,
            request: std::mem::replace(
                &mut self.request,
                RequestHead {
                    method: String::new(),
                    url: String::new(),
                    http_version: String::new(),
                    headers: Vec::new(),
                },
            ),
            req_body,
            response: self.response.take(),
            resp_body,
            timings,
            websocket: self.websocket,
            error: self.error.take(),
        };
        rec.send(Cmd::Exchange(Box::new(row)))?;
        Ok(ExchangeId(self.id))
    }
}

impl Drop for ExchangeWriter {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for blob in [self.req_body.blob, self.resp_body.blob]
            .into_iter()
            .flatten()
        {
            let _ = self.rec.send(Cmd::DiscardBlob(blob));
        }
    }
}

fn writer_loop(conn: Connection, rx: Receiver<Cmd>, error: Arc<Mutex<Option<String>>>) {
    let mut in_tx = false;
    let mut tx_bytes = 0usize;
    let mut tx_items = 0usize;
    let fail = |e: &dyn std::fmt::Display| {
        let mut slot = lock(&error);
        if slot.is_none() {
            tracing::error!("recording writer: {e}");
            *slot = Some(e.to_string());
        }
    };
    loop {
        let cmd = match rx.try_recv() {
            Ok(c) => c,
            Err(TryRecvError::Empty) => {
                // Idle: do not keep chunk writes uncommitted while waiting.
                if in_tx {
                    if let Err(e) = conn.execute_batch("COMMIT") {
                        fail(&e);
                    }
                    in_tx = false;
                    tx_bytes = 0;
                    tx_items = 0;
                }
                match rx.recv() {
                    Ok(c) => c,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        if !in_tx {
            if let Err(e) = conn.execute_batch("BEGIN") {
                fail(&e);
                continue;
            }
            in_tx = true;
        }
        tx_items += 1;
        let result = match cmd {
            Cmd::Chunk { blob, seq, data } => {
                tx_bytes += data.len();
                conn.prepare_cached("INSERT INTO body_chunks (blob, seq, data) VALUES (?1, ?2, ?3)")
                    .and_then(|mut s| s.execute(params![blob, seq, data]))
                    .map(|_| ())
            }
            Cmd::DiscardBlob(blob) => conn
                .execute("DELETE FROM body_chunks WHERE blob = ?1", [blob])
                .map(|_| ()),
            Cmd::Session {
                id,
                label,
                started_unix_us,
            } => conn
                .execute(
                    "INSERT INTO sessions (id, label, started_unix_us) VALUES (?1, ?2, ?3)",
                    params![id, label, started_unix_us],
                )
                .map(|_| ()),
            Cmd::Exchange(row) => {
                tx_bytes += row.req_body.inline.as_ref().map_or(0, Vec::len)
                    + row.resp_body.inline.as_ref().map_or(0, Vec::len);
                insert_exchange(&conn, &row)
            }
            Cmd::Host {
                session,
                authority,
                alpn,
            } => conn
                .execute(
                    "INSERT INTO hosts (session, authority, alpn) VALUES (?1, ?2, ?3)
                     ON CONFLICT (session, authority) DO UPDATE SET alpn = excluded.alpn",
                    params![session, authority, alpn],
                )
                .map(|_| ()),
            Cmd::Trace {
                session,
                doc,
                seq,
                data,
            } => insert_trace_batch(&conn, session, &doc, seq, &data),
            Cmd::WsMessage {
                exchange,
                seq,
                from_client,
                opcode,
                at_us,
                data,
            } => {
                tx_bytes += data.len();
                conn.prepare_cached(
                    "INSERT OR IGNORE INTO ws_messages (exchange, seq, from_client, opcode, at_us, data)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .and_then(|mut st| {
                    st.execute(params![
                        exchange,
                        seq,
                        from_client as i64,
                        opcode as i64,
                        at_us,
                        data
                    ])
                })
                .map(|_| ())
            }
            Cmd::Flush(reply) => {
                let r = conn.execute_batch("COMMIT");
                in_tx = false;
                tx_bytes = 0;
                tx_items = 0;
                if let Err(e) = &r {
                    fail(e);
                }
                let status = match lock(&error).clone() {
                    Some(e) => Err(e),
                    None => Ok(()),
                };
                let _ = reply.send(status);
                continue;
            }
        };
        if let Err(e) = result {
            fail(&e);
        }
        if tx_items >= GROUP_MAX || tx_bytes >= CHUNK_TX_BYTES {
            if let Err(e) = conn.execute_batch("COMMIT") {
                fail(&e);
            }
            in_tx = false;
            tx_bytes = 0;
            tx_items = 0;
        }
    }
    if in_tx && let Err(e) = conn.execute_batch("COMMIT") {
        fail(&e);
    }
    // Fold the WAL back into the main file so a finished recording is one self-contained file.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    let _ = conn.close();
}

fn insert_exchange(conn: &Connection, row: &ExchangeRow) -> rusqlite::Result<()> {
    let resp = row.response.as_ref();
    let mut stmt = conn.prepare_cached(
        "INSERT INTO exchanges (id, session, method, url, req_http_version, req_headers,
            req_body_len, req_body_sha256, req_body_inline, req_body_blob,
            status, reason, resp_http_version, resp_headers,
            resp_body_len, resp_body_sha256, resp_body_inline, resp_body_blob,
            started_unix_us, blocked_us, dns_us, connect_us, ssl_us, send_us, wait_us, receive_us,
            websocket, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
    )?;
    stmt.execute(params![
        row.id,
        row.session,
        row.request.method,
        row.request.url,
        row.request.http_version,
        schema::encode_headers(&row.request.headers),
        row.req_body.len as i64,
        row.req_body.sha256.as_slice(),
        row.req_body.inline,
        row.req_body.blob,
        resp.map(|r| r.status as i64),
        resp.map(|r| r.reason.as_str()),
        resp.map(|r| r.http_version.as_str()),
        resp.map(|r| schema::encode_headers(&r.headers)),
        row.resp_body.len as i64,
        row.resp_body.sha256.as_slice(),
        row.resp_body.inline,
        row.resp_body.blob,
        row.timings.started_unix_us,
        row.timings.blocked_us,
        row.timings.dns_us,
        row.timings.connect_us,
        row.timings.ssl_us,
        row.timings.send_us,
        row.timings.wait_us,
        row.timings.receive_us,
        row.websocket as i64,
        row.error,
    ])?;
    Ok(())
}

fn page_url_from_batch(data: &[u8]) -> Option<String> {
    let first = data.split(|b| *b == b'\n').next()?;
    let v: serde_json::Value = serde_json::from_slice(first).ok()?;
    if v.get("format")?.as_str()? != "shepherd-trace" {
        return None;
    }
    v.get("page")?.as_str().map(str::to_owned)
}

fn insert_trace_batch(
    conn: &Connection,
    session: i64,
    doc: &str,
    seq: i64,
    data: &[u8],
) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO traces (session, doc) VALUES (?1, ?2)")?
        .execute(params![session, doc])?;
    let trace: i64 = conn
        .prepare_cached("SELECT id FROM traces WHERE session = ?1 AND doc = ?2")?
        .query_row(params![session, doc], |r| r.get(0))?;
    if let Some(page) = page_url_from_batch(data) {
        conn.prepare_cached("UPDATE traces SET page_url = ?2 WHERE id = ?1 AND page_url IS NULL")?
            .execute(params![trace, page])?;
    }
    conn.prepare_cached(
        "INSERT OR IGNORE INTO trace_batches (trace, seq, data) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![trace, seq, data])?;
    Ok(())
}
