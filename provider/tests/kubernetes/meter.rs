//! The Kubernetes meter through the real client: every started GPU pod observed (with DCGM's
//! utilisation where Prometheus has it), only pods that held GPUs in the window, the site meter's
//! report of a failing cluster, and a pod deleted between two runs (fixtures' README, "The second
//! run").

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::KubeClient;
use accelfed_schemas::names::SiteName;

use super::server::Behaviour;
use super::{assert_close, at, config, hours_per_vo, setup, site_toml, uid_of, uid_of_in, whole};

#[tokio::test]
async fn meter_observes_every_started_gpu_pod_with_dcgm_utilisation() {
    let setup = setup(Behaviour::default()).await;
    let observations = meter_with_dcgm(&setup).await;
    assert_dcgm_truth(&observations);
    let requests = &setup.api.seen.lock().unwrap().requests;
    let queries: Vec<&String> = requests
        .iter()
        .filter(|r| r.starts_with("GET /api/v1/query?"))
        .collect();
    // Three metrics under both naming schemes.
    assert_eq!(queries.len(), 6, "{requests:?}");
    assert!(
        queries
            .iter()
            .all(|q| q.contains(&format!("time={}", at(14).timestamp()))),
        "{queries:?}"
    );
    // The energy counter's increase over the pods' whole holds, at least the metering window
    // (2024-04-30 00:00 to 05-01 14:00, 38 h, which holds the earliest start, the MIG pod's).
    let energy: Vec<_> = queries.iter().filter(|q| q.contains("increase")).collect();
    assert_eq!(energy.len(), 2, "{queries:?}");
    assert!(
        energy
            .iter()
            .all(|q| q.contains(&format!("{}s", 38 * 3600))),
        "{energy:?}"
    );
}

/// dcgm-exporter 4.9's names and units (ratios, joules) give the same readings as the old ones.
#[tokio::test]
async fn meter_reads_dcgm_exporter_4_9_names_and_units() {
    let setup = setup(Behaviour {
        dcgm: Some("renamed".to_owned()),
        ..Behaviour::default()
    })
    .await;
    let observations = meter_with_dcgm(&setup).await;
    assert_dcgm_truth(&observations);
}

/// The meter's observations at 14:00 with Prometheus configured.
async fn meter_with_dcgm(setup: &super::Setup) -> Vec<accelfed_schemas::usage::Observation> {
    std::fs::write(setup.dir.path().join("ca.pem"), &setup.api.ca_pem).unwrap();
    let text = site_toml(setup.dir.path(), "", Some(&setup.api.url));
    let config = Config::parse(Path::new("site.toml"), &text).unwrap();
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let now = at(14);
    let since = Utc.with_ymd_and_hms(2024, 4, 30, 0, 0, 0).unwrap();
    accelfed_provider::kubernetes::observe(&config.kubernetes[0], &site, since, now)
        .await
        .unwrap()
}

/// The fixtures' truth (README): GPU-hours per VO, DCGM utilisation and energy per pod.
fn assert_dcgm_truth(observations: &[accelfed_schemas::usage::Observation]) {
    for observation in observations {
        assert!(observation.resource.as_str().starts_with("gpu-cluster/"));
        assert_eq!(
            observation.record_type,
            accelfed_schemas::usage::RecordType::Job
        );
    }
    // 7 started GPU pods; pending, unscheduled, fractional and status-less ones are not metered.
    assert_eq!(observations.len(), 7, "{observations:#?}");
    let hours = hours_per_vo(observations, at(14));
    // In physical GPUs: atlas: 2x4h + 1x3h + 3/4x1h (the notebook's 3 of a T4's 4 replicas) +
    // 2x1h (failed ROCm); cms: 3/7x16h (3 1g.10gb slices of an A100) + 1x1.5h; scratch: one
    // A10-12Q vGPU (half an A10) x 2h.
    assert_close(hours["atlas"], 13.75);
    assert_close(hours["cms"], 48.0 / 7.0 + 1.5);
    assert_eq!(hours["-"], 1.0);
    let train = observations
        .iter()
        .find(|o| o.count == whole(2) && o.model.as_str() == "NVIDIA A100-SXM4-80GB")
        .unwrap();
    assert_eq!(
        train.resource.as_str(),
        format!("gpu-cluster/atlas-prod/{}", uid_of("train-a100-1"))
    );
    // Two devices at 70% and 30%.
    assert_eq!(train.utilisation, Some(0.5));
    let mig = observations
        .iter()
        .find(|o| {
            o.sharing.mode() == "mig"
                && o.end.is_none()
                && o.vo.as_ref().is_some_and(|v| v.as_str() == "cms")
        })
        .unwrap();
    // Under MIG, DCGM_FI_PROF_GR_ENGINE_ACTIVE (a ratio).
    assert_eq!(mig.utilisation, Some(0.25));
    // DCGM's energy counter: 250 W + 125 W for 4 h on train's A100s; the MIG GPU's one counter
    // (read through three instances) for its 16 h; nothing for pods without energy series.
    assert_close(train.energy_wh.unwrap(), 1500.0);
    assert_close(mig.energy_wh.unwrap(), 1440.0);
    let notebook = observations
        .iter()
        .find(|o| o.resource.as_str().ends_with(&uid_of("notebook-ts-1")))
        .unwrap();
    assert_close(notebook.energy_wh.unwrap(), 70.0);
    assert_eq!(notebook.utilisation, None);
    assert_eq!(mig.fqan.as_ref().map(|f| f.as_str()), Some("/cms"));
    assert_eq!(mig.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert_close(mig.count.get(), 3.0 / 7.0);
    assert_eq!(
        mig.sharing,
        accelfed_schemas::gpu::Sharing::Mig {
            profile: accelfed_schemas::names::Text::new("1g.10gb").unwrap(),
            slices: 1,
            of: 7
        }
    );
}

#[tokio::test]
async fn the_meter_keeps_only_pods_that_held_gpus_in_its_window() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let inventory = super::inventory(&config).await;
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    // [13:00, 14:00): the failed ROCm pod (ended 07:00) and eval-done-1 (ended 09:30) are out.
    let metered = accelfed_provider::kubernetes::observe_inventory(
        &config.kubernetes[0],
        &site,
        &inventory,
        None,
        at(13),
        at(14),
    );
    let hours = hours_per_vo(&metered.observations, at(14));
    assert_close(hours["atlas"], 2.0 * 4.0 + 3.0 + 0.75);
    assert_close(hours["cms"], 48.0 / 7.0);
    assert_eq!(hours["-"], 1.0);
    assert!(metered.observations.iter().all(|o| o.utilisation.is_none()));
    // [09:00, 09:15): only mig-small-1 (since 04-30 22:00) and eval-done-1 (08:00 - 09:30; its
    // end after `now` is clamped to `now` by the accounting meter) held GPUs; train-a100-1 (10:00)
    // and the rest start later, the ROCm pod ended at 07:00.
    let t = Utc.with_ymd_and_hms(2024, 5, 1, 9, 15, 0).unwrap();
    let early = accelfed_provider::kubernetes::observe_inventory(
        &config.kubernetes[0],
        &site,
        &inventory,
        None,
        at(9),
        t,
    );
    let mut names: Vec<&str> = early
        .observations
        .iter()
        .map(|o| o.resource.as_str())
        .collect();
    names.sort();
    let mut expected: Vec<String> = ["mig-small-1", "eval-done-1"]
        .iter()
        .map(|pod| format!("gpu-cluster/cms/{}", uid_of(pod)))
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert!(
        metered
            .warnings
            .iter()
            .any(|w| w == "pod scratch/vgpu-scratch-1: namespace has no VO; metered without one"),
        "{:?}",
        metered.warnings
    );
}

#[tokio::test]
async fn the_site_meter_runs_the_kubernetes_meter_and_reports_its_failure() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let observed = accelfed_provider::observe(&config, at(0), at(14)).await;
    assert!(observed.failures.is_empty(), "{:?}", observed.failures);
    assert_close(
        hours_per_vo(&observed.observations, at(14))["cms"],
        48.0 / 7.0 + 1.5,
    );
    // The file's current context has a stale token: refused, named as `provide` names it.
    let text = site_toml(setup.dir.path(), "", None).replace("context = \"fixture\"\n", "");
    let stale = Config::parse(Path::new("site.toml"), &text).unwrap();
    let observed = accelfed_provider::observe(&stale, at(0), at(14)).await;
    assert!(observed.observations.is_empty());
    assert_eq!(observed.failures.len(), 1);
    assert_eq!(observed.failures[0].provider, "kubernetes[0]");
    let message = &observed.failures[0].message;
    assert!(
        message.contains("GET /api/v1/") && message.contains("401"),
        "{message}"
    );
    assert!(!message.contains("expired-token"), "{message}");
}

/// A pod's observed `[start, end)`.
type Span = (DateTime<Utc>, Option<DateTime<Utc>>);

#[tokio::test]
async fn a_pod_deleted_between_two_runs_keeps_its_last_sighting() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let kubernetes = &config.kubernetes[0];
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let key = |o: &accelfed_schemas::usage::Observation| o.resource.as_str().to_owned();

    // Run 1 at 14:00 sees train-a100-1 running: open, metered up to 14:00 (2 x 4 h).
    let first = accelfed_provider::kubernetes::observe(kubernetes, &site, at(13), at(14))
        .await
        .unwrap();
    let train = format!("gpu-cluster/atlas-prod/{}", uid_of("train-a100-1"));
    let seen = first.iter().find(|o| key(o) == train).unwrap();
    assert_eq!((seen.start, seen.end), (at(10), None));

    // Run 2 at 15:00: train-a100-1 was deleted in between and is not listed any more.
    setup.api.serve_folder("later");
    let second = accelfed_provider::kubernetes::observe(kubernetes, &site, at(14), at(15))
        .await
        .unwrap();
    let by_pod: BTreeMap<String, Span> = second
        .iter()
        .map(|o| {
            let pod = o.resource.as_str().rsplit('/').next().unwrap().to_owned();
            (pod, (o.start, o.end))
        })
        .collect();
    let uid = |name: &str| uid_of_in("later", name);
    // Nothing for train-a100-1: its records stay as run 1 metered them (closed at 14:00, an
    // undercount of at most one metering interval).
    assert!(!second.iter().any(|o| key(o) == train), "{second:#?}");
    let time = |text: &str| DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    let expected: BTreeMap<String, Span> = [
        // Still running.
        (uid("mig-small-1"), (time("2024-04-30T22:00:00Z"), None)),
        // Being deleted: ends at its deletionTimestamp.
        (
            uid("train-cordoned-1"),
            (at(11), Some(time("2024-05-01T14:50:30Z"))),
        ),
        // Finished: its last container, the sidecar, stopped at 14:30:01.
        (
            uid("notebook-ts-1"),
            (at(13), Some(time("2024-05-01T14:30:01Z"))),
        ),
        // startTime "yesterday" is reported; the container's start is used.
        (uid("late-start-1"), (time("2024-05-01T14:40:00Z"), None)),
    ]
    .into_iter()
    .collect();
    // rocm-failed-1 ended at 07:00, before the window; vgpu-scratch-1 failed without any finish
    // time: it keeps what run 1 metered.
    assert_eq!(by_pod, expected);

    let inventory = KubeClient::new(kubernetes)
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
    let metered = accelfed_provider::kubernetes::observe_inventory(
        kubernetes,
        &site,
        &inventory,
        None,
        at(14),
        at(15),
    );
    for expected in [
        "pod cms/late-start-1: status.startTime \"yesterday\" is not an RFC 3339 time; ignored",
        "pod scratch/vgpu-scratch-1: finished without a finish or deletion time; closed at its last sighting",
    ] {
        assert!(
            metered.warnings.iter().any(|w| w == expected),
            "missing {expected:?} in {:#?}",
            metered.warnings
        );
    }
}
