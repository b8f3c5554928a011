//! Every sharing mode of one physical GPU, counted in physical GPUs.

use super::*;
use crate::meter::meter;

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
