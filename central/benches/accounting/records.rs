//! The benchmark's records: the generated ones of `accelfed_tests::bench_records` (shared with
//! `accounting/benches/repository.rs`), with the ingest options and the months as the repository
//! takes them.

use accelfed_accounting::repository::{IngestOptions, Period};
pub use accelfed_tests::bench_records::{SITES, batch, record, site};

/// Checks as the service makes them, at a fixed "now" after every generated month.
pub fn options(max_batch: usize) -> IngestOptions {
    IngestOptions {
        max_batch,
        now: accelfed_tests::bench_records::now(),
    }
}

/// The months the records fall in.
pub fn periods() -> Vec<Period> {
    accelfed_tests::bench_records::MONTHS
        .iter()
        .map(|&(year, month)| Period::new(year, month).expect("a valid month"))
        .collect()
}
