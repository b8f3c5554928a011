//! A valid record for tests here and in other crates (behind the `test-support` feature).

use chrono::{TimeZone, Utc};

use super::{Month, RecordType, Source, UsageRecord};
use crate::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use crate::names::{Fqan, LocalId, SiteName, Text, VoName};

/// A VM with one A100 for ten days of January 2026; tests change the fields they care about.
///
/// # Panics
/// Never: every literal below is valid.
#[allow(clippy::unwrap_used)]
pub fn record(resource: &str) -> UsageRecord {
    let first_seen = Utc.with_ymd_and_hms(2026, 1, 5, 0, 0, 0).unwrap();
    UsageRecord {
        month: Month::new(2026, 1).unwrap(),
        record_type: RecordType::Cloud,
        associated_record: LocalId::new(resource).unwrap(),
        global_user_name: Some(Text::new("alice@egi.eu").unwrap()),
        fqan: Some(Fqan::new("/vo.example.org").unwrap()),
        site: SiteName::new("CESNET-MCC").unwrap(),
        count: GpuCount::whole(1),
        cores: Some(8),
        active_duration: Some(3_600),
        available_duration: 10 * 86_400,
        idle_duration: None,
        energy_wh: None,
        benchmark: None,
        accelerator_type: AcceleratorType::Gpu,
        model: GpuModel::new("NVIDIA A100-SXM4-80GB").unwrap(),
        sharing: Sharing::Whole,
        installed: None,
        source: Source::Openstack,
        vo: Some(VoName::new("vo.example.org").unwrap()),
        first_seen,
        last_seen: first_seen + chrono::Duration::days(10),
    }
}

/// `record` moved to `month`: its seen times keep their offsets from the month's start, so the
/// record stays inside its month (usage never leaves it).
pub fn in_month(mut record: UsageRecord, month: Month) -> UsageRecord {
    let offset = record.first_seen - record.month.start();
    let length = record.last_seen - record.first_seen;
    record.month = month;
    record.first_seen = month.start() + offset;
    record.last_seen = record.first_seen + length;
    record
}
