//! Sorting the large lists of a run (candidate keys with their documents, candidate pairs,
//! the index's postings found) on every thread: a list is scattered into buckets by the top
//! bits of a prefix of each item's order, and each bucket is then sorted on its own. Keys are
//! hashes and documents are numbered densely, so the buckets come out small and even, and the
//! list is sorted in about one pass over memory instead of the dozen of a comparison sort.

use rayon::prelude::*;

/// Lists shorter than this are sorted by comparison: scattering them costs more than it saves.
const SCATTERED_FROM: usize = 1 << 14;

/// Bytes of a list up to which it is scattered: a larger list is sorted in place, as a copy
/// would add its size to the peak of a large run (whose candidate index is made in ranges of
/// about 100 MB), where the night of an index or a collection of 100,000 documents sorts
/// lists of a few megabytes.
const SCATTERED_UP_TO: usize = 32 << 20;

/// Items a bucket holds on average: a bucket of a few dozen sorts within the cache.
const ITEMS_PER_BUCKET: usize = 64;

/// Most buckets, so that each part's counts stay small beside the list.
const MAX_BUCKET_BITS: u32 = 16;

/// Sorts `list` into its order (`Ord`), as `par_sort_unstable` does. `prefix` must keep that
/// order: `a <= b` implies `prefix(a) <= prefix(b)` (the leading field of the order, or the
/// fields packed into a `u64`), it must give an item the same value each time it is asked
/// (the items are counted, then placed, by it: the run stops with a panic otherwise), and
/// the more evenly its values spread, the faster the sort. The list is scattered into a new
/// list of the same length, which takes its place; one of more than [`SCATTERED_UP_TO`]
/// bytes is sorted in place by comparison.
pub(crate) fn par_sort_by_prefix<T, P>(list: &mut Vec<T>, prefix: P)
where
    T: Copy + Ord + Send + Sync,
    P: Fn(&T) -> u64 + Sync,
{
    sort_scattering_up_to(list, prefix, SCATTERED_UP_TO);
}

/// [`par_sort_by_prefix`], scattering lists of up to `most_bytes`.
fn sort_scattering_up_to<T, P>(list: &mut Vec<T>, prefix: P, most_bytes: usize)
where
    T: Copy + Ord + Send + Sync,
    P: Fn(&T) -> u64 + Sync,
{
    let n = list.len();
    if n < SCATTERED_FROM || std::mem::size_of_val(list.as_slice()) > most_bytes {
        list.par_sort_unstable();
        return;
    }
    let highest = list.par_iter().map(&prefix).max().unwrap_or(0);
    let value_bits = u64::BITS - highest.leading_zeros();
    let bucket_bits = (n / ITEMS_PER_BUCKET)
        .next_power_of_two()
        .trailing_zeros()
        .min(MAX_BUCKET_BITS)
        .min(value_bits);
    let shift = value_bits - bucket_bits;
    let bucket_of = |item: &T| (prefix(item) >> shift) as usize;
    let buckets = 1usize << bucket_bits;

    // Each part's count of every bucket, then where each part's share of each bucket starts
    // (its cursors) and ends.
    let part = n.div_ceil(rayon::current_num_threads() * 4);
    let mut ends: Vec<Vec<usize>> = list
        .par_chunks(part)
        .map(|items| {
            let mut count = vec![0; buckets];
            items.iter().for_each(|item| count[bucket_of(item)] += 1);
            count
        })
        .collect();
    let mut starts = Vec::with_capacity(buckets + 1);
    let mut cursors = vec![vec![0; buckets]; ends.len()];
    let mut at = 0;
    for bucket in 0..buckets {
        starts.push(at);
        for (end, cursor) in ends.iter_mut().zip(&mut cursors) {
            cursor[bucket] = at;
            at += end[bucket];
            end[bucket] = at;
        }
    }
    starts.push(at);

    let mut sorted: Vec<T> = Vec::with_capacity(n);
    let target = SharedOut(sorted.as_mut_ptr());
    list.par_chunks(part)
        .zip(cursors)
        .zip(&ends)
        .for_each(|((items, mut cursor), end)| {
            let target = &target;
            for item in items {
                let bucket = bucket_of(item);
                let slot = &mut cursor[bucket];
                assert!(*slot < end[bucket], "{PREFIX_CHANGED}");
                // SAFETY: the parts' shares of the buckets are disjoint ranges below `n`
                // that the counts above laid out, and the check above keeps each part within
                // its own, so every index is written at most once, by one thread.
                unsafe { target.0.add(*slot).write(*item) };
                *slot += 1;
            }
            assert!(cursor == *end, "{PREFIX_CHANGED}");
        });
    // SAFETY: every part filled its shares (checked above), and they cover `0..n`.
    unsafe { sorted.set_len(n) };
    // Each bucket sorted on its own; the buckets are in order already.
    let mut rest = sorted.as_mut_slice();
    let mut slices = Vec::with_capacity(buckets);
    for bounds in starts.windows(2) {
        let (bucket, after) = rest.split_at_mut(bounds[1] - bounds[0]);
        slices.push(bucket);
        rest = after;
    }
    slices
        .into_par_iter()
        .with_min_len(64)
        .for_each(|bucket| bucket.sort_unstable());
    *list = sorted;
}

/// Why a sort stops when its items were not placed where they were counted.
const PREFIX_CHANGED: &str = "a sort's prefix gave an item another value than when it was counted";

/// The start of the list the parts scatter into, shared by the threads that write it.
struct SharedOut<T>(*mut T);

// SAFETY: the threads write disjoint slots of the list (see `par_sort_by_prefix`).
unsafe impl<T: Send> Sync for SharedOut<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted_by_comparison<T: Ord + Clone>(list: &[T]) -> Vec<T> {
        let mut list = list.to_vec();
        list.sort_unstable();
        list
    }

    #[test]
    fn sorts_hashed_keys_with_their_documents() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut list: Vec<(u64, u32)> = (0..100_000u32)
            .map(|doc| (crate::sketch::signature::splitmix64(&mut state), doc / 7))
            .collect();
        // Repeated keys, and the extremes of the key space.
        list.extend([
            (0, 3),
            (0, 1),
            (u64::MAX, 2),
            (u64::MAX, 0),
            (42, 9),
            (42, 9),
        ]);
        let expected = sorted_by_comparison(&list);
        par_sort_by_prefix(&mut list, |&(key, _)| key);
        assert_eq!(list, expected);
    }

    #[test]
    fn sorts_dense_pairs_packed_into_their_prefix() {
        // Pairs of document numbers below a few thousand: the prefix's high bits are all
        // zero, and the buckets follow the bits that are used.
        let mut state = 7_u64;
        let mut list: Vec<(u32, u32)> = (0..50_000)
            .map(|_| {
                let r = crate::sketch::signature::splitmix64(&mut state);
                ((r % 3_000) as u32, (r >> 32) as u32 % 5_000)
            })
            .collect();
        let expected = sorted_by_comparison(&list);
        par_sort_by_prefix(&mut list, |&(a, b)| u64::from(a) << 32 | u64::from(b));
        assert_eq!(list, expected);
    }

    #[test]
    fn a_prefix_of_the_leading_field_alone_leaves_the_rest_to_the_buckets() {
        // All items in one bucket but for one: every order within it comes from sorting.
        let mut list: Vec<(u32, u32)> = (0..40_000u32).rev().map(|b| (1, b)).collect();
        list.push((0, 5));
        let expected = sorted_by_comparison(&list);
        par_sort_by_prefix(&mut list, |&(a, _)| u64::from(a));
        assert_eq!(list, expected);
    }

    #[test]
    fn a_list_too_large_to_copy_is_sorted_in_place() {
        let mut list: Vec<(u32, u32)> = (0..30_000u32).map(|i| (i.wrapping_mul(7919), i)).collect();
        let expected = sorted_by_comparison(&list);
        let before = list.as_ptr();
        sort_scattering_up_to(
            &mut list,
            |&(a, b)| u64::from(a) << 32 | u64::from(b),
            1 << 10,
        );
        assert_eq!(list, expected);
        assert_eq!(list.as_ptr(), before, "sorted where it was");
        sort_scattering_up_to(
            &mut list,
            |&(a, b)| u64::from(a) << 32 | u64::from(b),
            1 << 30,
        );
        assert_eq!(list, expected);
    }

    #[test]
    #[should_panic(expected = "prefix gave an item another value")]
    fn a_prefix_that_changes_between_counting_and_placing_stops_the_sort() {
        let mut list: Vec<(u32, u32)> = (0..20_000u32).map(|i| (i.wrapping_mul(7919), i)).collect();
        let n = list.len();
        // Asked once for the highest value and once to count, each item gives its own
        // value; asked again to place it, every item gives 0.
        let asked = std::sync::atomic::AtomicUsize::new(0);
        par_sort_by_prefix(&mut list, |&(a, _)| {
            if asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 2 * n {
                u64::from(a)
            } else {
                0
            }
        });
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn sorts_as_a_comparison_sort_does(
            list in proptest::collection::vec((any::<u32>(), 0u32..50), 0..40_000),
            shift in 0u32..32,
        ) {
            let mut list: Vec<(u32, u32)> =
                list.into_iter().map(|(a, b)| (a >> shift, b)).collect();
            let expected = sorted_by_comparison(&list);
            par_sort_by_prefix(&mut list, |&(a, b)| u64::from(a) << 32 | u64::from(b));
            prop_assert_eq!(list, expected);
        }
    }
}
