//! What to send next, as a pure function of the pending records (house-style rule 8): the shipper
//! reads pending records, plans batches here, sends each batch, and acknowledges what the
//! repository confirmed. Tested without a database or a network.

use accelfed_schemas::usage::batch::{self, Frame, Limits, Packing};

use super::store::PendingRecord;

/// Per batch on the wire. `accelfed serve` accepts messages of `ingest.max_batch` x 2 KiB (at
/// least 4 MiB), so a batch of at most `max_batch` records of ordinary size always fits; the byte
/// limit is for records far larger than usual, and leaves a 10,000-record batch (about 3 MB of
/// protobuf) whole, as one transaction at the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShipLimits {
    pub max_records: usize,
    pub max_bytes: usize,
}

impl Default for ShipLimits {
    fn default() -> Self {
        Self {
            max_records: 500,
            max_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Envelope bytes per batch and per record on top of a record's encoding: a record is a
/// length-delimited field (a tag byte and a length of at most 4 bytes for anything under 256 MiB);
/// rounded up.
const BATCH_OVERHEAD: usize = 256;
const RECORD_OVERHEAD: usize = 8;

/// Batches of indexes into `pending`, in order (oldest first), within `limits`; records too large
/// for any batch are listed apart so the shipper can report them instead of stalling on them.
pub fn plan(pending: &[PendingRecord], limits: ShipLimits) -> Packing {
    let sizes: Vec<usize> = pending
        .iter()
        .map(|p| p.bytes() + RECORD_OVERHEAD)
        .collect();
    batch::pack(
        &sizes,
        Limits {
            max_items: limits.max_records,
            max_bytes: limits.max_bytes,
        },
        Frame {
            overhead: BATCH_OVERHEAD,
            separator: 0,
        },
    )
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::usage::sample::record;

    use super::*;

    fn pending(n: usize, bytes: usize) -> Vec<PendingRecord> {
        (0..n)
            .map(|i| {
                let record = record(&format!("vm-{i}"));
                PendingRecord {
                    enqueued: i as i64 + 1,
                    id: record.id(),
                    version: i as i64 + 1,
                    wire: vec![0; bytes].into(),
                }
            })
            .collect()
    }

    #[test]
    fn batches_by_count_in_order() {
        let packing = plan(&pending(1_001, 500), ShipLimits::default());
        let lens: Vec<usize> = packing.batches.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![500, 500, 1]);
        assert_eq!(packing.batches[1][0], 500);
    }

    #[test]
    fn batches_by_bytes_and_sets_aside_the_oversized() {
        let limits = ShipLimits {
            max_records: 100,
            max_bytes: 10_000,
        };
        let mut records = pending(10, 2_000);
        records[3].wire = vec![0; 20_000].into();
        let packing = plan(&records, limits);
        assert_eq!(packing.oversized, vec![3]);
        // (10,000 - 256) / (2,000 + 8) = 4 per batch.
        let lens: Vec<usize> = packing.batches.iter().map(Vec::len).collect();
        assert_eq!(lens, vec![4, 4, 1]);
    }

    #[test]
    fn nothing_pending_nothing_to_send() {
        assert_eq!(plan(&[], ShipLimits::default()), Packing::default());
    }
}
