//! Intersecting ascending posting lists, shared by one site's lists and the federation's.
//!
//! Candidates come in ascending order, so each list is only ever searched past the last entry
//! found in it. The search gallops (looks 1, 2, 4, ... entries ahead, then bisects that window):
//! where lists are dense, as a common VO or the cloud kind are, the next candidate is a step or two
//! ahead and is found in that many comparisons; where they are sparse it costs a binary search.

/// Calls `found` with every entry of `shortest` that is in each of `others`, ascending. All lists
/// must be ascending.
pub fn intersect<T: Ord + Copy>(shortest: &[T], others: &mut [&[T]], mut found: impl FnMut(T)) {
    'entries: for &candidate in shortest {
        for other in others.iter_mut() {
            // What is below this candidate is never needed again.
            *other = &other[skip_below(other, candidate)..];
            if other.first() != Some(&candidate) {
                continue 'entries;
            }
        }
        found(candidate);
    }
}

/// The number of entries of ascending `list` below `target`, found by galloping from the front.
fn skip_below<T: Ord + Copy>(list: &[T], target: T) -> usize {
    let mut bound = 1;
    while bound <= list.len() && list[bound - 1] < target {
        bound *= 2;
    }
    // Every entry before bound / 2 is below the target; the first one that is not is before bound.
    let from = bound / 2;
    let to = bound.min(list.len());
    from + list[from..to].partition_point(|&e| e < target)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn set(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v.dedup();
        v
    }

    proptest! {
        #[test]
        fn skip_below_counts_the_entries_below(list in proptest::collection::vec(0u32..200, 0..64), target in 0u32..220) {
            let list = set(list);
            prop_assert_eq!(skip_below(&list, target), list.iter().filter(|&&e| e < target).count());
        }

        #[test]
        fn intersect_finds_exactly_the_common_entries(
            a in proptest::collection::vec(0u32..300, 0..100),
            b in proptest::collection::vec(0u32..300, 0..300),
            c in proptest::collection::vec(0u32..300, 0..300),
        ) {
            let (a, b, c) = (set(a), set(b), set(c));
            let mut found = Vec::new();
            intersect(&a, &mut [&b[..], &c[..]], |e| found.push(e));
            let expected: Vec<u32> =
                a.iter().copied().filter(|e| b.contains(e) && c.contains(e)).collect();
            prop_assert_eq!(found, expected);
        }
    }
}
