//! Loading a trace file whatever its format: the JSONL header is sniffed, anything else is
//! taken for an `ER_actionlog` (which has no magic number).

use crate::er::{self, looks_like_jsonl};
use crate::error::ReadError;
use crate::jsonl::read_jsonl;
use crate::model::Trace;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

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
    let mut r = BufReader::with_capacity(1 << 18, input);
    let jsonl = looks_like_jsonl(r.fill_buf()?);
    if jsonl {
        return Ok(Loaded {
            trace: read_jsonl(r)?,
            format: Format::Jsonl,
            original_ids: None,
            warnings: Vec::new(),
        });
    }
    let mut bytes = Vec::new();
    r.read_to_end(&mut bytes)?;
    let imp = er::read_er(&bytes)?;
    Ok(Loaded {
        trace: imp.trace,
        format: Format::ErActionlog,
        original_ids: Some(imp.original_ids),
        warnings: imp.warnings,
    })
}

/// Reads the trace file at `path` (JSONL or `ER_actionlog`).
pub fn load_path(path: &Path) -> Result<Loaded, ReadError> {
    load_reader(std::fs::File::open(path)?)
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
