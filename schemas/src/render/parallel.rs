//! Rendering on several cores. A large site's document is tens of megabytes; the renderers cut
//! their work into contiguous pieces (runs of entities, of XML elements, of JSON array elements),
//! render each piece into its own buffer on its own thread and join the buffers in order, so the
//! bytes are the ones a single thread writes.
//!
//! Plain `std::thread::scope`: a rendering runs once a minute or so, and a handful of threads
//! started per rendering cost microseconds against the tens of milliseconds they save.

use std::num::NonZeroUsize;
use std::ops::Range;

/// Below this many units of work (see [`split`]) a rendering stays on one thread: starting threads
/// would cost more than they save.
const MIN_WEIGHT_PER_PART: usize = 20_000;

/// How many pieces to cut a rendering into: one per core.
pub fn parts() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Splits `0..weights.len()` into at most `parts` contiguous, non-empty ranges of about equal total
/// weight (a piece of work's weight is what it costs to render, roughly: attributes, say). Small
/// totals give one range.
pub fn split(weights: &[usize], parts: usize) -> Vec<Range<usize>> {
    let total: usize = weights.iter().sum();
    let parts = parts.clamp(1, (total / MIN_WEIGHT_PER_PART).max(1));
    split_exactly(weights, parts)
}

/// [`split`] without the minimum size, so tests can cut a small site into many pieces.
pub fn split_exactly(weights: &[usize], parts: usize) -> Vec<Range<usize>> {
    let total: usize = weights.iter().sum();
    let parts = parts.max(1);
    let mut ranges = Vec::with_capacity(parts);
    let mut start = 0;
    let mut sum = 0;
    for (index, weight) in weights.iter().enumerate() {
        sum += weight;
        // Cut where the running total passes the next 1/parts mark.
        if ranges.len() + 1 < parts && sum * parts >= total * (ranges.len() + 1) {
            ranges.push(start..index + 1);
            start = index + 1;
        }
    }
    if start < weights.len() || ranges.is_empty() {
        ranges.push(start..weights.len());
    }
    ranges
}

/// Runs `work` on each of `ranges` (with the range's position), each on its own thread and the
/// first on this one; the results come back in range order.
pub fn run<T, F>(ranges: &[Range<usize>], work: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, Range<usize>) -> T + Sync,
{
    if ranges.is_empty() {
        return Vec::new();
    }
    let (here, mut rest) = run_here(ranges, |range| work(0, range), &work);
    rest.insert(0, here);
    rest
}

/// Runs `here` on the first of `ranges` on this thread (so it may write into what this thread
/// holds) and `work` on each of the others on threads of their own; the others' results come back
/// in range order.
pub fn run_here<R, T, H, F>(ranges: &[Range<usize>], here: H, work: F) -> (R, Vec<T>)
where
    T: Send,
    H: FnOnce(Range<usize>) -> R,
    F: Fn(usize, Range<usize>) -> T + Sync,
{
    let (first, rest) = ranges
        .split_first()
        .map_or((0..0, &[][..]), |(first, rest)| (first.clone(), rest));
    if rest.is_empty() {
        return (here(first), Vec::new());
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter()
            .enumerate()
            .map(|(position, range)| {
                let range = range.clone();
                scope.spawn(move || work(position + 1, range))
            })
            .collect();
        let mine = here(first);
        let theirs = handles
            .into_iter()
            .map(|handle| match handle.join() {
                Ok(result) => result,
                // A renderer does not panic on any input; if one did, this thread goes down the same
                // way.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect();
        (mine, theirs)
    })
}

/// The buffers one after the other. The first buffer is extended in place (renderers give it room
/// for the whole document), so only the later pieces are copied.
pub fn concat(parts: Vec<Vec<u8>>) -> Vec<u8> {
    let mut parts = parts.into_iter();
    let mut out = parts.next().unwrap_or_default();
    for part in parts {
        out.extend_from_slice(&part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_everything_in_order_with_even_weight() {
        let weights = [5, 1, 1, 1, 1, 1, 5, 1, 1, 1, 1, 1];
        let ranges = split_exactly(&weights, 3);
        assert_eq!(ranges, [0..3, 3..7, 7..12]);
        assert_eq!(split_exactly(&weights, 1), vec![0..12]);
        assert_eq!(split_exactly(&[], 4), vec![0..0]);
        let many = split_exactly(&[1, 1], 5);
        assert_eq!(many, [0..1, 1..2]);
    }

    #[test]
    fn small_work_stays_in_one_piece() {
        assert_eq!(split(&[1; 100], 8), vec![0..100]);
    }

    #[test]
    fn results_come_back_in_range_order() {
        let ranges = split_exactly(&[1; 10], 4);
        let sums = run(&ranges, |position, range| (position, range.sum::<usize>()));
        assert_eq!(sums, [(0, 3), (1, 7), (2, 18), (3, 17)]);
        assert_eq!(
            concat(vec![b"ab".to_vec(), b"".to_vec(), b"c".to_vec()]),
            b"abc"
        );
    }
}
