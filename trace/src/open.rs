//! Loading a trace file whatever its format: the JSONL header is sniffed, anything else is
//! taken for an `ER_actionlog` (which has no magic number).

use crate::er::{self, looks_like_jsonl};
use crate::error::ReadError;
use crate::jsonl::{Source, even_cuts, parts_for, read_jsonl, read_parts};
use crate::model::Trace;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// How much of the input the format is sniffed from (and the sequential reader's buffer).
const HEAD: usize = 1 << 18;

/// The file formats this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Our JSONL trace (`docs/trace-format.md`).
    Jsonl,
    /// EventRacer's binary `ER_actionlog`.
    ErActionlog,
}

impl Format {
    /// Name used in messages and JSON output.
    pub fn name(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::ErActionlog => "er_actionlog",
        }
    }
}

/// A trace and what is known about where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The trace.
    pub trace: Trace,
    /// The format it was read from.
    pub format: Format,
    /// For `ER_actionlog` input, the original id of each (dense) action.
    pub original_ids: Option<Vec<i64>>,
    /// Things the reader tolerated.
    pub warnings: Vec<String>,
}

/// Reads a trace from `input`, sniffing its format from the first buffered bytes.
pub fn load_reader(input: impl Read) -> Result<Loaded, ReadError> {
    load_reader_sized(input, 0)
}

/// [`load_reader`] for an input of about `size` bytes: an `ER_actionlog` is read whole into a
/// buffer of that size (grown only if the input is longer), not one doubled as it fills,
/// which held one and a half times the file at its peak and copied it twice over.
fn load_reader_sized(input: impl Read, size: u64) -> Result<Loaded, ReadError> {
    let mut r = BufReader::with_capacity(HEAD, input);
    if looks_like_jsonl(r.fill_buf()?) {
        return Ok(jsonl(read_jsonl(r)?));
    }
    let mut bytes = Vec::new();
    // Only a hint: a size the allocator refuses leaves the buffer to grow as it fills.
    let _ = bytes.try_reserve_exact(usize::try_from(size).unwrap_or(0));
    r.read_to_end(&mut bytes)?;
    er_loaded(&bytes)
}

/// Bytes of an `ER_actionlog` file read between progress reports.
const ER_CHUNK: u64 = 1 << 22;

/// Reads a whole `ER_actionlog` file into a buffer of its size, a chunk at a time for the
/// progress reports. The file is read straight into the buffer: through [`Counting`] the
/// buffer was zeroed first, a pass over the whole file for nothing.
fn read_er_file(
    file: &std::fs::File,
    len: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Loaded, ReadError> {
    let mut bytes = Vec::new();
    // Only a hint: a size the allocator refuses leaves the buffer to grow as it fills.
    let _ = bytes.try_reserve_exact(usize::try_from(len).unwrap_or(0));
    loop {
        let n = file.take(ER_CHUNK).read_to_end(&mut bytes)?;
        progress(bytes.len() as u64, len);
        if n == 0 {
            break;
        }
    }
    er_loaded(&bytes)
}

fn er_loaded(bytes: &[u8]) -> Result<Loaded, ReadError> {
    let imp = er::read_er(bytes)?;
    Ok(Loaded {
        trace: imp.trace,
        format: Format::ErActionlog,
        original_ids: Some(imp.original_ids),
        warnings: imp.warnings,
    })
}

/// Reads the trace file at `path` (JSONL or `ER_actionlog`).
pub fn load_path(path: &Path) -> Result<Loaded, ReadError> {
    load_path_with_progress(path, &mut |_, _| {})
}

/// [`load_path`], reporting `(bytes read, file size)` to `progress` now and then (on the
/// calling thread). A JSONL file of several MB is parsed in parts on up to four threads
/// ([`read_jsonl_parts`](crate::read_jsonl_parts)); the trace and any error are the ones
/// [`read_jsonl`] gives.
pub fn load_path_with_progress(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Loaded, ReadError> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    // Only a regular file can be read at several offsets at once (not a pipe).
    #[cfg(unix)]
    if meta.is_file() {
        if is_jsonl(&file, meta.len())? {
            return read_jsonl_in_parts(&file, meta.len(), progress);
        }
        return read_er_file(&file, meta.len(), progress);
    }
    load_reader_sized(
        Counting {
            inner: file,
            read: 0,
            total: meta.len(),
            progress,
        },
        meta.len(),
    )
}

/// [`load_reader`] for a trace held in memory (a recording's), reporting `(bytes read,
/// total)` to `progress`. A large JSONL trace is parsed in parts on several threads, as by
/// [`load_path_with_progress`].
pub fn load_bytes(bytes: &[u8], progress: &mut dyn FnMut(u64, u64)) -> Result<Loaded, ReadError> {
    let len = bytes.len() as u64;
    if is_jsonl(bytes, len)? {
        return read_jsonl_in_parts(bytes, len, progress);
    }
    // An `ER_actionlog` is read in place.
    progress(len, len);
    er_loaded(bytes)
}

fn read_jsonl_in_parts<S: Source + ?Sized>(
    src: &S,
    len: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Loaded, ReadError> {
    let cuts = even_cuts(len, parts_for(len));
    Ok(jsonl(read_parts(src, len, &cuts, progress)?))
}

/// Sniffs the format from the same prefix [`load_reader`] looks at.
fn is_jsonl<S: Source + ?Sized>(src: &S, len: u64) -> std::io::Result<bool> {
    let mut head = vec![0u8; usize::try_from(len).map_or(HEAD, |l| l.min(HEAD))];
    let mut n = 0;
    while n < head.len() {
        let got = src.read_at(&mut head[n..], n as u64)?;
        if got == 0 {
            break;
        }
        n += got;
    }
    Ok(looks_like_jsonl(&head[..n]))
}

fn jsonl(trace: Trace) -> Loaded {
    Loaded {
        trace,
        format: Format::Jsonl,
        original_ids: None,
        warnings: Vec::new(),
    }
}

/// A reader that reports `(bytes read, total)` as it goes.
struct Counting<'a, R> {
    inner: R,
    read: u64,
    total: u64,
    progress: &'a mut dyn FnMut(u64, u64),
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        (self.progress)(self.read, self.total);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ActionType, TraceBuilder, to_jsonl_bytes};

    #[test]
    fn sniffs_both_formats() {
        let mut b = TraceBuilder::new();
        b.begin(ActionType::Timer, "timer", "t");
        b.write("Global.x", None);
        let t = b.finish();
        let j = load_reader(&to_jsonl_bytes(&t)[..]).unwrap();
        assert_eq!(j.format, Format::Jsonl);
        assert_eq!(j.trace, t);
        let e = load_reader(&er::to_er_bytes(&t)[..]).unwrap();
        assert_eq!(e.format, Format::ErActionlog);
        assert_eq!(e.original_ids, Some(vec![0]));
        assert_eq!(e.trace.actions.len(), 1);
        // Leading blank lines and a BOM are still JSONL.
        let mut bom = b"\xEF\xBB\xBF\n".to_vec();
        bom.extend_from_slice(&to_jsonl_bytes(&t));
        assert!(looks_like_jsonl(&bom));
        assert!(load_reader(&b""[..]).is_err());
    }
}
