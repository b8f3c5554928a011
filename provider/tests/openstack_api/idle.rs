//! Idle time from Nova's instance actions, through the real client: every GPU server that held
//! GPUs in the window is asked for its actions (the CPU-only one is not), and a server stopped and
//! paused is metered as idle pieces for exactly those stretches, its running time unknown
//! (`nova-instance-actions-13bb87f7-....json`, written in Nova's documented shape for the recorded
//! atlas-gpu-1).

use accelfed_provider::openstack::observe;
use accelfed_schemas::names::SiteName;

use super::faults::{at, fake};
use super::server::Behaviour;
use super::setup;

const ATLAS_GPU: &str = "13bb87f7-8a6e-48e6-910b-8cc4215af078";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_and_paused_server_is_idle_for_exactly_those_stretches() {
    let cloud = fake(Behaviour {
        instance_actions: true,
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let site = SiteName::new("TEST-SITE").unwrap();
    let (since, now) = (at("2026-11-01T00:00:00Z"), at("2026-11-22T06:00:00Z"));
    let observations = observe(&setup.config, &site, since, now).await.unwrap();

    // The five GPU servers are asked, the CPU-only one is not.
    assert_eq!(cloud.count("/os-instance-actions"), 5);
    assert_eq!(
        cloud.count("dfa24322-457d-483e-bdee-93b831696f08/os-instance-actions"),
        0
    );

    let mut pieces: Vec<_> = observations
        .iter()
        .filter(|o| o.resource.as_str() == ATLAS_GPU)
        .map(|o| (o.start, o.end, o.utilisation))
        .collect();
    pieces.sort_by_key(|p| p.0);
    // Created 03:30:01; stopped 04:00-05:00; paused 05:30-05:45; a reboot changes nothing.
    assert_eq!(
        pieces,
        vec![
            (
                at("2026-11-22T03:30:01Z"),
                Some(at("2026-11-22T04:00:00Z")),
                None
            ),
            (
                at("2026-11-22T04:00:00Z"),
                Some(at("2026-11-22T05:00:00Z")),
                Some(0.0)
            ),
            (
                at("2026-11-22T05:00:00Z"),
                Some(at("2026-11-22T05:30:00Z")),
                None
            ),
            (
                at("2026-11-22T05:30:00Z"),
                Some(at("2026-11-22T05:45:00Z")),
                Some(0.0)
            ),
            (at("2026-11-22T05:45:00Z"), None, None),
        ]
    );
    // Held the whole time: the pieces add up to the server's interval.
    let held: i64 = pieces
        .iter()
        .map(|(start, end, _)| (end.unwrap_or(now) - *start).num_seconds())
        .sum();
    assert_eq!(held, (now - at("2026-11-22T03:30:01Z")).num_seconds());
    // The other GPU servers never changed state: one observation each, activity unknown.
    let others: Vec<_> = observations
        .iter()
        .filter(|o| o.resource.as_str() != ATLAS_GPU)
        .collect();
    assert_eq!(others.len(), 4);
    assert!(others.iter().all(|o| o.utilisation.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_actions_leave_the_server_whole_and_the_meter_running() {
    let cloud = fake(Behaviour {
        instance_actions: true,
        faults: vec![(
            format!("{ATLAS_GPU}/os-instance-actions"),
            super::server::Fault::Status(500),
        )],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let site = SiteName::new("TEST-SITE").unwrap();
    let observations = observe(
        &setup.config,
        &site,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    )
    .await
    .unwrap();
    assert_eq!(observations.len(), 5);
    let atlas = observations
        .iter()
        .find(|o| o.resource.as_str() == ATLAS_GPU)
        .unwrap();
    assert_eq!((atlas.end, atlas.utilisation), (None, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_from_actions_false_asks_nova_nothing_more() {
    let cloud = fake(Behaviour {
        instance_actions: true,
        ..Behaviour::default()
    })
    .await;
    let mut setup = setup(&cloud, 5);
    setup.config.idle_from_actions = false;
    let site = SiteName::new("TEST-SITE").unwrap();
    let observations = observe(
        &setup.config,
        &site,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    )
    .await
    .unwrap();
    assert_eq!(cloud.count("/os-instance-actions"), 0);
    assert_eq!(observations.len(), 5);
    assert!(observations.iter().all(|o| o.utilisation.is_none()));
}

/// Servers unchanged since before the window's month (the recorded listing's `updated`, 22
/// November, against a December window) are not asked: Nova's `updated` says their state has not
/// changed since, and their status says which it is. Each is metered from the month's start on,
/// otherwise exactly as a read without actions meters it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_settled_before_the_window_month_are_not_asked() {
    let cloud = fake(Behaviour {
        instance_actions: true,
        ..Behaviour::default()
    })
    .await;
    let mut setup = setup(&cloud, 5);
    let site = SiteName::new("TEST-SITE").unwrap();
    let (since, now) = (at("2026-12-05T00:00:00Z"), at("2026-12-10T00:00:00Z"));
    let month = at("2026-12-01T00:00:00Z");
    let mut settled = observe(&setup.config, &site, since, now).await.unwrap();
    assert_eq!(cloud.count("/os-instance-actions"), 0);

    setup.config.idle_from_actions = false;
    let mut whole = observe(&setup.config, &site, since, now).await.unwrap();
    assert_eq!(settled.len(), 5);
    assert_eq!(whole.len(), 5);
    for observation in &mut whole {
        assert!(observation.start < month);
        observation.start = month;
    }
    settled.sort_by(|a, b| a.resource.cmp(&b.resource));
    whole.sort_by(|a, b| a.resource.cmp(&b.resource));
    assert_eq!(settled, whole);
}
