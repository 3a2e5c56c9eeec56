//! The signature: the minimum of each of `m` (classically 84) hash functions over a document's
//! shingle keys (the 32-bit fold of each shingle's SipHash, see `shingle::key`). Function `i`
//! maps a key `x` to `a_i·x + b_i (mod 2^32)` with odd `a_i`, a bijection of 32-bit values:
//! one SipHash per shingle feeds all `m` functions with one 32-bit multiply-add each,
//! eight lanes at a time where the processor has AVX2. A minimum takes 4 bytes. The share of
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

/// The `m` hash functions of a configuration.
#[derive(Debug, Clone)]
pub struct MinHasher {
    multipliers: Vec<u32>,
    offsets: Vec<u32>,
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
        MinHasher {
            multipliers,
            offsets,
        }
    }

    /// The number of minima.
    pub fn len(&self) -> usize {
        self.multipliers.len()
    }

    /// True when there are no functions.
    pub fn is_empty(&self) -> bool {
        self.multipliers.is_empty()
    }

    /// The signature of a set of shingle keys. An empty set gives all `u32::MAX`.
    pub fn signature(&self, shingles: &[u32]) -> Vec<u32> {
        let mut minima = vec![u32::MAX; self.len()];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has just been found to support AVX2.
            unsafe { self.fold_avx2(shingles, &mut minima) };
            return minima;
        }
        self.fold(shingles, &mut minima);
        minima
    }

    /// Lowers each minimum by the shingles' values under its function.
    #[inline(always)]
    fn fold(&self, shingles: &[u32], minima: &mut [u32]) {
        for &x in shingles {
            for ((m, &a), &b) in minima.iter_mut().zip(&self.multipliers).zip(&self.offsets) {
                *m = (*m).min(a.wrapping_mul(x).wrapping_add(b));
            }
        }
    }

    /// [`MinHasher::fold`] compiled for AVX2: eight minima per instruction.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn fold_avx2(&self, shingles: &[u32], minima: &mut [u32]) {
        self.fold(shingles, minima);
    }
}

/// The share of positions where two signatures agree: the estimated Jaccard similarity.
pub fn estimate_jaccard(a: &[u32], b: &[u32]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    if a.is_empty() {
        return 0.0;
    }
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    equal as f64 / a.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn functions_are_odd_multipliers_and_fixed_by_seed() {
        let h = MinHasher::new(84, 7);
        assert_eq!(h.len(), 84);
        assert!(h.multipliers.iter().all(|a| a & 1 == 1));
        assert_eq!(h.multipliers, MinHasher::new(84, 7).multipliers);
        assert_ne!(h.multipliers, MinHasher::new(84, 8).multipliers);
    }

    #[test]
    fn splitmix_is_the_published_sequence() {
        // Reference values of SplitMix64 seeded with 1234567.
        let mut state = 1_234_567;
        assert_eq!(splitmix64(&mut state), 6_457_827_717_110_365_317);
        assert_eq!(splitmix64(&mut state), 3_203_168_211_198_807_973);
    }
}
