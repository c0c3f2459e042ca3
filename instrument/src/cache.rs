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
    Ok(Arc<str>),
    Failed(Arc<str>),
    /// What a source map is made from, kept beside an external script's entry: maps are built
    /// only when devtools asks for one, so the page never waits for them (a map costs about a
    /// third of the pass on real libraries).
    Source {
        kind: ScriptKind,
        text: Arc<str>,
        map: Option<Arc<str>>,
    },
}

impl Cached {
    fn size(&self) -> usize {
        64 + match self {
            Cached::Ok(code) => code.len(),
            Cached::Failed(r) => r.len(),
            Cached::Source { text, map, .. } => text.len() + map.as_ref().map_or(0, |m| m.len()),
        }
    }
}

/// Result of instrumenting one JavaScript body.
#[derive(Debug, Clone)]
pub struct ScriptOutput {
    /// Instrumented code, or None: serve the original bytes unchanged.
    pub code: Option<Arc<str>>,
    /// For instrumented external scripts: the id [`ScriptCache::source_map`] builds the
    /// script's source map under (hex of the cache key).
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
    /// Sources of external scripts (and their maps once built), by cache key.
    sources: Mutex<Lru>,
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
    ) -> Result<Self, crate::error::Error> {
        Self::with_pass(mode, max_memory_bytes, dir, real_pass)
    }

    /// Like [`new`](Self::new) with another JavaScript pass (tests, benchmarks). Entries made
    /// by different passes must not share a directory.
    pub fn with_pass(
        mode: Mode,
        max_memory_bytes: usize,
        dir: Option<PathBuf>,
        pass: PassFn,
    ) -> Result<Self, crate::error::Error> {
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
            sources: Mutex::new(Lru {
                map: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
                bytes: 0,
                max_bytes: max_memory_bytes / 2,
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
            source_map: false,
        };
        // The key covers the raw bytes (BOM included) and the fallback encoding, so a hit
        // skips decoding altogether.
        self.run(bytes, fallback.name(), kind, flags, true, || {
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
        self.run(src.as_bytes(), "utf-8", kind, flags, false, || {
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
        self.run(src.as_bytes(), "utf-8", kind, flags, false, || {
            Ok(Cow::Borrowed(src))
        })
    }

    fn key(&self, bytes: &[u8], charset: &str, kind: ScriptKind, flags: Flags) -> Key {
        let content = Sha256::digest(bytes);
        let mut h = Sha256::new();
        h.update(b"shepherd-instrument-cache\0");
        h.update(shepherd_instrument_js::PASS_VERSION.to_le_bytes());
        h.update(crate::mode::cache_name(self.mode).as_bytes());
        h.update(b"\0");
        h.update(kind.as_str().as_bytes());
        h.update(b"\0");
        h.update(charset.to_ascii_lowercase().as_bytes());
        h.update([0, flags.key_byte()]);
        h.update(content);
        h.finalize().into()
    }

    /// Looks `bytes` up; on a miss, `source` gives the text to instrument (or why it cannot be).
    /// `mappable`: keep the source so [`source_map`](Self::source_map) can build a map later.
    fn run<'s>(
        &self,
        bytes: &[u8],
        charset: &str,
        kind: ScriptKind,
        flags: Flags,
        mappable: bool,
        source: impl FnOnce() -> Result<Cow<'s, str>, String>,
    ) -> ScriptOutput {
        let key = self.key(bytes, charset, kind, flags);
        if let Some(hit) = self.lock().get(&key) {
            self.memory_hits.fetch_add(1, Ordering::Relaxed);
            return self.output(&key, &hit, true, mappable);
        }
        if let Some(hit) = self.dir.as_deref().and_then(|d| read_disk(d, &key)) {
            self.disk_hits.fetch_add(1, Ordering::Relaxed);
            let hit = Arc::new(hit);
            self.lock().put(key, hit.clone());
            return self.output(&key, &hit, true, mappable);
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let entry = match source().and_then(|src| {
            let (code, _) = (self.pass)(&src, kind, flags, &map_name(&key))?;
            if mappable {
                self.keep_source(&key, kind, &src);
            }
            Ok(code)
        }) {
            Ok(code) => Cached::Ok(code.into()),
            Err(e) => Cached::Failed(e.into()),
        };
        if let Some(d) = &self.dir
            && let Err(e) = write_disk(d, &key, &entry)
        {
            tracing::warn!(error = %e, "instrumentation cache: cannot write entry");
        }
        let entry = Arc::new(entry);
        self.lock().put(key, entry.clone());
        self.output(&key, &entry, false, mappable)
    }

    fn keep_source(&self, key: &Key, kind: ScriptKind, src: &str) {
        let text: Arc<str> = src.into();
        if let Some(d) = &self.dir
            && let Err(e) = write_source(d, key, kind, &text)
        {
            tracing::warn!(error = %e, "instrumentation cache: cannot keep a script source");
        }
        let entry = Cached::Source {
            kind,
            text,
            map: None,
        };
        self.sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(*key, Arc::new(entry));
    }

    /// The source map of the external script whose [`ScriptOutput::map_id`] is `map_id`, built
    /// on first request by running the pass again with a map (the pass is deterministic, so
    /// the map describes the code that was served) and kept in memory and the cache
    /// directory. Its `sources` name the content-derived `shepherd:<hash>.js`, not a URL (one
    /// entry serves every URL with these bytes). `None` when the id is unknown or its source
    /// was evicted (without a directory, sources live in memory only). Does not count as a hit.
    pub fn source_map(&self, map_id: &str) -> Option<Arc<str>> {
        let bytes = hex::decode(map_id).ok()?;
        let key: Key = bytes.try_into().ok()?;
        let kept = self
            .sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key);
        let kept = match kept {
            Some(k) => k,
            None => Arc::new(read_source(self.dir.as_deref()?, &key)?),
        };
        let Cached::Source { kind, text, map } = &*kept else {
            return None;
        };
        if let Some(m) = map {
            return Some(m.clone());
        }
        let flags = Flags {
            ascii_only: false,
            inline_script: false,
            source_map: true,
        };
        let (_, map) = (self.pass)(text, *kind, flags, &map_name(&key)).ok()?;
        let map: Arc<str> = map?.into();
        if let Some(d) = &self.dir {
            let _ = put_file(d, &key, "map", &map);
        }
        let entry = Cached::Source {
            kind: *kind,
            text: text.clone(),
            map: Some(map.clone()),
        };
        self.sources
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(key, Arc::new(entry));
        Some(map)
    }

    fn output(&self, key: &Key, c: &Cached, from_cache: bool, mappable: bool) -> ScriptOutput {
        match c {
            Cached::Ok(code) => ScriptOutput {
                code: Some(code.clone()),
                map_id: mappable.then(|| hex::encode(key).into()),
                kept_reason: None,
                from_cache,
            },
            Cached::Failed(r) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                ScriptOutput::kept(r.clone(), from_cache)
            }
            // Sources live in their own map, never under an output key.
            Cached::Source { .. } => ScriptOutput::kept("no output for this key", from_cache),
        }
    }
}

/// Content-derived name of a script in its source map: never document-specific, so the entry
/// is shareable (the proxy renames it to the script's URL when it serves the map).
fn map_name(key: &Key) -> String {
    format!("shepherd:{}.js", &hex::encode(&key[..8]))
}

fn entry_path(dir: &Path, key: &Key, ext: &str) -> PathBuf {
    let h = hex::encode(key);
    dir.join(&h[..2]).join(format!("{h}.{ext}"))
}

fn read_disk(dir: &Path, key: &Key) -> Option<Cached> {
    if let Ok(code) = std::fs::read_to_string(entry_path(dir, key, "js")) {
        return Some(Cached::Ok(code.into()));
    }
    let reason = std::fs::read_to_string(entry_path(dir, key, "fail")).ok()?;
    Some(Cached::Failed(reason.into()))
}

/// Writes through a temporary file and a rename so readers never see half a file.
fn put_file(dir: &Path, key: &Key, ext: &str, data: &str) -> std::io::Result<()> {
    let path = entry_path(dir, key, ext);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = path.with_extension(format!("{ext}.tmp{}", std::process::id()));
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, &path)
}

fn write_disk(dir: &Path, key: &Key, entry: &Cached) -> std::io::Result<()> {
    match entry {
        Cached::Ok(code) => put_file(dir, key, "js", code),
        Cached::Failed(r) => put_file(dir, key, "fail", r),
        Cached::Source { .. } => Ok(()),
    }
}

/// A kept source on disk: its kind (`script`/`module`), a newline, the text.
fn write_source(dir: &Path, key: &Key, kind: ScriptKind, text: &str) -> std::io::Result<()> {
    put_file(dir, key, "src", &format!("{}\n{text}", kind.as_str()))
}

fn read_source(dir: &Path, key: &Key) -> Option<Cached> {
    let all = std::fs::read_to_string(entry_path(dir, key, "src")).ok()?;
    let (kind, text) = all.split_once('\n')?;
    let kind = [ScriptKind::Script, ScriptKind::Module]
        .into_iter()
        .find(|k| k.as_str() == kind)?;
    let map = std::fs::read_to_string(entry_path(dir, key, "map")).ok();
    Some(Cached::Source {
        kind,
        text: text.into(),
        map: map.map(Into::into),
    })
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

    /// Maps are built on request from the kept source, describe the code that was served, and
    /// survive a restart through the cache directory; snippets get none.
    #[test]
    fn source_maps_are_built_on_request() {
        let dir = tempfile::tempdir().unwrap();
        let src = b"var greeting = 'hi';\nfunction hello() { return greeting; }\n";
        let cache = ScriptCache::new(Mode::Record, 1 << 20, Some(dir.path().into())).unwrap();
        let out = cache.instrument_script(src, ScriptKind::Script, None);
        let code = out.code.clone().unwrap();
        let id = out.map_id.clone().unwrap();
        let map = cache.source_map(&id).unwrap();
        let json: serde_json::Value = serde_json::from_str(&map).unwrap();
        assert_eq!(json["sources"][0], format!("shepherd:{}.js", &id[..16]));
        assert!(!json["mappings"].as_str().unwrap().is_empty());
        // The same pass with a map emits the same code.
        let again = real_pass(
            std::str::from_utf8(src).unwrap(),
            ScriptKind::Script,
            Flags {
                ascii_only: false,
                inline_script: false,
                source_map: true,
            },
            "x",
        )
        .unwrap();
        assert_eq!(again.0, &*code);
        // A new cache on the same directory (a restarted proxy) still builds it.
        let restarted = ScriptCache::new(Mode::Record, 1 << 20, Some(dir.path().into())).unwrap();
        let hit = restarted.instrument_script(src, ScriptKind::Script, None);
        assert!(hit.from_cache);
        assert_eq!(hit.map_id.as_deref(), Some(&*id));
        assert_eq!(restarted.source_map(&id).as_deref(), Some(&*map));
        assert!(restarted.source_map("00").is_none());
        let snippet = cache.instrument_snippet("x = 1", ScriptKind::Script);
        assert!(snippet.code.is_some() && snippet.map_id.is_none());
    }
}
