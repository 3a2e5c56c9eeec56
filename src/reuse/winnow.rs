//! Winnowing (Schleimer, Wilkerson and Aiken, 2003): a text's fingerprints are the smallest
//! shingle key of every window of `w` consecutive shingles. Two texts that share a run of
//! `w + k - 1` words share its `w` shingles, hence that window's smallest key: a shared
//! fingerprint. About `2 / (w + 1)` of a text's shingles are kept. Boilerplate shingles
//! ([`MASKED`]) are never a fingerprint.

use super::MASKED;

/// The distinct fingerprints of a text whose shingle keys, in text order, are `keys`
/// (boilerplate [`MASKED`]), with windows of `window` shingles; sorted. A text with fewer
/// shingles than `window` has one window, all of them.
pub fn fingerprints(keys: &[u32], window: usize) -> Vec<u32> {
    let window = window.clamp(1, keys.len().max(1));
    let mut out: Vec<u32> = Vec::with_capacity(2 * keys.len() / (window + 1) + 1);
    // Neighbouring windows mostly share their minimum: it is pushed once a run.
    let mut last = MASKED;
    for minimum in keys.windows(window).filter_map(|w| w.iter().copied().min()) {
        if minimum != last {
            last = minimum;
            out.push(minimum);
        }
    }
    out.retain(|&m| m != MASKED);
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_window_gives_its_minimum_once() {
        assert_eq!(fingerprints(&[5, 3, 9, 7, 8, 1], 3), [1, 3, 7]);
        assert_eq!(fingerprints(&[5, 3], 4), [3]);
        assert!(fingerprints(&[], 4).is_empty());
        assert_eq!(fingerprints(&[MASKED, MASKED, 4], 2), [4]);
    }

    proptest::proptest! {
        #[test]
        fn a_shared_run_of_a_window_shares_a_fingerprint(
            a in proptest::collection::vec(0u32..1000, 0..40),
            b in proptest::collection::vec(0u32..1000, 0..40),
            run in proptest::collection::vec(0u32..1000, 4..10),
        ) {
            let join = |x: &[u32], y: &[u32]| [x, &run, y].concat();
            let (first, second) = (join(&a, &b), join(&b, &a));
            let (f, s) = (fingerprints(&first, 4), fingerprints(&second, 4));
            proptest::prop_assert!(f.iter().any(|k| s.binary_search(k).is_ok()));
        }
    }
}
