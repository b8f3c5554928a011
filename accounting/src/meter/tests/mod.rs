//! The meter as a whole ([`super::meter`]), by concern: periods merged and capped
//! (`periods`), identities split per VO, role and sharing and retracted when they go
//! (`identities`), every sharing mode counted in physical GPUs within one GPU-month (`sharing`),
//! and any physically possible layout within the installed GPUs (`layouts`, a property test).
//! The observations they meter are made here.

use chrono::{DateTime, TimeZone, Utc};

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Month, Observation, RecordType, Source, UsageRecord};

use super::Installed;

mod identities;
mod layouts;
mod periods;
mod sharing;

const A100: &str = "NVIDIA A100-SXM4-40GB";

fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
}

fn now() -> DateTime<Utc> {
    at(2026, 7, 1, 0)
}

/// `units` units of `sharing` (physical count = units x share) held by `resource` over `[start, end)`.
pub(super) fn held(
    resource: &str,
    sharing: Sharing,
    units: f64,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> Observation {
    Observation {
        site: SiteName::new("SITE-A").unwrap(),
        record_type: RecordType::Cloud,
        resource: LocalId::new(resource).unwrap(),
        model: GpuModel::new(A100).unwrap(),
        accelerator_type: AcceleratorType::Gpu,
        count: GpuCount::new(units * sharing.physical_share()).unwrap(),
        sharing,
        vo: Some(VoName::new("atlas").unwrap()),
        fqan: None,
        user: None,
        source: Source::Kubernetes,
        cores: None,
        benchmark: None,
        utilisation: None,
        energy_wh: None,
        agent_id: None,
        start,
        end: Some(end),
    }
}

fn installed(gpus: f64) -> Installed {
    let mut installed = Installed::default();
    installed.add(&GpuModel::new(A100).unwrap(), gpus);
    installed
}

fn gpu_hours(records: &[UsageRecord]) -> f64 {
    records.iter().map(UsageRecord::gpu_hours).sum()
}

fn mig(profile: &str, slices: u32) -> Sharing {
    Sharing::Mig {
        profile: Text::new(profile).unwrap(),
        slices,
        of: 7,
    }
}
