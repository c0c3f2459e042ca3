//! A fast seeded hasher for the string interner. SipHash dominated trace loading; this folded
//! multiply hash is several times cheaper, and its per-process random seed keeps crafted
//! location names from colliding on purpose (minimal HashDoS resistance, like foldhash).

use std::hash::{BuildHasher, Hasher};

const K1: u64 = 0x243f_6a88_85a3_08d3;
const K2: u64 = 0x1319_8a2e_0370_7344;

#[inline]
fn fold(x: u64, y: u64) -> u64 {
    let f = u128::from(x) * u128::from(y);
    (f as u64) ^ ((f >> 64) as u64)
}

/// Builds [`FastHasher`]s with one random seed per map.
#[derive(Clone, Debug)]
pub struct FastState {
    seed: u64,
}

impl Default for FastState {
    fn default() -> Self {
        // std's RandomState draws its keys from the OS once per thread and then varies them.
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        FastState { seed: seed | 1 }
    }
}

impl BuildHasher for FastState {
    type Hasher = FastHasher;
    fn build_hasher(&self) -> FastHasher {
        FastHasher {
            acc: self.seed,
            seed: self.seed,
        }
    }
}

/// Folded-multiply hasher over 16-byte blocks.
#[derive(Clone, Debug)]
pub struct FastHasher {
    acc: u64,
    seed: u64,
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(16);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            let mut b = [0u8; 8];
            a.copy_from_slice(&c[..8]);
            b.copy_from_slice(&c[8..]);
            self.acc = fold(u64::from_le_bytes(a) ^ self.acc, u64::from_le_bytes(b) ^ K1);
        }
        let rest = chunks.remainder();
        let mut pad = [0u8; 16];
        pad[..rest.len()].copy_from_slice(rest);
        let mut a = [0u8; 8];
        let mut b = [0u8; 8];
        a.copy_from_slice(&pad[..8]);
        b.copy_from_slice(&pad[8..]);
        self.acc = fold(
            u64::from_le_bytes(a) ^ self.acc ^ bytes.len() as u64,
            u64::from_le_bytes(b) ^ self.seed ^ K2,
        );
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.acc = fold(self.acc ^ i, self.seed ^ K1);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        fold(self.acc, self.seed ^ K2)
    }
}

/// For maps keyed by values that already are seeded hashes: hashing them again is waste.
#[derive(Clone, Copy, Debug, Default)]
pub struct PassThrough;

impl BuildHasher for PassThrough {
    type Hasher = PassThroughHasher;
    fn build_hasher(&self) -> PassThroughHasher {
        PassThroughHasher(0)
    }
}

/// See [`PassThrough`].
#[derive(Clone, Copy, Debug)]
pub struct PassThroughHasher(u64);

impl Hasher for PassThroughHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Not used for u64 keys; fold anything else in so the hasher stays correct.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }

    /// Half a seeded hash: both halves of the result are it, so the map's bucket index (low
    /// bits) and its control tag (top bits) are both spread.
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.0 = u64::from(i) << 32 | u64::from(i);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn spreads_similar_keys() {
        let s = FastState::default();
        let hashes: HashSet<u64> = (0..100_000)
            .map(|i| s.hash_one(format!("Global.v{i}")))
            .collect();
        assert_eq!(hashes.len(), 100_000);
        // Low bits (hashbrown's bucket index) are well spread too.
        let low: HashSet<u64> = (0..4096)
            .map(|i| s.hash_one(format!("DOMNode[{i}].innerHTML")) & 0xffff)
            .collect();
        assert!(low.len() > 3800, "{}", low.len());
        assert_ne!(s.hash_one("a"), s.hash_one("a\0"));
        assert_ne!(s.hash_one(""), s.hash_one("\0"));
    }
}
