//! Any physically possible layout of GPUs and periods meters within the installed GPUs, with
//! every GPU-second kept (a property test).

use chrono::Duration;
use proptest::prelude::*;

use super::*;
use crate::meter::meter;

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
