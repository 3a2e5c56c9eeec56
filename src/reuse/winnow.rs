//! Winnowing (Schleimer, Wilkerson and Aiken, 2003): a text's fingerprints are the smallest
//! shingle key of every window of `w` consecutive shingles. Two texts that share a run of
//! `w + k - 1` words share its `w` shingles, hence that window's smallest key: a shared
//! fingerprint. About `2 / (w + 1)` of a text's shingles are kept. Boilerplate shingles
//! ([`MASKED`]) are never a fingerprint.

use super::MASKED;

/// The distinct fingerprints of a text whose shingle keys, in text order, are `keys`
/// (boilerplate [`MASKED`]), with windows of `window` shingles; sorted. A text with fewer
/// shingles than `window` has one window, all of them.
///
/// The windows' minima are found by doubling: the minima of windows of 2, 4, … keys, each
/// pass the minimum of two neighbours of the pass before (a loop the compiler turns into
/// vector instructions), and those of `window` keys as the minimum of two overlapping
/// windows of the largest power of two not above it.
pub fn fingerprints(keys: &[u32], window: usize) -> Vec<u32> {
    let window = window.clamp(1, keys.len().max(1));
    let mut minima = keys.to_vec();
    let mut span = 1;
    while span * 2 <= window {
        let halves = minima.iter().zip(&minima[span..]);
        minima = halves.map(|(&a, &b)| a.min(b)).collect();
        span *= 2;
    }
    // `window` is at most the keys' number (1 when there are none).
    let windows = keys.len() + 1 - window;
    let (first, second) = (&minima[..windows], &minima[window - span..][..windows]);
    // Neighbouring windows mostly share their minimum: it is kept once a run, written in
    // place and kept by moving on, without a branch.
    let mut out = vec![0; windows];
    let (mut kept, mut last) = (0, MASKED);
    for (&a, &b) in first.iter().zip(second) {
        let minimum = a.min(b);
        out[kept] = minimum;
        kept += usize::from(minimum != last);
        last = minimum;
    }
    out.truncate(kept);
    out.sort_unstable();
    out.dedup();
    if out.last() == Some(&MASKED) {
        out.pop();
    }
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
        /// The minima found by doubling are those of each window taken whole, for any
        /// window, with boilerplate among the keys.
        #[test]
        fn fingerprints_are_the_minima_of_every_window(
            keys in proptest::collection::vec(proptest::prop_oneof![0u32..50, proptest::strategy::Just(MASKED)], 0..60),
            window in 1usize..12,
        ) {
            let whole = window.clamp(1, keys.len().max(1));
            let mut expected: Vec<u32> = keys
                .windows(whole)
                .filter_map(|w| w.iter().copied().min())
                .filter(|&m| m != MASKED)
                .collect();
            expected.sort_unstable();
            expected.dedup();
            proptest::prop_assert_eq!(fingerprints(&keys, window), expected);
        }

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
