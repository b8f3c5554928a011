//! The tests themselves, written once against `Repository`: `ingest.rs` what is stored and
//! refused, `summaries.rs` what is read back (reports, sync counts, reopening, concurrency,
//! shares), `rollup.rs` the user rollup. The helpers below are the workload both use.

mod contacts;
mod energy;
mod ingest;
mod known_idle;
mod rollup;
mod summaries;

pub use contacts::site_contacts_are_kept_and_held_lists_replaced;
pub use energy::energy_is_stored_summed_and_replaced_exactly;
pub use known_idle::known_idle_time_is_summed_replaced_and_migrated;
pub use rollup::the_user_rollup_is_kept_on_ingest_and_rebuilt_by_the_migration;

pub use ingest::{
    bad_records_are_refused_with_reasons, changed_resend_replaces_and_moves_totals,
    identical_resend_changes_nothing, ingest_stores_and_summarises,
    mixed_batch_of_new_and_stored_records, other_sites_records_are_refused_per_record,
    oversized_batch_stores_up_to_the_limit,
};
pub use summaries::{
    a_sites_records_page_by_page, batches_sent_at_once_count_each_record_once,
    reopening_keeps_data_and_schema, report_formats_render_repository_data,
    reports_by_each_dimension_with_filters, reports_by_user_add_up_to_the_summaries,
    shares_sum_exactly_and_capacity_is_checked, sync_counts_per_month,
};

use accelfed_accounting::repository::{
    Dimension, IngestOptions, Repository, SummaryFilter, SummaryQuery, SummaryRow, Totals,
};
use accelfed_accounting::wire::{Outcome, Rejection, Submission};
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::{Month, UsageRecord, sample};
use chrono::{TimeZone, Utc};

const SITE: &str = "CESNET-MCC";

fn site() -> SiteName {
    SiteName::new(SITE).unwrap()
}

fn options() -> IngestOptions {
    IngestOptions {
        max_batch: 1000,
        now: Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap(),
    }
}

/// A record of `site` for `vo` on `model` in 2026-`month`: `gpus` GPUs for `hours` hours, half
/// of them active.
fn record(resource: &str, vo: &str, model: &str, month: u32, gpus: f64, hours: u64) -> UsageRecord {
    let mut r = sample::record(resource);
    r.vo = Some(VoName::new(vo).unwrap());
    r.model = GpuModel::new(model).unwrap();
    r.month = Month::new(2026, month).unwrap();
    r.first_seen = Utc.with_ymd_and_hms(2026, month, 1, 0, 0, 0).unwrap();
    r.last_seen = r.first_seen + chrono::Duration::hours(hours as i64);
    r.count = GpuCount::new(gpus).unwrap();
    r.available_duration = hours * 3600;
    r.active_duration = Some(hours * 1800);
    r
}

/// Six records over two VOs, two models and three months.
fn workload() -> Vec<UsageRecord> {
    vec![
        record("vm-1", "atlas", "A100", 1, 2.0, 100),
        record("vm-2", "atlas", "A100", 2, 1.0, 50),
        record("vm-3", "atlas", "H100", 2, 4.0, 10),
        record("vm-4", "cms", "A100", 1, 0.5, 200),
        record("vm-5", "cms", "H100", 3, 1.0, 300),
        record("vm-6", "cms", "H100", 3, 1.0, 1),
    ]
}

async fn ingest(repo: &Repository, records: Vec<UsageRecord>) -> Vec<Outcome> {
    let batch = records.into_iter().map(Submission::from).collect();
    repo.ingest(&site(), batch, options())
        .await
        .unwrap()
        .outcomes
}

async fn by(repo: &Repository, group_by: Vec<Dimension>, filter: SummaryFilter) -> Vec<SummaryRow> {
    repo.summaries(SummaryQuery { group_by, filter })
        .await
        .unwrap()
}

async fn total(repo: &Repository) -> Totals {
    let rows = by(repo, vec![], SummaryFilter::default()).await;
    rows.first().map(|r| r.totals).unwrap_or_default()
}

/// (key, GPU-hours, records) per group, for compact assertions.
fn hours(rows: &[SummaryRow], dimension: Dimension) -> Vec<(String, f64, i64)> {
    rows.iter()
        .map(|r| {
            (
                r.key.get(dimension).unwrap(),
                r.totals.gpu_hours(),
                r.totals.records,
            )
        })
        .collect()
}

fn reason(outcome: &Outcome) -> &Rejection {
    match outcome {
        Outcome::Rejected { reason } => reason,
        other => panic!("expected a rejection, got {other:?}"),
    }
}
