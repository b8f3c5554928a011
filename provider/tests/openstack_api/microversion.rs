//! The compute microversion: Nova's listings are asked for at 2.93 at once with its version
//! document, and asked again at the version the document offers only when Nova answers them
//! `406 Not Acceptable` (as a real Nova does for a microversion it does not speak: "Version 2.99
//! is not supported by the API. Minimum is 2.1 and maximum is 2.93.", checked against the test
//! cloud of `scripts/openstack/cloud.sh`).

use accelfed_provider::openstack::{OpenstackError, observe};
use accelfed_schemas::names::SiteName;

use super::faults::{at, fake};
use super::server::{Behaviour, Fault};
use super::setup;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_listings_are_asked_once_and_again_only_after_a_406() {
    let site = SiteName::new("TEST-SITE").unwrap();
    let (since, now) = (at("2026-11-01T00:00:00Z"), at("2026-11-22T06:00:00Z"));

    let cloud = fake(Behaviour::default()).await;
    let plain = setup(&cloud, 5);
    assert_eq!(
        observe(&plain.config, &site, since, now)
            .await
            .unwrap()
            .len(),
        5
    );
    assert_eq!(cloud.count("/flavors/detail"), 1);
    assert_eq!(
        cloud.count("/servers/detail"),
        2,
        "live and deleted, once each"
    );

    // Nova refusing the microversion of the flavor listing: both listings are asked again at the
    // version the document offers, and a second refusal fails the cloud, naming it.
    let cloud = fake(Behaviour {
        faults: vec![("/flavors/detail".into(), Fault::Status(406))],
        ..Behaviour::default()
    })
    .await;
    let refused = setup(&cloud, 5);
    let err = observe(&refused.config, &site, since, now)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OpenstackError::Http { status: 406, .. }),
        "{err}"
    );
    assert_eq!(cloud.count("/flavors/detail"), 2, "asked again");
    assert_eq!(
        cloud.count("/servers/detail"),
        4,
        "both listings asked again"
    );
}
