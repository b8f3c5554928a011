use chrono::Duration;

use accelfed_schemas::gpu::{AcceleratorType, GpuCount, GpuModel, Sharing};
use accelfed_schemas::names::{LocalId, SiteName};
use accelfed_schemas::usage::{RecordType, Source};

use super::*;

fn at(text: &str) -> DateTime<Utc> {
    parse_time(text).unwrap()
}

fn change(text: &str, state: State) -> Change {
    Change {
        at: at(text),
        state,
    }
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
fn nova_actions_read_oldest_first_and_only_power_changes_count() {
    let body = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/openstack/nova-instance-actions-13bb87f7-8a6e-48e6-910b-8cc4215af078.json"
    ))
    .unwrap();
    assert_eq!(
        read(&body).unwrap(),
        vec![
            change("2026-11-22T04:00:00Z", State::Idle),
            change("2026-11-22T05:00:00Z", State::Running),
            change("2026-11-22T05:30:00Z", State::Idle),
            change("2026-11-22T05:45:00Z", State::Running),
        ]
    );
    let bad = br#"{"instanceActions":[{"action":"stop","start_time":"soon"}]}"#;
    assert!(
        read(bad)
            .unwrap_err()
            .contains(r#"action "stop": start_time "soon""#)
    );
    assert!(read(b"{}").is_err());
}

#[test]
fn a_stopped_stretch_is_an_idle_piece_and_running_stays_unknown() {
    let obs = observation("2026-11-22T03:30:01Z", None);
    let changes = [
        change("2026-11-22T04:00:00Z", State::Idle),
        change("2026-11-22T05:00:00Z", State::Running),
    ];
    let pieces = split(&obs, &changes);
    let shape: Vec<_> = pieces
        .iter()
        .map(|p| (p.start, p.end, p.utilisation))
        .collect();
    assert_eq!(
        shape,
        vec![
            (obs.start, Some(at("2026-11-22T04:00:00Z")), None),
            (
                at("2026-11-22T04:00:00Z"),
                Some(at("2026-11-22T05:00:00Z")),
                Some(0.0)
            ),
            (at("2026-11-22T05:00:00Z"), None, None),
        ]
    );
}

#[test]
fn offloaded_time_holds_no_gpu_and_changes_outside_the_hold_are_clipped() {
    let obs = observation("2026-11-01T00:00:00Z", Some("2026-11-05T00:00:00Z"));
    let changes = [
        // Before the hold: ignored as a piece of no length.
        change("2026-10-30T00:00:00Z", State::Running),
        change("2026-11-02T00:00:00Z", State::Idle),
        change("2026-11-02T00:10:00Z", State::Offloaded),
        change("2026-11-03T00:00:00Z", State::Running),
        // After the hold ended.
        change("2026-11-06T00:00:00Z", State::Idle),
    ];
    let pieces = split(&obs, &changes);
    let seconds = |p: &Observation| (p.end.unwrap() - p.start).num_seconds();
    assert_eq!(pieces.len(), 3, "{pieces:#?}");
    assert_eq!(seconds(&pieces[0]), 86_400);
    assert_eq!(pieces[1].utilisation, Some(0.0));
    assert_eq!(seconds(&pieces[1]), 600);
    assert_eq!(pieces[2].start, at("2026-11-03T00:00:00Z"));
    assert_eq!(pieces[2].end, obs.end);
    let held: i64 = pieces.iter().map(seconds).sum();
    assert_eq!(
        held,
        (Duration::days(4) - Duration::days(1) + Duration::minutes(10)).num_seconds()
    );
}

#[test]
fn no_changes_leave_the_observation_whole_and_a_status_without_its_action_is_reported() {
    let obs = observation("2026-11-22T03:30:01Z", None);
    assert_eq!(split(&obs, &[]), vec![obs.clone()]);
    assert!(check("vm-1", "ACTIVE", &[]).is_none());
    assert!(
        check(
            "vm-1",
            "SHUTOFF",
            &[change("2026-11-22T04:00:00Z", State::Idle)]
        )
        .is_none()
    );
    let warning = check("vm-1", "SHUTOFF", &[]).unwrap();
    assert!(
        warning.contains("vm-1 is SHUTOFF") && warning.contains("stays unknown"),
        "{warning}"
    );
    assert!(is_idle_status("shelved") && !is_idle_status("SHELVED_OFFLOADED"));
}
