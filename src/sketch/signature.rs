//! The signature: the minimum of each of `m` (classically 84) hash functions over a document's
//! shingle keys (the 32-bit fold of each shingle's SipHash, see `shingle::key`). Function `i`
//! maps a key `x` to `a_i·x + b_i (mod 2^32)` with odd `a_i`, a bijection of 32-bit values:
//! one SipHash per shingle feeds all `m` functions with one 32-bit multiply-add each, sixteen
//! lanes at a time with AVX-512 and eight with AVX2, the minima of a block of functions held in
//! registers while the keys go by. When keys are taken out of a set, only the minima they
//! attained are found again. A minimum takes 4 bytes. The share of
//! equal minima of two signatures estimates the Jaccard similarity `J` of their shingle sets,
//! with standard error `sqrt(J(1-J)/m)`; two different shingles meet in one minimum with
//! probability about `n/2^32` for sets of `n` shingles, far below that error.

/// SplitMix64: a fixed, portable sequence of 64-bit values from a seed.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Minima computed together, held in registers while every shingle of a set goes by: six
/// 256-bit vectors with AVX2.
const LANES: usize = 48;

/// The `m` hash functions of a configuration.
#[derive(Debug, Clone)]
pub struct MinHasher {
    /// The number of functions.
    minima: usize,
    /// The functions in blocks of `LANES`, the last one padded with functions that map every
    /// key to `u32::MAX` (and so never lower a minimum).
    blocks: Vec<Block>,
}

/// `LANES` functions: multipliers and offsets.
#[derive(Debug, Clone)]
struct Block {
    multipliers: [u32; LANES],
    offsets: [u32; LANES],
}

impl MinHasher {
    /// `minima` functions derived from `seed`.
    pub fn new(minima: usize, seed: u64) -> MinHasher {
        let mut state = seed ^ 0x5349_474E_4154_5552;
        let mut multipliers = Vec::with_capacity(minima);
        let mut offsets = Vec::with_capacity(minima);
        for _ in 0..minima {
            multipliers.push(splitmix64(&mut state) as u32 | 1);
            offsets.push(splitmix64(&mut state) as u32);
        }
        let blocks = multipliers
            .chunks(LANES)
            .zip(offsets.chunks(LANES))
            .map(|(a, b)| {
                let mut block = Block {
                    multipliers: [0; LANES],
                    offsets: [u32::MAX; LANES],
                };
                block.multipliers[..a.len()].copy_from_slice(a);
                block.offsets[..b.len()].copy_from_slice(b);
                block
            })
            .collect();
        MinHasher { minima, blocks }
    }

    /// The number of minima.
    pub fn len(&self) -> usize {
        self.minima
    }

    /// True when there are no functions.
    pub fn is_empty(&self) -> bool {
        self.minima == 0
    }

    /// The signature of a set of shingle keys. An empty set gives all `u32::MAX`.
    pub fn signature(&self, shingles: &[u32]) -> Vec<u32> {
        let mut minima = vec![u32::MAX; self.len()];
        self.lower(&mut minima, shingles);
        minima
    }

    /// Lowers each minimum of a signature by the shingles' values under its function: the
    /// signature of a set becomes that of the set with `shingles` added.
    pub fn lower(&self, minima: &mut [u32], shingles: &[u32]) {
        assert_eq!(minima.len(), self.len(), "one minimum per function");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has just been found to support AVX-512F.
                unsafe { self.fold_avx512(shingles, minima) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has just been found to support AVX2.
                unsafe { self.fold_avx2(shingles, minima) };
                return;
            }
        }
        self.fold(shingles, minima);
    }

    /// Raises the minima of a signature to those of the set once `removed` keys are taken out
    /// of it; `set` is what is left. A minimum changes only when a removed key attains it (each
    /// function is a bijection, so the key that attains a minimum is the only one with that
    /// value), and only those minima are found again, from `set`.
    pub fn remove(&self, minima: &mut [u32], set: &[u32], removed: &[u32]) {
        assert_eq!(minima.len(), self.len(), "one minimum per function");
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has just been found to support AVX-512F.
                unsafe { self.restore_avx512(minima, set, removed) };
                return;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has just been found to support AVX2.
                unsafe { self.restore_avx2(minima, set, removed) };
                return;
            }
        }
        self.restore(minima, set, removed);
    }

    /// [`MinHasher::remove`], one block of functions at a time.
    #[inline(always)]
    fn restore(&self, minima: &mut [u32], set: &[u32], removed: &[u32]) {
        for (block, minima) in self.blocks.iter().zip(minima.chunks_mut(LANES)) {
            // The padding functions map every key to u32::MAX, never 0: never attained.
            let mut lanes = [0; LANES];
            lanes[..minima.len()].copy_from_slice(minima);
            let mut attained = [0u32; LANES];
            for &x in removed {
                for (((hit, &m), &a), &b) in attained
                    .iter_mut()
                    .zip(&lanes)
                    .zip(&block.multipliers)
                    .zip(&block.offsets)
                {
                    *hit |= u32::from(a.wrapping_mul(x).wrapping_add(b) == m);
                }
            }
            for (i, minimum) in minima.iter_mut().enumerate() {
                if attained[i] != 0 {
                    let (a, b) = (block.multipliers[i], block.offsets[i]);
                    *minimum = set
                        .iter()
                        .fold(u32::MAX, |m, &x| m.min(a.wrapping_mul(x).wrapping_add(b)));
                }
            }
        }
    }

    /// [`MinHasher::restore`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn restore_avx2(&self, minima: &mut [u32], set: &[u32], removed: &[u32]) {
        self.restore(minima, set, removed);
    }

    /// [`MinHasher::restore`] compiled for AVX-512.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn restore_avx512(&self, minima: &mut [u32], set: &[u32], removed: &[u32]) {
        self.restore(minima, set, removed);
    }

    /// Lowers each minimum by the shingles' values under its function, one block of functions
    /// at a time.
    #[inline(always)]
    fn fold(&self, shingles: &[u32], minima: &mut [u32]) {
        for (block, minima) in self.blocks.iter().zip(minima.chunks_mut(LANES)) {
            let mut lanes = [u32::MAX; LANES];
            lanes[..minima.len()].copy_from_slice(minima);
            for &x in shingles {
                for ((m, &a), &b) in lanes.iter_mut().zip(&block.multipliers).zip(&block.offsets) {
                    *m = (*m).min(a.wrapping_mul(x).wrapping_add(b));
                }
            }
            minima.copy_from_slice(&lanes[..minima.len()]);
        }
    }

    /// [`MinHasher::fold`] compiled for AVX2: eight minima per instruction.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn fold_avx2(&self, shingles: &[u32], minima: &mut [u32]) {
        self.fold(shingles, minima);
    }

    /// [`MinHasher::fold`] compiled for AVX-512: sixteen minima per instruction.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn fold_avx512(&self, shingles: &[u32], minima: &mut [u32]) {
        self.fold(shingles, minima);
    }
}

/// The share of positions where two signatures agree: the estimated Jaccard similarity.
pub fn estimate_jaccard(a: &[u32], b: &[u32]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    if a.is_empty() {
        return 0.0;
    }
    // A sum of 32-bit flags rather than a count of matches, so that it runs four positions
    // to an instruction.
    let equal: u32 = a.iter().zip(b).map(|(x, y)| u32::from(x == y)).sum();
    f64::from(equal) / a.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    impl MinHasher {
        /// Function `i`'s multiplier and offset.
        fn function(&self, i: usize) -> (u32, u32) {
            let block = &self.blocks[i / LANES];
            (block.multipliers[i % LANES], block.offsets[i % LANES])
        }
    }

    #[test]
    fn identical_sets_agree_everywhere_and_disjoint_sets_nowhere() {
        let h = MinHasher::new(84, 7);
        let a: Vec<u32> = (0..100).map(|i| i * 7919).collect();
        let b: Vec<u32> = (1000..1100).map(|i| i * 7919).collect();
        assert_eq!(estimate_jaccard(&h.signature(&a), &h.signature(&a)), 1.0);
        assert_eq!(estimate_jaccard(&h.signature(&a), &h.signature(&b)), 0.0);
    }

    #[test]
    fn every_code_path_gives_the_same_signature() {
        let h = MinHasher::new(84, 7);
        let set: Vec<u32> = (0..500u64)
            .map(|i| splitmix64(&mut (i * 31)) as u32)
            .collect();
        let mut plain = vec![u32::MAX; 84];
        h.fold(&set, &mut plain);
        assert_eq!(h.signature(&set), plain);
        let mut scalar = vec![u32::MAX; 84];
        for &x in &set {
            for (i, m) in scalar.iter_mut().enumerate() {
                let (a, b) = h.function(i);
                *m = (*m).min(a.wrapping_mul(x).wrapping_add(b));
            }
        }
        assert_eq!(plain, scalar);
        // A set lowered by more keys has the signature of the union.
        let mut lowered = h.signature(&set[..200]);
        h.lower(&mut lowered, &set[200..]);
        assert_eq!(lowered, plain);
        for minima in [1, 47, 48, 49, 100] {
            let h = MinHasher::new(minima, 3);
            let mut one_by_one = vec![u32::MAX; minima];
            for &x in &set {
                for (i, m) in one_by_one.iter_mut().enumerate() {
                    let (a, b) = h.function(i);
                    *m = (*m).min(a.wrapping_mul(x).wrapping_add(b));
                }
            }
            assert_eq!(h.signature(&set), one_by_one);
        }
    }

    /// Each build of `fold` and `restore` the processor can run gives the plain result.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_instruction_set_gives_the_same_minima() {
        let h = MinHasher::new(84, 7);
        let mut state = 5;
        let set: Vec<u32> = (0..400).map(|_| splitmix64(&mut state) as u32).collect();
        let (kept, removed) = set.split_at(250);
        let mut plain = vec![u32::MAX; 84];
        h.fold(&set, &mut plain);
        let mut plain_left = plain.clone();
        h.restore(&mut plain_left, kept, removed);
        type Build = unsafe fn(&MinHasher, &[u32], &mut [u32]);
        type Restore = unsafe fn(&MinHasher, &mut [u32], &[u32], &[u32]);
        let builds: [(&str, bool, Build, Restore); 2] = [
            (
                "avx2",
                std::arch::is_x86_feature_detected!("avx2"),
                MinHasher::fold_avx2,
                MinHasher::restore_avx2,
            ),
            (
                "avx512f",
                std::arch::is_x86_feature_detected!("avx512f"),
                MinHasher::fold_avx512,
                MinHasher::restore_avx512,
            ),
        ];
        for (name, available, fold, restore) in builds {
            if !available {
                continue;
            }
            let mut minima = vec![u32::MAX; 84];
            // SAFETY: the processor has the instruction set, as checked above.
            unsafe { fold(&h, &set, &mut minima) };
            assert_eq!(minima, plain, "{name} fold");
            // SAFETY: as above.
            unsafe { restore(&h, &mut minima, kept, removed) };
            assert_eq!(minima, plain_left, "{name} restore");
        }
    }

    #[test]
    fn removing_keys_gives_the_signature_of_what_is_left() {
        let h = MinHasher::new(84, 7);
        let mut state = 9;
        let set: Vec<u32> = (0..300).map(|_| splitmix64(&mut state) as u32).collect();
        let full = h.signature(&set);
        // Keys that attain minima, keys that attain none, all keys, none.
        let argmins: Vec<u32> = set
            .iter()
            .copied()
            .filter(|&x| h.signature(&[x]).iter().zip(&full).any(|(a, b)| a == b))
            .collect();
        let others: Vec<u32> = set
            .iter()
            .copied()
            .filter(|x| !argmins.contains(x))
            .collect();
        let cases: [&[u32]; 5] = [&argmins[..3], &others[..40], &set[..150], &set, &[]];
        for removed in cases {
            let left: Vec<u32> = set
                .iter()
                .copied()
                .filter(|x| !removed.contains(x))
                .collect();
            let mut minima = full.clone();
            h.remove(&mut minima, &left, removed);
            assert_eq!(minima, h.signature(&left));
            let mut plain = full.clone();
            h.restore(&mut plain, &left, removed);
            assert_eq!(plain, minima);
        }
    }

    #[test]
    fn functions_are_odd_multipliers_and_fixed_by_seed() {
        let h = MinHasher::new(84, 7);
        assert_eq!(h.len(), 84);
        let functions = |h: &MinHasher| (0..h.len()).map(|i| h.function(i)).collect::<Vec<_>>();
        assert!(functions(&h).iter().all(|(a, _)| a & 1 == 1));
        assert_eq!(functions(&h), functions(&MinHasher::new(84, 7)));
        assert_ne!(functions(&h), functions(&MinHasher::new(84, 8)));
    }

    #[test]
    fn splitmix_is_the_published_sequence() {
        // Reference values of SplitMix64 seeded with 1234567.
        let mut state = 1_234_567;
        assert_eq!(splitmix64(&mut state), 6_457_827_717_110_365_317);
        assert_eq!(splitmix64(&mut state), 3_203_168_211_198_807_973);
    }
}
