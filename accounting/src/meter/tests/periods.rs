//! Periods of one resource: each counts, different counts keep their GPU-seconds, and overlapping
//! ones are capped at the month while breaking the capacity bound.

use super::*;
use crate::meter::{meter, parse_manual};

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

#[test]
fn stopped_pieces_of_a_vm_give_activeduration_0_alone_and_none_beside_unknown_running_time() {
    // A VM (the OpenStack meter's pieces, `provider/src/openstack/states.rs`): running with
    // unknown activity until 10 May, stopped (utilisation 0) until 1 June, then stopped all June.
    let running = held(
        "vm-9",
        Sharing::Whole,
        1.0,
        at(2026, 5, 1, 0),
        at(2026, 5, 10, 0),
    );
    let mut stopped = held(
        "vm-9",
        Sharing::Whole,
        1.0,
        at(2026, 5, 10, 0),
        at(2026, 6, 30, 0),
    );
    stopped.utilisation = Some(0.0);
    let metered = meter(&[running, stopped], now(), &Installed::default());
    assert!(metered.refused.is_empty());
    let by_month: Vec<_> = metered
        .records
        .iter()
        .map(|r| (r.month.month(), r.available_duration, r.active_duration))
        .collect();
    assert_eq!(
        by_month,
        vec![
            // May: 31 days held, of which 22 known idle, 9 of unknown activity: not known.
            (5, 31 * 86_400, None),
            // June: known idle throughout.
            (6, 29 * 86_400, Some(0)),
        ]
    );
    // The known-idle part of May is on the record beside the unknown ActiveDuration; June says
    // its idle time through ActiveDuration 0.
    let idle: Vec<_> = metered.records.iter().map(|r| r.idle_duration).collect();
    assert_eq!(idle, [Some(22 * 86_400), None]);
}

#[test]
fn a_vm_active_stopped_and_active_again_carries_its_stopped_hours_as_known_idle() {
    // By hand: a server on a 2-GPU flavor ACTIVE 10 h, SHUTOFF 5 h, ACTIVE 3 h (the OpenStack
    // meter's pieces: running of unknown activity, stopped with utilisation 0): one record,
    // AvailableDuration 18 h x 2 GPUs, no ActiveDuration, 5 h x 2 GPUs known idle.
    let pieces = [
        (at(2026, 5, 4, 0), at(2026, 5, 4, 10), None),
        (at(2026, 5, 4, 10), at(2026, 5, 4, 15), Some(0.0)),
        (at(2026, 5, 4, 15), at(2026, 5, 4, 18), None),
    ]
    .map(|(start, end, utilisation)| {
        let mut piece = held("vm-5", Sharing::Whole, 2.0, start, end);
        piece.utilisation = utilisation;
        piece
    });
    let metered = meter(&pieces, now(), &Installed::default());
    assert!(metered.refused.is_empty());
    let [record] = metered.records.as_slice() else {
        panic!("one record, got {:?}", metered.records);
    };
    assert_eq!(
        (
            record.count.get(),
            record.available_duration,
            record.active_duration,
            record.idle_duration
        ),
        (2.0, 18 * 3600, None, Some(5 * 3600))
    );
    // A manual file says the same with one line per stretch, `"utilisation": 0` for the stopped
    // one.
    let site = SiteName::new("SITE-A").unwrap();
    let line = |start: &str, end: &str, utilisation: &str| {
        format!(
            "{{\"resource\": \"vm-5\", \"model\": \"A100\", \"count\": 2, \"start\": \"{start}\", \"end\": \"{end}\"{utilisation}}}\n"
        )
    };
    let text = line("2026-05-04T00:00:00Z", "2026-05-04T10:00:00Z", "")
        + &line(
            "2026-05-04T10:00:00Z",
            "2026-05-04T15:00:00Z",
            ", \"utilisation\": 0",
        )
        + &line("2026-05-04T15:00:00Z", "2026-05-04T18:00:00Z", "");
    let observations = parse_manual("usage.jsonl", &text, &site).observations;
    let metered = meter(&observations, now(), &Installed::default());
    let [manual] = metered.records.as_slice() else {
        panic!("one record, got {:?}", metered.records);
    };
    assert_eq!(
        (
            manual.available_duration,
            manual.active_duration,
            manual.idle_duration
        ),
        (18 * 3600, None, Some(5 * 3600))
    );
}
