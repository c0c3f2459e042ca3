//! The seeded generator behind the exercise's choices: SplitMix64, whose outputs are fixed by
//! its definition, so a seed makes the same choices in every version (the scenario corpus and
//! replays of a logged exercise rely on it).

use rand_xoshiro::SplitMix64;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};

/// SplitMix64 with the one draw the exercise needs.
#[derive(Debug, Clone)]
pub(crate) struct Rng(SplitMix64);

impl Rng {
    /// The generator whose state starts at `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(SplitMix64::seed_from_u64(seed))
    }

    /// Uniform in `0..n` (`n > 0`), by remainder: the choice sequence of earlier versions.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.0.next_u64() % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The generator this crate carried before `rand_xoshiro` (and `browser/` before it).
    struct Old(u64);

    impl Old {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn the_same_seed_gives_the_old_generators_values() {
        // The seeds in use: the options' default, the CLI's (1), the corpus' (7), and 0.
        let known: [(u64, [u64; 3]); 4] = [
            (
                0,
                [
                    0xe220_a839_7b1d_cdaf,
                    0x6e78_9e6a_a1b9_65f4,
                    0x06c4_5d18_8009_454f,
                ],
            ),
            (
                1,
                [
                    0x910a_2dec_8902_5cc1,
                    0xbeeb_8da1_658e_ec67,
                    0xf893_a2ee_fb32_555e,
                ],
            ),
            (
                7,
                [
                    0x63cb_e1e4_5932_0dd7,
                    0x044c_3cd7_f43c_661c,
                    0xe698_4080_bab1_2a02,
                ],
            ),
            (
                0x5e9e_4e2d,
                [
                    0xbdb0_36d1_9b3b_7436,
                    0x7869_197f_9984_b1b0,
                    0x1f3e_2425_eff4_bfe1,
                ],
            ),
        ];
        for (seed, first) in known {
            let mut new = SplitMix64::seed_from_u64(seed);
            assert_eq!(first.map(|_| new.next_u64()), first, "seed {seed:#x}");
            let (mut old, mut new) = (Old(seed), SplitMix64::seed_from_u64(seed));
            for i in 0..10_000 {
                assert_eq!(old.next_u64(), new.next_u64(), "seed {seed:#x}, draw {i}");
            }
            let (mut old, mut rng) = (Old(seed), Rng::new(seed));
            for n in 1..500usize {
                assert_eq!((old.next_u64() % n as u64) as usize, rng.below(n));
            }
        }
    }

    #[test]
    fn rng_is_deterministic_and_spreads() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<usize> = (0..64).map(|_| a.below(10)).collect();
        let ys: Vec<usize> = (0..64).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        let distinct: BTreeSet<usize> = xs.into_iter().collect();
        assert!(distinct.len() >= 8, "{distinct:?}");
        assert_ne!(Rng::new(1).below(1 << 30), Rng::new(2).below(1 << 30));
    }
}
