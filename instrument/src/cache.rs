//! Instrumentation cache for JavaScript: bounded in-memory LRU plus an optional on-disk
//! directory. Key = sha256 over (sha256(bytes), pass version, mode, kind, charset, output
//! flags). Outputs never contain document-specific ids (the source name given to the pass is
//! derived from the content hash), so one entry serves every page that loads the same bytes.

use crate::jspass::{Flags, PassFn, real_pass};
use crate::mode::{Mode, ScriptKind};
use encoding_rs::{Encoding, UTF_8};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Key = [u8; 32];

/// A cached pass result: instrumented code, or the reason the original must be kept.
#[derive(Debug)]
enum Cached {
    Ok {
        code: Arc<str>,
        map: Option<Arc<str>>,
    },
    Failed(Arc<str>),
}

impl Cached {
    fn size(&self) -> usize {
        64 + match self {
            Cached::Ok { code, map } => code.len() + map.as_ref().map_or(0, |m| m.len()),
            Cached::Failed(r) => r.len(),
        }
    }
}

/// Result of instrumenting one JavaScript body.
#[derive(Debug, Clone)]
pub struct ScriptOutput {
    /// Instrumented code, or None: serve the original bytes unchanged.
    pub code: Option<Arc<str>>,
    /// Source map of `code` (JSON), when produced. Its `sources` name the content-derived
    /// `shepherd:<hash>.js`, not a URL (one entry serves every URL with these bytes).
    pub source_map: Option<Arc<str>>,
    /// With `source_map`: the id [`ScriptCache::source_map`] finds it under later (hex of the
    /// cache key).
    pub map_id: Option<Arc<str>>,
    /// Why the original is kept (JS error, repair mode, undecodable bytes).
    pub kept_reason: Option<Arc<str>>,
    /// Served from the cache (memory or disk).
    pub from_cache: bool,
}

impl ScriptOutput {
    fn kept(reason: impl Into<Arc<str>>, from_cache: bool) -> Self {
        ScriptOutput {
            code: None,
            source_map: None,
            map_id: None,
            kept_reason: Some(reason.into()),
            from_cache,
        }
    }

    /// The bytes to serve for an external script: UTF-8, with a UTF-8 BOM when the code is
    /// not pure ASCII (a BOM overrides both the `Content-Type` charset and `<script charset>`,
    /// so the browser decodes it right whatever headers the page had). None: serve the original.
    pub fn body_bytes(&self) -> Option<Vec<u8>> {
        let code = self.code.as_ref()?;
        let mut out = Vec::with_capacity(code.len() + 3);
        if !code.is_ascii() {
            out.extend_from_slice(b"\xEF\xBB\xBF");
        }
        out.extend_from_slice(code.as_bytes());
        Some(out)
    }
}

/// Cache counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    /// Served from memory.
    pub memory_hits: u64,
    /// Served from disk.
    pub disk_hits: u64,
    /// Computed by the pass.
    pub misses: u64,
    /// Pass failures (original kept), computed or cached.
    pub failures: u64,
    /// Bytes held in memory.
    pub memory_bytes: u64,
}

struct Lru {
    map: HashMap<Key, (Arc<Cached>, u64)>,
    order: BTreeMap<u64, Key>,
    tick: u64,
    bytes: usize,
    max_bytes: usize,
}

impl Lru {
    fn get(&mut self, k: &Key) -> Option<Arc<Cached>> {
        let (v, t) = self.map.get_mut(k)?;
        self.order.remove(t);
        self.tick += 1;
        *t = self.tick;
        self.order.insert(self.tick, *k);
        Some(v.clone())
    }

    fn put(&mut self, k: Key, v: Arc<Cached>) {
        let size = v.size();
        if size > self.max_bytes {
            return;
        }
        if let Some((old, t)) = self.map.remove(&k) {
            self.order.remove(&t);
            self.bytes -= old.size();
        }
        while self.bytes + size > self.max_bytes {
            let Some((_, victim)) = self.order.pop_first() else {
                break;
            };
            if let Some((old, _)) = self.map.remove(&victim) {
                self.bytes -= old.size();
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, k);
        self.map.insert(k, (v, self.tick));
        self.bytes += size;
    }
}

/// The JavaScript instrumentation cache and entry point for whole scripts and snippets.
/// Shared by all connections (`Send + Sync`); callers on async runtimes should call it from a
/// blocking-capable thread since a miss runs the pass.
pub struct ScriptCache {
    mode: Mode,
    pass: PassFn,
    lru: Mutex<Lru>,
    dir: Option<PathBuf>,
    memory_hits: AtomicU64,
    disk_hits: AtomicU64,
    misses: AtomicU64,
    failures: AtomicU64,
}

impl std::fmt::Debug for ScriptCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptCache")
            .field("mode", &self.mode)
            .field("dir", &self.dir)
            .finish()
    }
}

impl ScriptCache {
    /// A cache for `mode` holding at most `max_memory_bytes` in memory, and persisting entries
    /// under `dir` when given (created if missing).
    pub fn new(
        mode: Mode,
        max_memory_bytes: usize,
        dir: Option<PathBuf>,
    ) -> Result<Self, crate::Error> {
        Self::with_pass(mode, max_memory_bytes, dir, real_pass)
    }

    /// Like [`new`](Self::new) with another JavaScript pass (tests, benchmarks). Entries made
    /// by different passes must not share a directory.
    pub fn with_pass(
        mode: Mode,
        max_memory_bytes: usize,
        dir: Option<PathBuf>,
        pass: PassFn,
    ) -> Result<Self, crate::Error> {
        if let Some(d) = &dir {
            std::fs::create_dir_all(d)?;
        }
        Ok(ScriptCache {
            mode,
            pass,
            lru: Mutex::new(Lru {
                map: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
                bytes: 0,
                max_bytes: max_memory_bytes,
            }),
            dir,
            memory_hits: AtomicU64::new(0),
            disk_hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        })
    }

    /// The mode this cache instruments for.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Current counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            memory_hits: self.memory_hits.load(Ordering::Relaxed),
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            memory_bytes: self.lock().bytes as u64,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.lru.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Instruments a whole external script body (`Script` or `Module`). `charset` is the
    /// `Content-Type` charset label (or the document's encoding for classic scripts); decoding
    /// follows the spec: BOM, then `charset`, then UTF-8. Modules are always UTF-8.
    pub fn instrument_script(
        &self,
        bytes: &[u8],
        kind: ScriptKind,
        charset: Option<&str>,
    ) -> ScriptOutput {
        if !self.mode.rewrites_js() {
            return ScriptOutput::kept("repair mode: JavaScript is not rewritten", false);
        }
        let label = if kind == ScriptKind::Module {
            None
        } else {
            charset
        };
        let fallback = label
            .and_then(|l| Encoding::for_label(l.as_bytes()))
            .unwrap_or(UTF_8);
        let flags = Flags {
            ascii_only: false,
            inline_script: false,
            source_map: true,
        };
        // The key covers the raw bytes (BOM included) and the fallback encoding, so a hit
        // skips decoding altogether.
        self.run(bytes, fallback.name(), kind, flags, || {
            let (text, enc, had_errors) = fallback.decode(bytes);
            if had_errors {
                Err(format!("bytes are not valid {}", enc.name()))
            } else {
                Ok(text)
            }
        })
    }

    /// Instruments one piece of dynamic code (eval, `new Function` body, string timer,
    /// handler set at run time) for the instrument endpoint.
    pub fn instrument_snippet(&self, src: &str, kind: ScriptKind) -> ScriptOutput {
        if !self.mode.rewrites_js() {
            return ScriptOutput::kept("repair mode: JavaScript is not rewritten", false);
        }
        let flags = Flags {
            ascii_only: false,
            inline_script: false,
            source_map: false,
        };
        self.run(src.as_bytes(), "utf-8", kind, flags, || {
            Ok(Cow::Borrowed(src))
        })
    }

    /// Inline code of an HTML document.
    pub(crate) fn instrument_inline(
        &self,
        src: &str,
        kind: ScriptKind,
        flags: Flags,
    ) -> ScriptOutput {
        self.run(src.as_bytes(), "utf-8", kind, flags, || {
            Ok(Cow::Borrowed(src))
        })
    }

    fn key(&self, bytes: &[u8], charset: &str, kind: ScriptKind, flags: Flags) -> Key {
        let content = Sha256::digest(bytes);
        let mut h = Sha256::new();
        h.update(b"shepherd-instrument-cache\0");
        h.update(shepherd_instrument_js::PASS_VERSION.to_le_bytes());
        h.update(self.mode.cache_name().as_bytes());
        h.update(b"\0");
        h.update(kind.as_str().as_bytes());
        h.update(b"\0");
        h.update(charset.to_ascii_lowercase().as_bytes());
        h.update([0, flags.key_byte()]);
        h.update(content);
        h.finalize().into()
    }

    /// Looks `bytes` up; on a miss, `source` gives the text to instrument (or why it cannot be).
    fn run<'s>(
        &self,
        bytes: &[u8],
        charset: &str,
        kind: ScriptKind,
        flags: Flags,
        source: impl FnOnce() -> Result<Cow<'s, str>, String>,
    ) -> ScriptOutput {
        let key = self.key(bytes, charset, kind, flags);
        if let Some(hit) = self.lock().get(&key) {
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return self.output(&key, &hit, true);
        }
        if let Some(hit) = self.dir.as_deref().and_then(|d| read_disk(d, &key)) {
            self.disk_hits.fetch_add(1, Ordering::Relaxed);
            let hit = Arc::new(hit);
            self.lock().put(key, hit.clone());
            return self.output(&key, &hit, true);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        // Content-derived name: never document-specific, so the entry is shareable.
        let name = format!("shepherd:{}.js", &hex::encode(&key[..8]));
        let entry = match source().and_then(|src| (self.pass)(&src, kind, flags, &name)) {
            Ok((code, map)) => Cached::Ok {
                code: code.into(),
                map: map.map(Into::into),
            },
            Err(e) => Cached::Failed(e.into()),
        };
        if let Some(d) = &self.dir
            && let Err(e) = write_disk(d, &key, &entry)
        {
            tracing::warn!(error = %e, "instrumentation cache: cannot write entry");
        }
        let entry = Arc::new(entry);
        self.lock().put(key, entry.clone());
        self.output(&key, &entry, false)
    }

    /// The source map stored with the entry `map_id` ([`ScriptOutput::map_id`]), from memory
    /// or the cache directory; `None` when unknown or evicted (without a directory, maps live
    /// as long as their entry stays in memory). Does not count as a hit.
    pub fn source_map(&self, map_id: &str) -> Option<Arc<str>> {
        let bytes = hex::decode(map_id).ok()?;
        let key: Key = bytes.try_into().ok()?;
        let from_memory = self.lock().map.get(&key).map(|(c, _)| c.clone());
        let entry = match from_memory {
            Some(c) => c,
            None => Arc::new(read_disk(self.dir.as_deref()?, &key)?),
        };
        match &*entry {
            Cached::Ok { map, .. } => map.clone(),
            Cached::Failed(_) => None,
        }
    }

    fn output(&self, key: &Key, c: &Cached, from_cache: bool) -> ScriptOutput {
        match c {
            Cached::Ok { code, map } => ScriptOutput {
                code: Some(code.clone()),
                map_id: map.as_ref().map(|_| hex::encode(key).into()),
                source_map: map.clone(),
                kept_reason: None,
                from_cache,
            },
            Cached::Failed(r) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                ScriptOutput::kept(r.clone(), from_cache)
            }
        }
    }
}

fn entry_path(dir: &Path, key: &Key, ext: &str) -> PathBuf {
    let h = hex::encode(key);
    dir.join(&h[..2]).join(format!("{h}.{ext}"))
}

fn read_disk(dir: &Path, key: &Key) -> Option<Cached> {
    if let Ok(code) = std::fs::read_to_string(entry_path(dir, key, "js")) {
        let map = std::fs::read_to_string(entry_path(dir, key, "map")).ok();
        return Some(Cached::Ok {
            code: code.into(),
            map: map.map(Into::into),
        });
    }
    let reason = std::fs::read_to_string(entry_path(dir, key, "fail")).ok()?;
    Some(Cached::Failed(reason.into()))
}

/// Writes through a temporary file and a rename so readers never see half an entry. The map is
/// written before the code, since the code file is what marks an entry present.
fn write_disk(dir: &Path, key: &Key, entry: &Cached) -> std::io::Result<()> {
    let put = |ext: &str, data: &str| -> std::io::Result<()> {
        let path = entry_path(dir, key, ext);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let tmp = path.with_extension(format!("{ext}.tmp{}", std::process::id()));
        std::fs::write(&tmp, data)?;
        std::fs::rename(&tmp, &path)
    };
    match entry {
        Cached::Ok { code, map } => {
            if let Some(m) = map {
                put("map", m)?;
            }
            put("js", code)
        }
        Cached::Failed(r) => put("fail", r),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_least_recent() {
        let mut l = Lru {
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            bytes: 0,
            max_bytes: 3 * 74,
        };
        let e = || Arc::new(Cached::Failed("0123456789".into()));
        l.put([1; 32], e());
        l.put([2; 32], e());
        l.put([3; 32], e());
        assert!(l.get(&[1; 32]).is_some());
        l.put([4; 32], e());
        assert!(l.get(&[2; 32]).is_none());
        assert!(
            l.get(&[1; 32]).is_some() && l.get(&[3; 32]).is_some() && l.get(&[4; 32]).is_some()
        );
        assert_eq!(l.bytes, 3 * 74);
    }
}
