//! The report API benchmark's records: a federation shaped like the one issue 31 was tried with,
//! larger. 30 VOs of uneven size (the largest about 60 times the smallest), 40 users in each, 8
//! sites with two GPU models each (5 models in all), 36 months (2023-11 to 2026-10). A user works
//! at a home site for four records of five and at a second site for the fifth, on the two models
//! of each, so a user's records spread over a few (site, model) pairs, as real users' do, rather
//! than over all of them.
//!
//! Deterministic: the same `n` gives the same records, so a kept database can be reused.

use accelfed_accounting::repository::Period;
use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{Fqan, LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Month, RecordType, Source, UsageRecord};
use accelfed_tests::bench_records::mix;

pub const VOS: usize = 30;
pub const USERS_PER_VO: usize = 40;
pub const SITES: usize = 8;
pub const MONTHS: i32 = 36;
/// 2023-11 as a period index (year x 12 + month - 1).
const FIRST_MONTH: i32 = 2023 * 12 + 10;
const MODELS: [&str; 5] = [
    "NVIDIA A100-SXM4-80GB",
    "NVIDIA H100 80GB HBM3",
    "NVIDIA L40S",
    "NVIDIA H200",
    "AMD Instinct MI250X",
];
const COUNTS: [f64; 5] = [1.0, 2.0, 4.0, 8.0, 0.5];
/// Changes every record (and the kept databases' names) when the shape above changes.
pub const SHAPE: &str = "v2";

pub fn vo_name(vo: usize) -> String {
    format!("vo{vo:02}.example.org")
}

pub fn site_name(site: usize) -> String {
    format!("SITE-{site:02}")
}

/// The months the records fall in.
pub fn periods() -> Vec<Period> {
    (0..MONTHS)
        .filter_map(|m| Period::from_index(FIRST_MONTH + m))
        .collect()
}

/// Record number `i`.
pub fn record(i: u64) -> UsageRecord {
    let r = mix(i ^ 0x005e_ed31);
    // A skewed VO: the square of a uniform number favours the low indexes.
    let u = (r & 0xffff) as f64 / 65_536.0;
    let vo = ((u * u) * VOS as f64) as usize;
    let user = (r >> 16) as usize % USERS_PER_VO;
    let placed = mix((vo * USERS_PER_VO + user) as u64) as usize;
    let home = placed % SITES;
    let site = if (r >> 24).is_multiple_of(5) {
        (home + 1 + (placed >> 8) % (SITES - 1)) % SITES
    } else {
        home
    };
    let model = MODELS[(site + (r >> 36) as usize % 2) % MODELS.len()];
    let index = FIRST_MONTH + ((r >> 40) % MONTHS as u64) as i32;
    let month =
        Month::new(index.div_euclid(12), index.rem_euclid(12) as u32 + 1).expect("a valid month");
    let available = 1 + (mix(r ^ 1) % (month.seconds() - 1));
    let first_seen = month.start();
    let vo = vo_name(vo);
    UsageRecord {
        month,
        record_type: if r.is_multiple_of(3) {
            RecordType::Job
        } else {
            RecordType::Cloud
        },
        associated_record: LocalId::new(format!("{:016x}-{:016x}", mix(r), mix(i)))
            .expect("a valid resource id"),
        global_user_name: Some(Text::new(format!("user{user:02}@{vo}")).expect("a name")),
        fqan: Some(Fqan::new(format!("/{vo}")).expect("a valid FQAN")),
        site: SiteName::new(site_name(site)).expect("a valid site name"),
        count: GpuCount::new(COUNTS[(r >> 48) as usize % COUNTS.len()]).expect("a valid count"),
        cores: Some(8),
        active_duration: (!(r >> 52).is_multiple_of(5)).then(|| mix(r ^ 2) % (available + 1)),
        available_duration: available,
        benchmark: None,
        accelerator_type: AcceleratorType::Gpu,
        model: GpuModel::new(model).expect("a valid model"),
        sharing: Sharing::Whole,
        installed: None,
        idle_duration: None,
        energy_wh: None,
        source: Source::Openstack,
        vo: Some(VoName::new(vo).expect("a valid VO")),
        first_seen,
        last_seen: first_seen + chrono::Duration::seconds(available as i64),
    }
}

/// The `n` records in batches of 100,000, generated on another thread while the database loads.
pub fn generated(n: usize) -> impl Iterator<Item = Vec<UsageRecord>> {
    const SIZE: usize = 100_000;
    let (send, receive) = std::sync::mpsc::sync_channel(2);
    std::thread::spawn(move || {
        for b in 0..n.div_ceil(SIZE) {
            let end = ((b + 1) * SIZE).min(n);
            let records = ((b * SIZE)..end).map(|i| record(i as u64)).collect();
            if send.send(records).is_err() {
                return;
            }
        }
    });
    receive.into_iter()
}
