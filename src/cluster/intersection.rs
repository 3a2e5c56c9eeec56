//! Sorted lists of 32-bit shingle keys: the size of the intersection of two sorted sets, the
//! inner loop of exact verification. Blocks of eight keys of each set are compared all against
//! all with AVX2 where the processor has it; elsewhere, and for the last keys, a merge whose
//! steps take no branch.

/// The size of the intersection of two sorted sets of distinct keys.
pub fn intersection_size(a: &[u32], b: &[u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && a.len() >= 8 && b.len() >= 8 {
        // SAFETY: the processor has just been found to support AVX2.
        return unsafe { intersection_size_avx2(a, b) };
    }
    merge_count(a, b, 0)
}

/// Counts the keys common to sorted sets `a` and `b` by a merge that advances without
/// branching, adding them to `common`.
#[inline(always)]
fn merge_count(a: &[u32], b: &[u32], mut common: usize) -> usize {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        common += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    common
}

/// [`intersection_size`] eight keys of each set at a time: each key of `a`'s block is compared
/// with every key of `b`'s block, and the block whose last key is smaller moves on (both when
/// their last keys are equal). A key of `a` matches at most one of `b`, in one block, and every
/// pair of blocks whose key ranges overlap meets once, so each common key counts once. The keys
/// left when either set has fewer than eight to go are merged one by one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn intersection_size_avx2(a: &[u32], b: &[u32]) -> usize {
    use std::arch::x86_64::*;
    let (mut i, mut j) = (0, 0);
    let mut common = 0usize;
    while i + 8 <= a.len() && j + 8 <= b.len() {
        // SAFETY: `i + 8 <= a.len()` and `j + 8 <= b.len()`; unaligned loads.
        let (block, keys) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                b.as_ptr().add(j),
            )
        };
        let mut equal = _mm256_setzero_si256();
        for k in 0..8 {
            // SAFETY: `k < 8` and `j + 8 <= b.len()`.
            let key = _mm256_set1_epi32(unsafe { *keys.add(k) } as i32);
            equal = _mm256_or_si256(equal, _mm256_cmpeq_epi32(block, key));
        }
        common += (_mm256_movemask_ps(_mm256_castsi256_ps(equal)) as u32).count_ones() as usize;
        let (last_a, last_b) = (a[i + 7], b[j + 7]);
        i += 8 * usize::from(last_a <= last_b);
        j += 8 * usize::from(last_b <= last_a);
    }
    merge_count(&a[i..], &b[j..], common)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::signature::splitmix64;

    /// The plain merge the fast versions must agree with.
    fn plain(a: &[u32], b: &[u32]) -> usize {
        a.iter().filter(|k| b.binary_search(k).is_ok()).count()
    }

    /// A sorted set of about `n` keys below `range`.
    fn random_set(state: &mut u64, n: usize, range: u64) -> Vec<u32> {
        let mut set: Vec<u32> = (0..n).map(|_| (splitmix64(state) % range) as u32).collect();
        set.sort_unstable();
        set.dedup();
        set
    }

    #[test]
    fn fast_intersections_match_a_plain_count() {
        let mut state = 11;
        for round in 0..2000 {
            let range = [20, 100, 1000, 1 << 32][round % 4];
            let (n, m) = (round % 70, (round * 7) % 90);
            let a = random_set(&mut state, n, range);
            let b = random_set(&mut state, m, range);
            let expected = plain(&a, &b);
            assert_eq!(intersection_size(&a, &b), expected, "{a:?} {b:?}");
            assert_eq!(intersection_size(&b, &a), expected);
            assert_eq!(merge_count(&a, &b, 0), expected);
        }
    }

    #[test]
    fn empty_equal_and_disjoint_sets() {
        assert_eq!(intersection_size(&[1, 3, 5, 7], &[2, 3, 7, 9]), 2);
        assert_eq!(intersection_size(&[], &[1]), 0);
        let a: Vec<u32> = (0..100).map(|i| i * 3).collect();
        let evens: Vec<u32> = (0..100).map(|i| i * 2).collect();
        let high: Vec<u32> = (1000..1050).collect();
        let extremes = [0, 1, u32::MAX - 1, u32::MAX];
        assert_eq!(intersection_size(&a, &a), 100);
        assert_eq!(intersection_size(&a, &[]), 0);
        assert_eq!(intersection_size(&[], &[]), 0);
        assert_eq!(intersection_size(&a, &high), 0);
        assert_eq!(intersection_size(&high, &a), 0);
        assert_eq!(intersection_size(&a, &evens), plain(&a, &evens));
        assert_eq!(intersection_size(&extremes, &extremes), 4);
        let mut wide: Vec<u32> = (0..20).chain(u32::MAX - 20..=u32::MAX).collect();
        wide.sort_unstable();
        assert_eq!(intersection_size(&wide, &extremes), 4);
        assert_eq!(intersection_size(&wide, &wide), wide.len());
    }
}
