//! Source positions of accesses (a contract, documented in `docs/runtime-api.md`): every access
//! call gets a trailing number
//! `p = K·2^35 + line·2^19 + col` naming the script (`K`, 18 bits of sha256 of the original
//! text) and the 1-based line and UTF-16 column of the access in the original source.

use sha2::{Digest, Sha256};
use swc_core::common::{SourceFile, Span, sync::Lrc};

/// Largest line number that fits (longer files clamp).
const MAX_LINE: u64 = (1 << 16) - 1;
/// Largest column that fits (longer lines clamp).
const MAX_COL: u64 = (1 << 19) - 1;

/// Bytes per block of the UTF-16 prefix table.
const BLOCK: usize = 256;

/// Line index of one source file: line starts computed once, looked up by binary search.
/// Columns cost O(1) in ASCII files and at most two scans of [`BLOCK`] bytes otherwise (a
/// minified library is a few very long lines: scanning from the line start per access would
/// be quadratic).
pub(crate) struct Positions {
    key: u32,
    /// `BytePos` of the first byte of the file in its `SourceMap`.
    base: u32,
    /// Byte offset of the start of every line (the first is 0).
    starts: Vec<u32>,
    /// Non-ASCII files only: UTF-16 code units before byte `i * BLOCK`.
    utf16_before: Vec<u32>,
    file: Lrc<SourceFile>,
}

/// UTF-16 code units of the UTF-8 bytes `b` (continuation bytes count 0, 4-byte leaders 2).
fn utf16_len(b: &[u8]) -> u32 {
    // Eight bytes at a time: the prefix table runs over every byte of a non-ASCII source.
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const C0: u64 = 0xC0C0_C0C0_C0C0_C0C0;
    const F0: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let mut words = b.chunks_exact(8);
    let mut units = 0;
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let w = u64::from_le_bytes(a);
        // Continuation bytes are 10xxxxxx, 4-byte leaders 11110xxx or above.
        let continuation = zero_bytes((w & C0) ^ HIGH);
        let leaders = zero_bytes((w & F0) ^ F0);
        units += 8 - continuation + leaders;
    }
    units
        + words
            .remainder()
            .iter()
            .map(|&c| u32::from(c & 0xC0 != 0x80) + u32::from(c >= 0xF0))
            .sum::<u32>()
}

/// How many of the eight bytes of `x` are zero.
fn zero_bytes(x: u64) -> u32 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // Bit 7 of a byte of `t | x` is set exactly when the byte is not zero (no carries cross
    // bytes: 0x7F + 0x7F fits).
    let t = (x & LOW7).wrapping_add(LOW7);
    (!(t | x | LOW7)).count_ones()
}

/// The script key: the first 18 bits of sha256 of the original source (content only, so
/// instrumented output stays cacheable by content hash).
pub fn script_key(src: &str) -> u32 {
    let d = Sha256::digest(src.as_bytes());
    ((u32::from(d[0]) << 10) | (u32::from(d[1]) << 2) | (u32::from(d[2]) >> 6)) & 0x3_ffff
}

impl Positions {
    /// Indexes the text of `file`.
    pub(crate) fn new(file: Lrc<SourceFile>) -> Self {
        let key = script_key(&file.src);
        let b = file.src.as_bytes();
        let mut starts = Vec::with_capacity(b.len() / 32 + 1);
        starts.push(0);
        // Every job scans its whole source here: jump from one possible line end to the next
        // (`\n`, `\r`, or 0xE2, which may start U+2028 / U+2029).
        let mut i = 0;
        while let Some(k) = b
            .get(i..)
            .and_then(|r| memchr::memchr3(b'\n', b'\r', 0xE2, r))
        {
            i += k;
            match b[i] {
                b'\n' => starts.push(i as u32 + 1),
                b'\r' => {
                    if b.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                    starts.push(i as u32 + 1);
                }
                // U+2028 / U+2029 (E2 80 A8 / E2 80 A9) end lines in JavaScript too.
                _ if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xA8 | 0xA9)) => {
                    i += 2;
                    starts.push(i as u32 + 1);
                }
                _ => {}
            }
            i += 1;
        }
        let utf16_before = if b.is_ascii() {
            Vec::new()
        } else {
            let mut acc = 0;
            let mut t = Vec::with_capacity(b.len() / BLOCK + 1);
            for chunk in b.chunks(BLOCK) {
                t.push(acc);
                acc += utf16_len(chunk);
            }
            t
        };
        Positions {
            key,
            base: file.start_pos.0,
            starts,
            utf16_before,
            file,
        }
    }

    /// UTF-16 code units before byte offset `off` (`off` ≤ length).
    fn utf16_at(&self, off: usize) -> u32 {
        let block = off / BLOCK;
        let before = self.utf16_before.get(block).copied().unwrap_or(0);
        let from = (block * BLOCK).min(off);
        before + self.file.src.as_bytes().get(from..off).map_or(0, utf16_len)
    }

    /// The text the positions are in.
    pub(crate) fn source(&self) -> &str {
        &self.file.src
    }

    /// The script key `K`.
    pub(crate) fn key(&self) -> u32 {
        self.key
    }

    /// The position number of the start of `span`, or `None` for synthesized nodes.
    pub(crate) fn encode(&self, span: Span) -> Option<u64> {
        if span.lo.0 < self.base || span.is_dummy() {
            return None;
        }
        let off = span.lo.0 - self.base;
        let len = self.file.src.len() as u32;
        if off > len {
            return None;
        }
        let line = self.starts.partition_point(|&s| s <= off).max(1);
        let start = *self.starts.get(line - 1)?;
        // Columns count UTF-16 code units, as JavaScript stack traces do.
        let col = if self.utf16_before.is_empty() {
            off - start
        } else {
            self.utf16_at(off as usize) - self.utf16_at(start as usize)
        };
        let line = (line as u64).min(MAX_LINE);
        let col = (u64::from(col) + 1).min(MAX_COL);
        Some((u64::from(self.key) << 35) + (line << 19) + col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use swc_core::common::{BytePos, FileName, SourceMap};

    fn pos(src: &str, at: usize) -> (u64, u64) {
        let cm = SourceMap::default();
        let fm = cm.new_source_file(FileName::Anon.into(), src.to_string());
        let lo = fm.start_pos.0 + at as u32;
        let p = Positions::new(fm);
        let n = p.encode(Span::new(BytePos(lo), BytePos(lo + 1))).unwrap();
        assert_eq!(n >> 35, u64::from(p.key()));
        ((n >> 19) & 0xffff, n & MAX_COL)
    }

    #[test]
    fn utf16_units_of_every_byte_mix() {
        let reference = |b: &[u8]| -> u32 {
            b.iter()
                .map(|&c| u32::from(c & 0xC0 != 0x80) + u32::from(c >= 0xF0))
                .sum()
        };
        let text = "aé日😀\u{2028}z".repeat(7);
        let b = text.as_bytes();
        for from in 0..16 {
            for to in from..b.len() {
                assert_eq!(utf16_len(&b[from..to]), reference(&b[from..to]));
            }
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(utf16_len(&all), reference(&all));
    }

    #[test]
    fn lines_and_utf16_columns() {
        assert_eq!(pos("abc", 0), (1, 1));
        assert_eq!(pos("abc", 2), (1, 3));
        assert_eq!(pos("a\nbc", 3), (2, 2));
        assert_eq!(pos("a\r\nbc", 4), (2, 2));
        assert_eq!(pos("a\rbc", 2), (2, 1));
        assert_eq!(pos("a\u{2028}b", 4), (2, 1));
        // 'é' is 2 bytes, 1 UTF-16 unit; '😀' is 4 bytes, 2 units.
        assert_eq!(pos("é=x", 3), (1, 3));
        assert_eq!(pos("😀=x", 5), (1, 4));
        // Across prefix-table blocks, on a later line.
        let long = format!(
            "{}\n{}é{}x",
            "😀".repeat(300),
            "a".repeat(700),
            "日".repeat(200)
        );
        let at = long.find('x').unwrap();
        assert_eq!(pos(&long, at), (2, 700 + 1 + 200 + 1));
        let at = long.rfind('😀').unwrap();
        assert_eq!(pos(&long, at), (1, 599));
    }

    #[test]
    fn key_is_18_bits_and_fits_in_a_double() {
        let k = script_key("var a = 1;");
        assert!(k < 1 << 18);
        let max = (u64::from(k) << 35) + (MAX_LINE << 19) + MAX_COL;
        assert!(max < 1 << 53);
        assert_ne!(script_key("a"), script_key("b"));
        // The bit layout is a contract (reports find inline code by it): sha256("") starts
        // e3 b0 c4, so K = 0xe3 << 10 | 0xb0 << 2 | 0xc4 >> 6.
        assert_eq!(script_key(""), (0xe3 << 10) | (0xb0 << 2) | (0xc4 >> 6));
    }
}
