//! Bad input and faults (issue 6, item 6), each against the fake cloud of `server.rs`: Keystone
//! down or refusing, a token that expires mid-run, 5xx and timeouts from one service, one project's
//! listing failing, malformed flavor extra specs. Each is named (service and URL, flavor or
//! project), nothing crashes, and no count is silently wrong: what cannot be read is left out and
//! said, never guessed. A failure reaches [`accelfed_provider::Gathered::failures`], which is what
//! makes `accelfed provide` exit 1 while it still publishes the rest.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};

use accelfed_provider::gather;
use accelfed_provider::openstack::{OpenstackError, Provided, observe, provide};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::SiteName;

use super::server::{Behaviour, FakeCloud, Fault, PASSWORD, clouds_yaml};
use super::{setup, setup_with, site};

pub(super) const ATLAS: &str = "390d564ccd6c4875a2cd4d698a7bc9d0";

pub(super) fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

/// `(total, used, free)` of each GPU kind of the cloud's manager.
pub(super) fn capacity(provided: &Provided) -> BTreeMap<String, (GpuCount, GpuCount, GpuCount)> {
    provided
        .mapped
        .service
        .manager
        .accelerators
        .iter()
        .map(|a| {
            (
                a.local_id.to_string(),
                (a.capacity.total, a.capacity.used, a.capacity.free),
            )
        })
        .collect()
}

/// Placement's truth in the recorded cloud.
pub(super) fn recorded_capacity() -> BTreeMap<String, (GpuCount, GpuCount, GpuCount)> {
    let n = GpuCount::whole;
    BTreeMap::from([
        (
            "nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c".to_owned(),
            (n(16), n(3), n(13)),
        ),
        (
            "tesla-v100-pcie-16gb.passthrough".to_owned(),
            (n(4), n(3), n(1)),
        ),
    ])
}

pub(super) fn gpu_vms(provided: &Provided) -> (usize, f64) {
    let usage = &provided.mapped.usage;
    (usage.len(), usage.iter().map(|u| u.count().get()).sum())
}

pub(super) async fn fake(behaviour: Behaviour) -> FakeCloud {
    FakeCloud::start(behaviour).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_cloud_reads_like_the_recorded_one() {
    let cloud = fake(Behaviour::default()).await;
    let setup = setup(&cloud, 5);
    let provided = provide(&setup.config).await.unwrap();
    assert!(provided.failures.is_empty(), "{:?}", provided.failures);
    assert!(
        provided.mapped.warnings.is_empty(),
        "{:?}",
        provided.mapped.warnings
    );
    assert_eq!(capacity(&provided), recorded_capacity());
    assert_eq!(gpu_vms(&provided), (5, 6.0));
    let service = &provided.mapped.service;
    assert_eq!(service.shares.len(), 2);
    assert!(service.shares.iter().all(|s| s.max_vm == Some(10)));
    assert_eq!(
        service.images[0].cuda_version.as_ref().unwrap().as_str(),
        "12.2"
    );
    assert_eq!(service.endpoints[0].health_state.as_str(), "ok");
    assert_eq!(cloud.seen.lock().unwrap().tokens, 1);
    // the client asked for the newest microversion it knows
    assert!(cloud.count("GET /compute/v2.1/servers/detail?all_tenants=1&limit=1000") == 1);
    // quotas of the two VO projects only: admin and service are no share
    assert_eq!(cloud.count("/limits?tenant_id="), 2);
    assert_eq!(
        cloud.count("/limits?tenant_id=629a36fae7be4b96be5e5b3d8dee2e91"),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_down_fails_this_cloud_only_and_the_site_still_publishes() {
    // a port nobody listens on
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let setup = setup_with(&clouds_yaml(&base, PASSWORD), 2);

    let err = provide(&setup.config).await.unwrap_err();
    assert!(
        matches!(err, OpenstackError::Auth { retry: true, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("keystone {base}/identity/v3/auth/tokens"))
            && text.contains("cannot connect")
            && text.contains("retry may help"),
        "{text}"
    );

    // the meter writes nothing of this cloud rather than a partial month
    let site_name = SiteName::new("TEST-SITE").unwrap();
    let metered = observe(
        &setup.config,
        &site_name,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    )
    .await;
    assert!(matches!(metered, Err(OpenstackError::Auth { .. })));

    // the site's other services are still published; the failure makes `provide` exit 1
    let gathered = gather(&site(&setup), Utc::now()).await.unwrap();
    assert_eq!(
        gathered.snapshot.services.len(),
        2,
        "the two static services"
    );
    assert_eq!(gathered.failures.len(), 1);
    assert_eq!(
        gathered.failures[0].provider,
        "openstack \"research-cloud\""
    );
    assert!(gathered.failures[0].message.contains("keystone"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keystone_refusing_says_whether_a_retry_can_help() {
    let cloud = fake(Behaviour::default()).await;
    let wrong = setup_with(&cloud.clouds_yaml("not-the-password"), 2);
    let err = provide(&wrong.config).await.unwrap_err();
    assert!(
        matches!(err, OpenstackError::Auth { retry: false, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("HTTP 401"), "{err}");
    assert!(
        !err.to_string().contains("not-the-password"),
        "no secret in messages"
    );

    let failing = fake(Behaviour {
        faults: vec![("/auth/tokens".into(), Fault::Status(503))],
        ..Behaviour::default()
    })
    .await;
    let err = provide(&setup(&failing, 2).config).await.unwrap_err();
    assert!(
        matches!(err, OpenstackError::Auth { retry: true, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("HTTP 503"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_token_is_renewed_once_and_the_run_goes_on() {
    // the first token expires after 6 requests, in the middle of the fan-out
    let cloud = fake(Behaviour {
        expire_token_after: Some(6),
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let provided = provide(&setup.config).await.unwrap();
    assert!(provided.failures.is_empty(), "{:?}", provided.failures);
    assert_eq!(capacity(&provided), recorded_capacity());
    assert_eq!(gpu_vms(&provided), (5, 6.0));
    let seen = cloud.seen.lock().unwrap();
    assert!(seen.unauthorized >= 1, "the token did expire");
    assert_eq!(
        seen.tokens, 2,
        "one re-authentication for all refused requests"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_refused_again_after_renewal_fails_instead_of_looping() {
    let cloud = fake(Behaviour {
        refuse_all_tokens: true,
        ..Behaviour::default()
    })
    .await;
    let err = provide(&setup(&cloud, 5).config).await.unwrap_err();
    assert!(
        matches!(
            err,
            OpenstackError::Http {
                status: 401,
                retry: false,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("nova http://"), "{err}");
    // every request was tried at most twice: once, and once after re-authenticating
    let seen = cloud.seen.lock().unwrap();
    let mut tries: BTreeMap<&str, usize> = BTreeMap::new();
    for request in seen.requests.iter().filter(|r| r.starts_with("GET")) {
        *tries.entry(request).or_default() += 1;
    }
    assert!(tries.values().all(|n| *n <= 2), "{tries:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placement_failing_leaves_capacity_out_and_publishes_the_rest() {
    let cloud = fake(Behaviour {
        faults: vec![(
            "GET /placement/resource_providers".into(),
            Fault::Status(503),
        )],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let provided = provide(&setup.config).await.unwrap();
    assert_eq!(provided.failures.len(), 1, "{:?}", provided.failures);
    let failure = &provided.failures[0];
    assert!(
        failure.message.starts_with(&format!(
            "placement {}/placement/resource_providers: HTTP 503",
            cloud.base
        )) && failure.message.contains("retry may help"),
        "{failure}"
    );
    let service = &provided.mapped.service;
    // no capacity rather than a wrong one; flavors, shares and VMs are still there
    assert!(service.manager.accelerators.is_empty());
    assert_eq!(service.shares.len(), 2);
    assert!(service.shares.iter().all(|s| s.accelerators.is_empty()));
    assert_eq!(
        service
            .instance_types
            .iter()
            .filter(|t| t.accelerator.is_some())
            .count(),
        3
    );
    assert_eq!(gpu_vms(&provided), (5, 6.0));
    assert_eq!(service.endpoints[0].health_state.as_str(), "warning");
    assert!(
        service.endpoints[0]
            .health_state_info
            .as_ref()
            .unwrap()
            .as_str()
            .contains("placement")
    );

    // through the site: the cloud is published and the failure makes the run exit 1
    let gathered = gather(&site(&setup), Utc::now()).await.unwrap();
    assert_eq!(gathered.snapshot.services.len(), 3);
    assert_eq!(gathered.failures.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_meter_reads_only_flavors_projects_and_servers() {
    // Placement, Glance and quotas all down: they describe the service, not its usage, so the
    // meter neither asks Glance and quotas nor fails because of any of them. Placement it asks
    // for the installed GPUs (the capacity bound) and what one vGPU is of a GPU (each physical
    // GPU's VGPU inventory); down, the vGPUs are metered as whole GPUs with a warning and the
    // cloud's usage goes unbounded.
    let down = |path: &str| (path.to_owned(), Fault::Status(503));
    let cloud = fake(Behaviour {
        faults: vec![
            down("/placement"),
            down("/image"),
            down("/limits"),
            down("os-flavor-access"),
        ],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let site_name = SiteName::new("TEST-SITE").unwrap();
    let observations = observe(
        &setup.config,
        &site_name,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    )
    .await
    .unwrap();
    for service in ["/image", "/limits", "os-flavor-access"] {
        assert_eq!(cloud.count(service), 0, "the meter asked {service}");
    }
    assert!(cloud.count("/placement") > 0, "Placement asked");
    assert_eq!(
        cloud.count("changes-since"),
        1,
        "deleted servers are listed"
    );
    assert_eq!(
        cloud.count("deleted=true&changes-since="),
        1,
        "the second server listing asks Nova for the deleted servers alone"
    );

    let provided = provide(&setup.config).await.unwrap();
    assert!(!provided.failures.is_empty(), "the provider does need them");
    assert!(cloud.count("/placement") > 0);
    assert_eq!(gpu_vms(&provided).0, 5);
    assert_eq!(
        observations.len(),
        5,
        "every GPU VM the provider sees is metered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_times_out_is_named_and_the_others_publish() {
    let cloud = fake(Behaviour {
        faults: vec![(
            "GET /image/v2/images".into(),
            Fault::Delay(Duration::from_secs(4)),
        )],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 1);
    let provided = provide(&setup.config).await.unwrap();
    assert_eq!(provided.failures.len(), 1, "{:?}", provided.failures);
    assert!(
        provided.failures[0]
            .message
            .starts_with(&format!("glance {}/image/v2/images", cloud.base))
            && provided.failures[0].message.contains("timed out"),
        "{}",
        provided.failures[0]
    );
    assert!(provided.mapped.service.images.is_empty());
    assert_eq!(capacity(&provided), recorded_capacity());
    assert_eq!(gpu_vms(&provided), (5, 6.0));

    // one slow Placement provider: capacity left out, not summed without it
    let slow = fake(Behaviour {
        faults: vec![(
            "/resource_providers/fc26e546-0ddc-4853-8886-71783573879a/inventories".into(),
            Fault::Delay(Duration::from_secs(4)),
        )],
        ..Behaviour::default()
    })
    .await;
    let provided = provide(&super::setup(&slow, 1).config).await.unwrap();
    assert_eq!(provided.failures.len(), 1, "{:?}", provided.failures);
    assert!(
        provided.failures[0]
            .message
            .contains("fc26e546-0ddc-4853-8886-71783573879a/inventories")
    );
    assert!(provided.mapped.service.manager.accelerators.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nova_failing_fails_the_cloud_and_the_site_still_publishes() {
    let cloud = fake(Behaviour {
        faults: vec![(
            "GET /compute/v2.1/servers/detail".into(),
            Fault::Status(500),
        )],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let err = provide(&setup.config).await.unwrap_err();
    assert!(
        matches!(
            err,
            OpenstackError::Http {
                status: 500,
                retry: true,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("Internal Server Error (injected by the test)")
    );
    let gathered = gather(&site(&setup), Utc::now()).await.unwrap();
    assert_eq!(gathered.snapshot.services.len(), 2);
    assert_eq!(gathered.failures.len(), 1);
    assert!(gathered.failures[0].message.contains("/servers/detail"));
}
