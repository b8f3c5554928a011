//! The OpenStack provider and meter against a real cloud (scripts/openstack/cloud.sh): GPU flavors
//! per VO, total / used / free equal to Placement's own sums, GPU-seconds per VO equal to the
//! servers' lifetimes times their GPUs, a GPU server stopped for a measured interval metered idle
//! for exactly that interval (from its instance actions), and a deleted server's interval closed.
//!
//! Ignored by a plain `cargo test`, as the cloud takes minutes; scripts/test runs it
//! (`--include-ignored`), and so does `cargo test -p accelfed-tests --test openstack_cloud --
//! --include-ignored`. A cloud that cannot start fails it.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use accelfed_provider::openstack::{OpenstackConfig, provide, usage};
use accelfed_schemas::gpu::GpuCount;
use accelfed_tests::openstack::Cloud;
use serde::Deserialize;

fn config(clouds_yaml: &std::path::Path) -> OpenstackConfig {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let source = format!(
        concat!(
            r#"
[[openstack]]
id = "cloud"
cloud = "test"
clouds_file = "{}"
[openstack.vo_map]
vo-cms = "cms"
"#,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../provider/tests/fixtures/openstack/devices.toml"
            ))
        ),
        clouds_yaml.display()
    );
    toml::from_str::<File>(&source).unwrap().openstack.remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a real OpenStack (scripts/openstack/cloud.sh, minutes to start); scripts/test runs it"]
async fn provider_and_meter_against_a_real_openstack() {
    let port: u16 = std::env::var("ACCELFED_OS_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(25100);
    let cloud = tokio::task::spawn_blocking(move || Cloud::start(port))
        .await
        .unwrap()
        .unwrap_or_else(|err| panic!("{err}"));
    let state = cloud.populate(&[]).unwrap_or_else(|err| panic!("{err}"));
    let config = config(&cloud.clouds_yaml());

    let provided = provide(&config)
        .await
        .unwrap_or_else(|err| panic!("{err}\n{}", cloud.logs()));
    assert!(provided.failures.is_empty(), "{:?}", provided.failures);
    let service = &provided.mapped.service;

    // total / used / free equal Placement's sums, per resource class
    let manager: BTreeMap<&str, _> = service
        .manager
        .accelerators
        .iter()
        .map(|a| (a.local_id.as_str(), a.capacity))
        .collect();
    for (kind, class) in [
        ("tesla-v100-pcie-16gb.passthrough", "CUSTOM_PCI_10DE_1DB4"),
        ("nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c", "VGPU"),
    ] {
        let truth = &state["placement"][class];
        let capacity = manager[kind];
        let n = |key: &str| GpuCount::whole(truth[key].as_u64().unwrap() as u32);
        assert_eq!(capacity.total, n("total"), "{kind}");
        assert_eq!(capacity.used, n("used"), "{kind}");
        assert_eq!(
            capacity.free,
            GpuCount::new(
                (truth["total"].as_u64().unwrap()
                    - truth["used"].as_u64().unwrap()
                    - truth["reserved"].as_u64().unwrap()) as f64
            )
            .unwrap(),
            "{kind}"
        );
    }

    // shares: atlas through its project property, cms through the config map
    let shares: BTreeMap<&str, _> = service
        .shares
        .iter()
        .map(|s| (s.access.vo.as_str(), s))
        .collect();
    assert_eq!(shares.keys().copied().collect::<Vec<_>>(), ["atlas", "cms"]);
    // each share's MaxVM is its project's instances quota, as populate.py set it
    assert_eq!(shares["atlas"].max_vm, Some(12));
    assert_eq!(shares["cms"].max_vm, Some(7));
    let flavors_of = |vo: &str| {
        let share = &shares[vo].local_id;
        let mut names: Vec<&str> = service
            .instance_types
            .iter()
            .filter(|t| t.accelerator.is_some() && t.shares.contains(share))
            .map(|t| t.name.as_str())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        flavors_of("atlas"),
        [
            "g1.v100x1",
            "g1.v100x2",
            "legacy.t4",
            "vg1.a100-4c",
            "vg2.a100-4c"
        ]
    );
    assert_eq!(
        flavors_of("cms"),
        ["g1.v100x1", "g1.v100x2", "legacy.t4", "vg1.a100-4c"]
    );
    let image = service
        .images
        .iter()
        .find(|i| i.name.as_str() == "cirros-fake")
        .unwrap();
    assert_eq!(image.cuda_version.as_ref().unwrap().as_str(), "12.2");

    // the meter: GPU-seconds per VO = lifetimes x GPUs
    let now = chrono::Utc::now();
    let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
    let per_vo = |usage: &[accelfed_provider::openstack::VmUsage]| {
        let mut sums: BTreeMap<String, f64> = BTreeMap::new();
        for u in usage {
            *sums.entry(u.vo.as_ref().unwrap().to_string()).or_default() +=
                u.gpu_seconds_within(epoch, now);
        }
        sums
    };
    let projects: BTreeMap<String, String> = state["projects"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, id)| {
            (
                id.as_str().unwrap().to_owned(),
                name.trim_start_matches("vo-").to_owned(),
            )
        })
        .collect();
    let mut expected: BTreeMap<String, f64> = BTreeMap::new();
    for server in state["servers"].as_array().unwrap() {
        let created =
            chrono::DateTime::parse_from_rfc3339(server["created"].as_str().unwrap()).unwrap();
        let seconds = (now - created.with_timezone(&chrono::Utc)).num_seconds() as f64;
        let gpus = server["gpus"].as_f64().unwrap();
        if gpus > 0.0 {
            *expected
                .entry(projects[server["project"].as_str().unwrap()].clone())
                .or_default() += gpus * seconds;
        }
    }
    assert_eq!(per_vo(&provided.mapped.usage), expected);

    // a GPU server stopped for a measured interval: that interval is an idle piece, the rest of
    // its hold running with unknown activity, and the pieces still add up to its whole hold
    let cms_v100 = state["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cms-v100")
        .unwrap();
    let cms_id = cms_v100["id"].as_str().unwrap().to_owned();
    let created: chrono::DateTime<chrono::Utc> =
        chrono::DateTime::parse_from_rfc3339(cms_v100["created"].as_str().unwrap())
            .unwrap()
            .into();
    let before_stop = chrono::Utc::now();
    cloud
        .populate(&["stop", "cms-v100"])
        .unwrap_or_else(|err| panic!("{err}"));
    let stopped = chrono::Utc::now();
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let before_start = chrono::Utc::now();
    cloud
        .populate(&["start", "cms-v100"])
        .unwrap_or_else(|err| panic!("{err}"));
    let started = chrono::Utc::now();
    let metered_at = chrono::Utc::now();
    let site = accelfed_schemas::names::SiteName::new("TEST-SITE").unwrap();
    let observations = accelfed_provider::openstack::observe(
        &config,
        &site,
        metered_at - chrono::Duration::hours(1),
        metered_at,
    )
    .await
    .unwrap_or_else(|err| panic!("{err}\n{}", cloud.logs()));
    let mut pieces: Vec<_> = observations
        .iter()
        .filter(|o| o.resource.as_str() == cms_id)
        .collect();
    pieces.sort_by_key(|o| o.start);
    let idle: Vec<_> = pieces.iter().filter(|o| o.utilisation.is_some()).collect();
    assert_eq!(idle.len(), 1, "{pieces:#?}");
    assert_eq!(idle[0].utilisation, Some(0.0));
    // Nova keeps action times to the second.
    let second = chrono::Duration::seconds(1);
    let (from, to) = (idle[0].start, idle[0].end.unwrap());
    assert!(
        from >= before_stop - second && from <= stopped,
        "{from} {before_stop} {stopped}"
    );
    assert!(
        to >= before_start - second && to <= started,
        "{to} {before_start} {started}"
    );
    assert!((to - from).num_seconds() >= 5, "{from} {to}");
    let held: i64 = pieces
        .iter()
        .map(|o| (o.end.unwrap_or(metered_at) - o.start).num_seconds())
        .sum();
    assert_eq!(held, (metered_at - created).num_seconds());
    // The month's record: its running time's activity is not known, so ActiveDuration stays
    // absent (never a copy of AvailableDuration); AvailableDuration is the whole hold.
    let owned: Vec<_> = pieces.iter().map(|o| (*o).clone()).collect();
    let records = accelfed_accounting::meter::meter(
        &owned,
        metered_at,
        &accelfed_accounting::meter::Installed::default(),
    )
    .records;
    assert!(!records.is_empty());
    assert!(
        records.iter().all(|r| r.active_duration.is_none()),
        "{records:#?}"
    );
    let available: u64 = records.iter().map(|r| r.available_duration).sum();
    assert_eq!(available as i64, (metered_at - created).num_seconds());

    // deleting a server closes its record
    let since = (chrono::Utc::now() - chrono::Duration::hours(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    cloud
        .populate(&["delete", "atlas-vgpu"])
        .unwrap_or_else(|err| panic!("{err}"));
    let metered = usage(&config, &since).await.unwrap();
    assert!(metered.failures.is_empty(), "{:?}", metered.failures);
    let deleted = metered
        .usage
        .iter()
        .find(|u| u.server_name() == "atlas-vgpu")
        .unwrap();
    let end = deleted.end.expect("a deleted server's interval is closed");
    assert!(end >= deleted.start && end <= chrono::Utc::now());
    assert_eq!(deleted.count(), GpuCount::whole(2));
    let after = provide(&config).await.unwrap();
    let vgpu = after
        .mapped
        .service
        .manager
        .accelerators
        .iter()
        .find(|a| a.local_id.as_str() == "nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c")
        .unwrap();
    assert_eq!(vgpu.capacity.used, GpuCount::whole(1));
}
