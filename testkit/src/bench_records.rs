//! Generated usage records for the repository benchmarks (`accounting/benches/repository.rs` and
//! `central/benches/accounting/`; feature `bench-support`): deterministic, so every run and both
//! databases see the same records, with random resource ids (hence random record ids, as real
//! SHA-256 ids are), 20 VOs, 4 models, 5 GPU counts and the 12 months of 2025.
//!
//! Only plain data and the schemas' types cross this module's boundary: the accounting crate's own
//! benchmark links a second copy of `accelfed-accounting` through this crate, so the ingest options
//! and periods are built by each benchmark from [`now`] and [`MONTHS`].

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel};
use accelfed_schemas::names::{Fqan, LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Month, RecordType, Source, UsageRecord};
use chrono::{DateTime, TimeZone, Utc};

pub const SITES: usize = 20;
pub const VOS: usize = 20;
const MODELS: [&str; 4] = [
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA H100 80GB HBM3",
    "NVIDIA L40S",
    "AMD Instinct MI250X",
];
const COUNTS: [f64; 5] = [1.0, 2.0, 4.0, 8.0, 0.5];

/// splitmix64: a fast, deterministic stream.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub fn site(i: usize) -> SiteName {
    SiteName::new(format!("SITE-{i:02}")).expect("a valid site name")
}

/// Record number `i` of `site`; `variant` changes its durations (a re-sent, changed record).
pub fn record(site: &SiteName, i: u64, variant: u64) -> UsageRecord {
    let r = mix(i);
    let month = Month::new(2025, 1 + (r % 12) as u32).expect("a valid month");
    let available = 1 + (mix(r ^ variant) % (month.seconds() - 1));
    let first_seen = month.start();
    let vo = format!("vo{:02}.example.org", (r >> 8) as usize % VOS);
    UsageRecord {
        month,
        record_type: if r.is_multiple_of(3) {
            RecordType::Job
        } else {
            RecordType::Cloud
        },
        associated_record: LocalId::new(format!("{:016x}-{:016x}", mix(r), mix(r + 1)))
            .expect("a valid resource id"),
        global_user_name: Some(Text::new(format!("user{}@egi.eu", r % 1000)).expect("a name")),
        fqan: Some(Fqan::new(format!("/{vo}")).expect("a valid FQAN")),
        site: site.clone(),
        count: GpuCount::new(COUNTS[(r >> 16) as usize % COUNTS.len()]).expect("a valid count"),
        cores: Some(8),
        active_duration: (!r.is_multiple_of(5)).then_some(available / 2),
        available_duration: available,
        idle_duration: None,
        energy_wh: None,
        benchmark: None,
        accelerator_type: AcceleratorType::Gpu,
        model: GpuModel::new(MODELS[(r >> 24) as usize % MODELS.len()]).expect("a valid model"),
        sharing: accelfed_schemas::gpu::Sharing::Whole,
        installed: None,
        source: Source::Openstack,
        vo: Some(VoName::new(vo).expect("a valid VO")),
        first_seen,
        last_seen: first_seen + chrono::Duration::seconds(available as i64),
    }
}

/// Batch `b` of `size` records, all of one site (as a site ships them), sites taking turns.
pub fn batch(b: usize, size: usize, variant: u64) -> Vec<UsageRecord> {
    let site = site(b % SITES);
    (0..size)
        .map(|k| record(&site, (b * size + k) as u64, variant))
        .collect()
}

/// The "now" the service's checks are made at: after every generated month.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0)
        .single()
        .expect("a valid instant")
}

/// The months the records fall in, as (year, month).
pub const MONTHS: [(i32, u32); 12] = [
    (2025, 1),
    (2025, 2),
    (2025, 3),
    (2025, 4),
    (2025, 5),
    (2025, 6),
    (2025, 7),
    (2025, 8),
    (2025, 9),
    (2025, 10),
    (2025, 11),
    (2025, 12),
];
