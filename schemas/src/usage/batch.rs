//! Packing records into messages, by count and by bytes. A pure function shared by the APEL export
//! (AMS refuses messages of 1 MB and more, and one refused message blocks ssmsend's whole queue)
//! and the site's shipping plan, so both obey the same arithmetic and tests of one cover the other.

/// What one message may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// At most this many items.
    pub max_items: usize,
    /// At most this many bytes in all, framing included.
    pub max_bytes: usize,
}

/// How items are framed in a message: `overhead` bytes once (envelope), `separator` bytes between
/// two items (a comma in a JSON array).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Frame {
    pub overhead: usize,
    pub separator: usize,
}

/// The result: batches of item indexes, in input order, and the items too big for any message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packing {
    pub batches: Vec<Vec<usize>>,
    /// Items that alone exceed `max_bytes` with the envelope; they need fixing at the source.
    pub oversized: Vec<usize>,
}

/// Packs items of the given byte `sizes` greedily, in order: a new batch starts when the next item
/// would break either limit. Greedy is optimal here: order is kept (oldest records first) and the
/// number of messages is within one of the minimum for that order.
pub fn pack(sizes: &[usize], limits: Limits, frame: Frame) -> Packing {
    let mut packing = Packing::default();
    let mut current: Vec<usize> = Vec::new();
    let mut bytes = frame.overhead;
    let max_items = limits.max_items.max(1);
    for (index, &size) in sizes.iter().enumerate() {
        if frame.overhead.saturating_add(size) > limits.max_bytes {
            packing.oversized.push(index);
            continue;
        }
        let added = if current.is_empty() {
            size
        } else {
            size.saturating_add(frame.separator)
        };
        if current.len() >= max_items || bytes.saturating_add(added) > limits.max_bytes {
            packing.batches.push(std::mem::take(&mut current));
            bytes = frame.overhead + size;
        } else {
            bytes += added;
        }
        current.push(index);
    }
    if !current.is_empty() {
        packing.batches.push(current);
    }
    packing
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn message_bytes(sizes: &[usize], batch: &[usize], frame: Frame) -> usize {
        frame.overhead
            + batch.iter().map(|&i| sizes[i]).sum::<usize>()
            + frame.separator * batch.len().saturating_sub(1)
    }

    #[test]
    fn splits_at_the_item_limit() {
        let sizes = vec![10; 2_001];
        let limits = Limits {
            max_items: 1_000,
            max_bytes: usize::MAX,
        };
        let packing = pack(&sizes, limits, Frame::default());
        let lens: Vec<usize> = packing.batches.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![1_000, 1_000, 1]);
    }

    #[test]
    fn an_item_that_exactly_fills_a_message_fits_and_a_byte_more_does_not() {
        let frame = Frame {
            overhead: 10,
            separator: 1,
        };
        let limits = Limits {
            max_items: 10,
            max_bytes: 100,
        };
        let packing = pack(&[90, 91, 45, 44], limits, frame);
        assert_eq!(packing.oversized, vec![1]);
        // 10 + 45 + 1 + 44 = 100: exactly full.
        assert_eq!(packing.batches, vec![vec![0], vec![2, 3]]);
    }

    proptest! {
        #[test]
        fn every_item_lands_once_in_order_within_limits(
            sizes in proptest::collection::vec(0usize..300, 0..200),
            max_items in 1usize..20,
            max_bytes in 50usize..1_000,
            overhead in 0usize..40,
            separator in 0usize..3,
        ) {
            let frame = Frame { overhead, separator };
            let packing = pack(&sizes, Limits { max_items, max_bytes }, frame);
            let mut seen: Vec<usize> = packing.batches.iter().flatten().copied().collect();
            prop_assert!(seen.windows(2).all(|w| w[0] < w[1]), "order kept");
            seen.extend(&packing.oversized);
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..sizes.len()).collect::<Vec<_>>());
            for batch in &packing.batches {
                prop_assert!(!batch.is_empty() && batch.len() <= max_items);
                prop_assert!(message_bytes(&sizes, batch, frame) <= max_bytes);
            }
            for &i in &packing.oversized {
                prop_assert!(overhead + sizes[i] > max_bytes);
            }
            // Greedy: no batch could have taken the next batch's first item.
            for pair in packing.batches.windows(2) {
                let mut grown = pair[0].clone();
                grown.push(pair[1][0]);
                prop_assert!(
                    grown.len() > max_items || message_bytes(&sizes, &grown, frame) > max_bytes
                );
            }
        }
    }
}
