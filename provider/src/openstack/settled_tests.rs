use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName};
use accelfed_schemas::usage::{RecordType, Source};

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    parse_time(text).unwrap()
}

fn observation(start: &str, end: Option<&str>) -> Observation {
    Observation {
        site: SiteName::new("TEST-SITE").unwrap(),
        record_type: RecordType::Cloud,
        resource: LocalId::new("13bb87f7-8a6e-48e6-910b-8cc4215af078").unwrap(),
        model: GpuModel::new("Tesla V100-PCIE-16GB").unwrap(),
        accelerator_type: AcceleratorType::Gpu,
        count: GpuCount::whole(1),
        sharing: Sharing::Whole,
        vo: None,
        fqan: None,
        user: None,
        source: Source::Openstack,
        cores: None,
        benchmark: None,
        utilisation: None,
        energy_wh: None,
        agent_id: None,
        start: at(start),
        end: end.map(at),
    }
}

#[test]
fn the_window_month_starts_at_midnight_utc_on_the_first() {
    assert_eq!(
        month_start(at("2026-11-17T13:45:12Z")),
        at("2026-11-01T00:00:00Z")
    );
    assert_eq!(
        month_start(at("2026-10-01T00:00:00Z")),
        at("2026-10-01T00:00:00Z")
    );
}

#[test]
fn only_running_or_idle_servers_unchanged_since_before_the_month_are_settled() {
    let from = at("2026-11-01T00:00:00Z");
    // Nova's `updated` as the recorded listings write it (whole seconds, `Z`).
    let before = Some("2026-10-31T23:59:59Z");
    assert_eq!(settled("ACTIVE", before, from), Some(State::Running));
    for idle in ["SHUTOFF", "SUSPENDED", "PAUSED", "SHELVED"] {
        assert_eq!(settled(idle, before, from), Some(State::Idle), "{idle}");
    }
    // Changed at or after the month's start: its actions say what happened.
    assert_eq!(settled("ACTIVE", Some("2026-11-01T00:00:00Z"), from), None);
    assert_eq!(settled("SHUTOFF", Some("2026-11-22T03:30:08Z"), from), None);
    // Statuses that are neither running nor idle, or a time that cannot be read, are asked.
    for other in [
        "SHELVED_OFFLOADED",
        "VERIFY_RESIZE",
        "RESCUE",
        "ERROR",
        "BUILD",
        "DELETED",
    ] {
        assert_eq!(settled(other, before, from), None, "{other}");
    }
    assert_eq!(settled("ACTIVE", None, from), None);
    assert_eq!(settled("ACTIVE", Some("yesterday"), from), None);
}

#[test]
fn a_settled_server_is_metered_from_the_month_on_in_its_state() {
    let from = at("2026-11-01T00:00:00Z");
    let running = observation("2026-03-04T10:00:00Z", None);
    let piece = clip(&running, from, State::Running).unwrap();
    assert_eq!(
        (piece.start, piece.end, piece.utilisation),
        (from, None, None)
    );
    let idle = clip(&running, from, State::Idle).unwrap();
    assert_eq!((idle.start, idle.utilisation), (from, Some(0.0)));
    // Started within the month: nothing to cut.
    let young = observation("2026-11-02T08:00:00Z", None);
    assert_eq!(
        clip(&young, from, State::Running).unwrap().start,
        at("2026-11-02T08:00:00Z")
    );
    // Ended before the month: nothing left.
    let gone = observation("2026-03-04T10:00:00Z", Some("2026-10-15T00:00:00Z"));
    assert_eq!(clip(&gone, from, State::Running), None);
}
