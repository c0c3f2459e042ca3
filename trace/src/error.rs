//! Errors of the trace readers. Every format error names where it happened so a broken upload
//! or a truncated file can be found with `head -c`/`sed -n`.

use std::fmt;

/// Why a trace could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// A JSONL trace violates `docs/trace-format.md`.
    Jsonl {
        /// 1-based line number.
        line: u64,
        /// Byte offset from the start of the input of the offending token.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// An `ER_actionlog` file is malformed.
    Er {
        /// Byte offset from the start of the file of the offending field.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// The input could not be read at all.
    Io(std::io::Error),
}

impl ReadError {
    /// Byte offset of the problem, when it is a format error.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReadError::Jsonl { offset, .. } | ReadError::Er { offset, .. } => Some(*offset),
            ReadError::Io(_) => None,
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Jsonl {
                line,
                offset,
                message,
            } => write!(f, "trace line {line} (byte {offset}): {message}"),
            ReadError::Er { offset, message } => {
                write!(f, "ER_actionlog byte {offset}: {message}")
            }
            ReadError::Io(e) => write!(f, "reading the trace: {e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        ReadError::Io(e)
    }
}
