//! The meter as a whole ([`super::meter`]): periods merged, identities split per VO and sharing,
//! every sharing mode counted in physical GPUs, and usage bounded by the installed GPUs.

use chrono::{DateTime, Duration, TimeZone, Utc};
use proptest::prelude::*;

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName, Text, VoName};
use accelfed_schemas::usage::{Month, Observation, RecordType, Source, UsageRecord};

use super::{Installed, meter, parse_manual};

const A100: &str = "NVIDIA A100-SXM4-40GB";

fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
}

fn now() -> DateTime<Utc> {
    at(2026, 7, 1, 0)
}

/// `units` units of `sharing` (physical count = units x share) held by `resource` over `[start, end)`.
fn held(
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

#[test]
fn two_periods_of_one_vm_in_may_both_count() {
    // The example: 2 GPUs for 72 hours in May, in two periods: 144 GPU-hours, not 48.
    let site = SiteName::new("SITE-A").unwrap();
    let text = "\
{\"resource\": \"vm-7\", \"model\": \"A100\", \"count\": 2, \"vo\": \"atlas\", \"start\": \"2026-05-04T00:00:00Z\", \"end\": \"2026-05-05T00:00:00Z\", \"utilisation\": 0.5}
{\"resource\": \"vm-7\", \"model\": \"A100\", \"count\": 2, \"vo\": \"atlas\", \"start\": \"2026-05-20T00:00:00Z\", \"end\": \"2026-05-22T00:00:00Z\", \"utilisation\": 0.25}
";
    let observations = parse_manual("usage.jsonl", text, &site).observations;
    let metered = meter(&observations, now(), &Installed::default());
    assert!(metered.refused.is_empty() && metered.capped.is_empty());
    assert_eq!(
        metered.records.len(),
        1,
        "one record for one VM in one month"
    );
    let record = &metered.records[0];
    assert_eq!(record.available_duration, 72 * 3600);
    assert_eq!(record.count.get(), 2.0);
    assert_eq!(record.gpu_hours(), 144.0);
    // 12 h of the first day and 12 h of the two later days were busy.
    assert_eq!(record.active_duration, Some(24 * 3600));
    assert_eq!(record.first_seen, at(2026, 5, 4, 0));
    assert_eq!(record.last_seen, at(2026, 5, 22, 0));
    assert_eq!(record.associated_record.as_str(), "vm-7", "plain id kept");
}

#[test]
fn periods_of_different_counts_keep_their_gpu_seconds_exactly() {
    let observations = [
        held(
            "vm-1",
            Sharing::Fraction,
            0.5,
            at(2026, 3, 1, 0),
            at(2026, 3, 11, 0),
        ),
        held(
            "vm-1",
            Sharing::Fraction,
            0.25,
            at(2026, 3, 12, 0),
            at(2026, 3, 13, 7),
        ),
        held(
            "vm-1",
            Sharing::Fraction,
            0.3,
            at(2026, 3, 20, 0),
            at(2026, 3, 20, 1),
        ),
    ];
    let metered = meter(&observations, now(), &installed(1.0));
    let record = &metered.records[0];
    let expected = 0.5 * 240.0 * 3600.0 + 0.25 * 31.0 * 3600.0 + 0.3 * 3600.0;
    assert_eq!(record.available_duration, (240 + 31 + 1) * 3600);
    assert!(
        (record.gpu_seconds() - expected).abs() < 1e-6,
        "{} != {expected}",
        record.gpu_seconds()
    );
    assert!(record.validate(now()).is_ok());
}

#[test]
fn a_node_lent_to_atlas_then_cms_gives_both_vos_their_hours() {
    let mut atlas = held(
        "node-9",
        Sharing::Whole,
        4.0,
        at(2026, 4, 1, 0),
        at(2026, 4, 16, 0),
    );
    atlas.vo = Some(VoName::new("atlas").unwrap());
    let mut cms = atlas.clone();
    cms.vo = Some(VoName::new("cms").unwrap());
    cms.start = at(2026, 4, 16, 0);
    cms.end = Some(at(2026, 5, 1, 0));
    let metered = meter(&[atlas, cms], now(), &installed(4.0));
    let mut found: Vec<(String, Option<String>, f64)> = metered
        .records
        .iter()
        .map(|r| {
            (
                r.associated_record.to_string(),
                r.vo.as_ref().map(ToString::to_string),
                r.gpu_hours(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        vec![
            ("node-9@atlas".to_owned(), Some("atlas".to_owned()), 1440.0),
            ("node-9@cms".to_owned(), Some("cms".to_owned()), 1440.0),
        ]
    );
    assert_ne!(metered.records[0].id(), metered.records[1].id());
    assert!(metered.overruns.is_empty(), "4 GPUs for a whole month fit");
}

#[test]
fn one_vo_with_two_roles_and_a_resized_vm_are_split_too() {
    let base = held(
        "vm-3",
        Sharing::Whole,
        1.0,
        at(2026, 4, 1, 0),
        at(2026, 4, 2, 0),
    );
    let mut production = base.clone();
    production.fqan = Some(accelfed_schemas::names::Fqan::new("/atlas/Role=production").unwrap());
    production.start = at(2026, 4, 3, 0);
    production.end = Some(at(2026, 4, 4, 0));
    let mut vgpu = base.clone();
    vgpu.sharing = Sharing::Vgpu {
        vgpu_type: Text::new("GRID A100-10C").unwrap(),
        per_gpu: 4,
    };
    vgpu.count = GpuCount::new(0.25).unwrap();
    vgpu.start = at(2026, 4, 5, 0);
    vgpu.end = Some(at(2026, 4, 6, 0));
    let metered = meter(&[base, production, vgpu], now(), &installed(1.0));
    let mut ids: Vec<String> = metered
        .records
        .iter()
        .map(|r| r.associated_record.to_string())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            "vm-3@/atlas/Role=production#whole",
            "vm-3@atlas#vgpu:GRID A100-10C",
            "vm-3@atlas#whole",
        ]
    );
    assert!((gpu_hours(&metered.records) - (24.0 + 24.0 + 6.0)).abs() < 1e-9);
}

#[test]
fn overlapping_periods_are_capped_at_the_month_and_break_the_capacity_bound() {
    // Two lines for the same node and days: 2 x 30 days of April, on a node with 1 GPU.
    let line = held(
        "node-1",
        Sharing::Whole,
        1.0,
        at(2026, 4, 1, 0),
        at(2026, 5, 1, 0),
    );
    let metered = meter(&[line.clone(), line], now(), &installed(1.0));
    assert_eq!(metered.records.len(), 1);
    let record = &metered.records[0];
    assert_eq!(record.available_duration, 30 * 86_400, "capped at April");
    assert_eq!(record.count.get(), 2.0, "GPU-seconds kept");
    assert!(record.validate(now()).is_ok());
    assert_eq!(metered.capped.len(), 1);
    assert_eq!(metered.capped[0].seconds, 60 * 86_400);
    assert_eq!(metered.overruns.len(), 1);
    let overrun = metered.overruns[0].to_string();
    assert!(
        overrun.contains("SITE-A 2026-04") && overrun.contains("node-1"),
        "{overrun}"
    );
    assert_eq!(metered.overruns[0].used_gpu_hours, 1440.0);
    assert_eq!(metered.overruns[0].bound_gpu_hours, 720.0);
}

/// One physical A100 for all of February 2026 (672 h), shared every way the issue names: each
/// layout fills the GPU exactly or partly, and its records add up to the hand-computed GPU-hours,
/// never above 672.
#[test]
fn every_sharing_mode_of_one_gpu_stays_within_one_gpu_month() {
    let (start, end) = (at(2026, 2, 1, 0), at(2026, 3, 1, 0));
    let mid = at(2026, 2, 15, 0);
    let vgpu = Sharing::Vgpu {
        vgpu_type: Text::new("GRID A100-10C").unwrap(),
        per_gpu: 4,
    };
    let layouts: Vec<(&str, Vec<Observation>, f64)> = vec![
        (
            "MIG mixed: 3g + 2g + 2 x 1g",
            vec![
                held("pod-a", mig("3g.20gb", 3), 1.0, start, end),
                held("pod-b", mig("2g.10gb", 2), 1.0, start, end),
                held("pod-c", mig("1g.5gb", 1), 2.0, start, end),
            ],
            672.0,
        ),
        (
            "MIG single: 7 x 1g, three of them half the month",
            (0..7)
                .map(|i| {
                    let stop = if i < 3 { mid } else { end };
                    held(&format!("pod-{i}"), mig("1g.5gb", 1), 1.0, start, stop)
                })
                .collect(),
            4.0 / 7.0 * 672.0 + 3.0 / 7.0 * 336.0,
        ),
        (
            "time-slicing: 8 replicas, one pod holding 2",
            (0..6)
                .map(|i| {
                    held(
                        &format!("pod-{i}"),
                        Sharing::TimeSlicing { replicas: 8 },
                        1.0,
                        start,
                        end,
                    )
                })
                .chain([held(
                    "pod-big",
                    Sharing::TimeSlicing { replicas: 8 },
                    2.0,
                    start,
                    end,
                )])
                .collect(),
            672.0,
        ),
        (
            "MPS: 4 clients, half the month each",
            (0..4)
                .map(|i| {
                    held(
                        &format!("pod-{i}"),
                        Sharing::Mps { replicas: 4 },
                        1.0,
                        start,
                        mid,
                    )
                })
                .collect(),
            336.0,
        ),
        (
            "vGPU: 4 x GRID A100-10C, one VM stopped and started",
            vec![
                held("vm-1", vgpu.clone(), 1.0, start, end),
                held("vm-2", vgpu.clone(), 1.0, start, end),
                held("vm-3", vgpu.clone(), 1.0, start, end),
                held("vm-4", vgpu.clone(), 1.0, start, mid),
                held("vm-4", vgpu.clone(), 1.0, mid, end),
            ],
            672.0,
        ),
        (
            "fractional flavors: 0.5 + 0.25 + 0.25",
            vec![
                held("vm-1", Sharing::Fraction, 0.5, start, end),
                held("vm-2", Sharing::Fraction, 0.25, start, end),
                held("vm-3", Sharing::Fraction, 0.25, start, end),
            ],
            672.0,
        ),
    ];
    for (name, observations, expected) in layouts {
        let metered = meter(&observations, now(), &installed(1.0));
        let hours = gpu_hours(&metered.records);
        assert!(
            (hours - expected).abs() < 1e-6,
            "{name}: {hours} != {expected}"
        );
        assert!(hours <= 672.0 + 1e-6, "{name}: {hours} above one GPU-month");
        assert!(
            metered.overruns.is_empty(),
            "{name}: {:?}",
            metered.overruns
        );
        for record in &metered.records {
            assert_ne!(record.sharing, Sharing::Whole, "{name}: sharing kept");
            assert_eq!(record.model.as_str(), A100, "{name}: the physical model");
            assert_eq!(record.installed.map(GpuCount::get), Some(1.0));
        }
    }
    // The same layouts with every share counted as a whole GPU (the bug of the issue) break it.
    let wrong: Vec<Observation> = (0..8)
        .map(|i| held(&format!("pod-{i}"), Sharing::Whole, 1.0, start, end))
        .collect();
    let metered = meter(&wrong, now(), &installed(1.0));
    assert_eq!(metered.overruns.len(), 1);
    assert_eq!(metered.overruns[0].month, Month::new(2026, 2).unwrap());
}

/// How one physical GPU is carved up: the units it offers, each unit's sharing and how many of the
/// GPU's units it takes.
fn layout() -> impl Strategy<Value = Vec<(Sharing, f64)>> {
    prop_oneof![
        Just(vec![(Sharing::Whole, 1.0)]),
        // A MIG mix: profiles of 1, 2, 3 or 4 slices filling at most 7.
        prop::collection::vec(prop::sample::select(vec![1u32, 2, 3, 4]), 1..7).prop_map(|sizes| {
            let mut used = 0;
            let mut units = Vec::new();
            for size in sizes {
                if used + size <= 7 {
                    used += size;
                    units.push((mig(&format!("{size}g.{}gb", size * 5), size), 1.0));
                }
            }
            units
        }),
        (2u32..=16).prop_map(|r| vec![(Sharing::TimeSlicing { replicas: r }, 1.0); r as usize]),
        (2u32..=8).prop_map(|r| vec![(Sharing::Mps { replicas: r }, 1.0); r as usize]),
        (1u32..=8).prop_map(|p| {
            let vgpu = Sharing::Vgpu {
                vgpu_type: Text::new(format!("GRID A100-{}C", 40 / p)).unwrap(),
                per_gpu: p,
            };
            vec![(vgpu, 1.0); p as usize]
        }),
        // Fractional flavors: halves and quarters adding up to at most one GPU.
        prop::collection::vec(prop::sample::select(vec![0.25f64, 0.5]), 1..5).prop_map(|parts| {
            let mut used = 0.0;
            parts
                .into_iter()
                .filter(|part| {
                    let fits = used + part <= 1.0;
                    if fits {
                        used += part;
                    }
                    fits
                })
                .map(|part| (Sharing::Fraction, part))
                .collect()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any physically possible use of `gpus` GPUs (each carved up some way; each unit held by a
    /// sequence of non-overlapping periods that may share a resource, while different units overlap
    /// freely) meters at most gpus x hours per month, with every GPU-second of every period kept.
    #[test]
    fn possible_layouts_stay_within_installed_capacity(
        gpus in prop::collection::vec(layout(), 1..4),
        periods in prop::collection::vec((0i64..3_000_000, 1i64..3_000_000, 0usize..3), 1..40),
    ) {
        let origin = at(2026, 1, 20, 0);
        let mut observations = Vec::new();
        let mut expected_seconds = 0.0;
        let mut period = periods.iter().cycle();
        for (g, units) in gpus.iter().enumerate() {
            for (u, (sharing, units_held)) in units.iter().enumerate() {
                // Each unit: two or three periods one after the other.
                let mut cursor = origin;
                for p in 0..3 {
                    let &(gap, length, name) = period.next().unwrap();
                    let start = cursor + Duration::seconds(gap);
                    let end = start + Duration::seconds(length);
                    cursor = end;
                    let resource = format!("gpu{g}-unit{u}-r{}", (p + name) % 2);
                    let observation = held(&resource, sharing.clone(), *units_held, start, end);
                    expected_seconds += observation.count.get() * length as f64;
                    observations.push(observation);
                }
            }
        }
        let installed_gpus = gpus.len() as f64;
        let metered = meter(&observations, at(2030, 1, 1, 0), &installed(installed_gpus));
        prop_assert!(metered.refused.is_empty());
        prop_assert!(metered.capped.is_empty(), "{:?}", metered.capped);
        prop_assert!(metered.overruns.is_empty(), "{:?}", metered.overruns);
        let total: f64 = metered.records.iter().map(UsageRecord::gpu_seconds).sum();
        prop_assert!((total - expected_seconds).abs() < 1e-6 * expected_seconds.max(1.0));
        let mut per_month = std::collections::BTreeMap::<Month, f64>::new();
        let mut ids = std::collections::BTreeSet::new();
        for record in &metered.records {
            prop_assert!(record.validate(at(2030, 1, 1, 0)).is_ok());
            prop_assert!(ids.insert(record.id()), "one id per record");
            *per_month.entry(record.month).or_default() += record.gpu_seconds();
        }
        for (month, seconds) in per_month {
            prop_assert!(seconds <= installed_gpus * month.seconds() as f64 * (1.0 + 1e-9));
        }
    }
}

#[test]
fn a_renamed_model_or_a_split_vo_retracts_the_old_identity() {
    use super::retractions;
    let (start, end) = (at(2026, 4, 1, 0), at(2026, 4, 11, 0));
    let before = meter(
        &[held("node-9", Sharing::Whole, 2.0, start, end)],
        now(),
        &Installed::default(),
    );
    // The configuration now names the model differently, and cms used the node too.
    let mut renamed = held("node-9", Sharing::Whole, 2.0, start, end);
    renamed.model = GpuModel::new("NVIDIA A100-SXM4-40GB (renamed)").unwrap();
    let mut cms = renamed.clone();
    cms.vo = Some(VoName::new("cms").unwrap());
    cms.start = at(2026, 4, 20, 0);
    cms.end = Some(at(2026, 4, 21, 0));
    // Another resource the run did not see keeps its records.
    let gone = meter(
        &[held("vm-gone", Sharing::Whole, 1.0, start, end)],
        now(),
        &Installed::default(),
    );
    let after = meter(&[renamed, cms], now(), &Installed::default());
    let stored: Vec<UsageRecord> = before
        .records
        .iter()
        .chain(&gone.records)
        .cloned()
        .collect();
    let retracted = retractions(&stored, &after.records, &after.resources);
    assert_eq!(retracted.len(), 1, "{retracted:?}");
    assert_eq!(
        retracted[0].id(),
        before.records[0].id(),
        "same id: it replaces"
    );
    assert_eq!(retracted[0].gpu_seconds(), 0.0);
    assert!(retracted[0].validate(now()).is_ok());
    let hours: f64 = after
        .records
        .iter()
        .chain(&retracted)
        .map(UsageRecord::gpu_hours)
        .sum();
    assert_eq!(
        hours,
        2.0 * 240.0 + 2.0 * 24.0,
        "the old identity's hours are gone"
    );
    // The next run retracts the same way (the retraction now stored changes nothing).
    let again = retractions(&retracted, &after.records, &after.resources);
    assert_eq!(again, retracted);
    // A run that metered the old identity again keeps it.
    assert!(retractions(&before.records, &before.records, &before.resources).is_empty());
}
