//! Recorded and hand-written Slurm data for the per-job GPU signal, AutoDetect MIG types and odd
//! GRES types: `provider/tests/fixtures/slurm/slurm-web/` (Slurm-web's recorded 24.11 and 25.05
//! clusters, MIT; truth in its README) and `.../mig-node/` (one H100 as seven 1g.10gb instances,
//! from the Slurm GRES guide; truth by hand in its README). Unit tests of the crate rather than
//! `provider/tests/`, so they build without the test harness crate.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use accelfed_schemas::glue::physical_capacity;
use accelfed_schemas::gpu::{GpuCount, Sharing};
use accelfed_schemas::names::SiteName;
use proptest::prelude::*;

use super::{
    Inventory, LostGpus, SlurmConfig, SlurmError, SlurmJob, checked_service, observation,
    parse_nodes, parse_scontrol_text, read_jobs,
};
use crate::config::Config;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/slurm")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn config(gpu_types: &str) -> SlurmConfig {
    let toml = format!(
        "[site]\nname = \"TEST\"\n[[slurm]]\nid = \"hpc\"\n[slurm.gpu_types]\n{gpu_types}\n[slurm.accounts]\n\"vo.atlas\" = \"atlas\"\n"
    );
    Config::parse(&PathBuf::from("test.toml"), &toml)
        .unwrap()
        .slurm
        .remove(0)
}

fn jobs(name: &str) -> Vec<SlurmJob> {
    let mut jobs = Vec::new();
    read_jobs(&fixture(name)[..], &mut |job| jobs.push(job.unwrap())).unwrap();
    jobs
}

#[test]
fn slurm_web_gpu_jobs_the_accounting_lost_are_named_in_one_warning() {
    let site = SiteName::new("TEST").unwrap();
    let config = config("");
    let mut lost = LostGpus::default();
    for name in [
        "25.05-slurmdb-job-gpus-completed.json",
        "25.05-slurmdb-job-gpus-gres.json",
        "25.05-slurmdb-job-gpus-per-task.json",
        "25.05-slurmdb-job-gpus-pending.json",
        "24.11-slurmdb-job-gpus-running.json",
        "24.11-slurmdb-job-gpus-type.json",
    ] {
        for job in jobs(&format!("slurm-web/{name}")) {
            assert!(job.requests_gpus, "{name}: job {}", job.job_id);
            assert_eq!((job.gpus, job.shards), (0, 0), "{name}");
            // What the warning is about: the job is metered as nothing.
            assert_eq!(observation(&config, &site, &job).unwrap(), None);
            lost.note(&job);
        }
    }
    let warning = lost.warning().unwrap();
    assert_eq!(lost.count(), 5, "{warning}");
    assert!(
        warning.contains("(jobs 4747, 4728, 4754, 5978, 5982)"),
        "{warning}"
    );
    assert!(
        !warning.contains("4745"),
        "a pending job never ran: {warning}"
    );
    assert!(
        warning.contains("AccountingStorageTRES=gres/gpu"),
        "{warning}"
    );
}

#[test]
fn recorded_jobs_with_gpu_tres_are_not_named() {
    let mut lost = LostGpus::default();
    let mut gpu_jobs = 0;
    // Job 109's unreadable TRES is skipped (tests/slurm_fixtures/); the rest are read.
    read_jobs(&fixture("v0.0.40/sacct.json")[..], &mut |job| {
        if let Ok(mut job) = job {
            gpu_jobs += u64::from(job.gpus > 0);
            // A request that names GPUs is no signal when the allocation holds them (the
            // fixture's submit lines are `sbatch train.sh`; CPU jobs keep theirs).
            job.requests_gpus |= job.gpus > 0;
            lost.note(&job);
        }
    })
    .unwrap();
    assert!(gpu_jobs > 0);
    assert_eq!(lost.warning(), None);
}

/// sacct prints an array task `<array job>_<task>` and a heterogeneous component
/// `<leader>+<offset>`, but each has its own job id (JobIDRaw), the one its cgroup `job_<id>` names
/// and a node agent reports: the observation carries it beside the printed resource.
#[test]
fn array_tasks_and_het_components_carry_their_own_job_id() {
    let site = SiteName::new("TEST").unwrap();
    let config = config("");
    let (mut seen, mut raw) = (Vec::new(), Vec::new());
    read_jobs(&fixture("v0.0.40/sacct.json")[..], &mut |job| {
        let Ok(job) = job else { return };
        raw.push((job.job_id.clone(), job.raw_id.clone()));
        if let Ok(Some(observed)) = observation(&config, &site, &job) {
            seen.push((observed.resource.to_string(), observed.agent_id));
        }
    })
    .unwrap();
    for expected in [
        ("gpucluster:100_3", Some("104")),
        ("gpucluster:105+0", Some("105")),
        ("gpucluster:101", None),
    ] {
        let expected = (expected.0.to_owned(), expected.1.map(str::to_owned));
        assert!(seen.contains(&expected), "{expected:?} in {seen:?}");
    }
    // The second component holds no GPU, but is its own job all the same.
    assert!(
        raw.contains(&("105+1".to_owned(), "106".to_owned())),
        "{raw:?}"
    );
    // Slurm 22.05 (recorded): the array's last task keeps the array's own id, 3_1 is job 3.
    let raw: Vec<_> = jobs("v0.0.38/sacct.json")
        .into_iter()
        .map(|job| (job.job_id, job.raw_id))
        .collect();
    assert!(raw.contains(&("3_1".to_owned(), "3".to_owned())), "{raw:?}");
    assert!(raw.contains(&("3_0".to_owned(), "4".to_owned())), "{raw:?}");
}

fn mig_inventory() -> Inventory {
    let nodes = parse_nodes(&fixture("mig-node/nodes.json")).unwrap();
    assert!(nodes.problems.is_empty(), "{:?}", nodes.problems);
    let partitions =
        parse_scontrol_text("PartitionName=mig Nodes=mig01 State=UP MaxTime=UNLIMITED");
    Inventory::new(nodes, partitions)
}

fn near(count: GpuCount, expected: f64) -> bool {
    (count.get() - expected).abs() < 1e-9
}

#[test]
fn a_mig_node_publishes_one_physical_gpu_in_seven_slots() {
    let mapped = checked_service(&config(""), &mig_inventory()).unwrap();
    let manager = &mapped.service.manager;
    let [accelerator] = manager.accelerators.as_slice() else {
        panic!("{:?}", manager.accelerators);
    };
    assert!(matches!(
        accelerator.gpu.sharing,
        Sharing::Mig {
            slices: 1,
            of: 7,
            ..
        }
    ));
    // AutoDetect's name of the slices names their GPU: published under its canonical model.
    assert_eq!(accelerator.gpu.model.as_str(), "NVIDIA H100 80GB HBM3");
    assert!(near(accelerator.capacity.total, 7.0));
    assert!(near(accelerator.capacity.used, 2.0));
    let physical = accelerator.physical();
    assert!(near(physical.total, 1.0), "{physical:?}");
    assert!(near(physical.used, 2.0 / 7.0), "{physical:?}");
    assert!(near(physical.free, 5.0 / 7.0), "{physical:?}");

    let [environment] = manager.environments.as_slice() else {
        panic!("{:?}", manager.environments);
    };
    let [slices] = environment.accelerators.as_slice() else {
        panic!("{:?}", environment.accelerators);
    };
    assert!(near(slices.capacity.total, 7.0));
    let physical = physical_capacity(slices.capacity, &slices.gpu.sharing);
    assert!(near(physical.total, 1.0), "{physical:?}");

    let [share] = mapped.service.shares.as_slice() else {
        panic!("{:?}", mapped.service.shares);
    };
    let [shared] = share.accelerators.as_slice() else {
        panic!("{:?}", share.accelerators);
    };
    assert!(near(shared.capacity.total, 7.0));
    assert!(near(shared.physical().total, 1.0));
}

#[test]
fn a_month_on_seven_instances_is_one_gpu_month() {
    let site = SiteName::new("TEST").unwrap();
    let config = config("");
    let jobs = jobs("mig-node/sacct.json");
    assert_eq!(jobs.len(), 7);
    let mut gpu_hours = 0.0;
    for job in &jobs {
        let observed = observation(&config, &site, job).unwrap().unwrap();
        assert!(near(observed.count, 1.0 / 7.0), "{}", observed.count);
        assert_eq!(observed.model.as_str(), "NVIDIA H100 80GB HBM3");
        let hours = (observed.end.unwrap() - observed.start).num_seconds() as f64 / 3600.0;
        assert_eq!(hours, 720.0);
        gpu_hours += observed.count.get() * hours;
    }
    // One physical GPU for the 720 h of November, never more.
    assert!((gpu_hours - 720.0).abs() < 1e-6, "{gpu_hours}");
}

/// A one-node inventory whose node's GRES is `gres` (and `tres` its TRES).
fn node_document(gres: &str, tres: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "meta": {"plugin": {"data_parser": "data_parser/v0.0.40"}, "slurm": {"release": "23.11.4"}},
        "nodes": [{"name": "odd01", "state": ["IDLE"], "partitions": ["gpu"], "cpus": 8,
                   "alloc_cpus": 0, "gres": gres, "gres_used": "", "tres": tres}],
    }))
    .unwrap()
}

/// What `accelfed provide` does with a node: read it, then map the cluster.
fn provide(gres: &str, tres: &str) -> Result<usize, String> {
    let nodes = parse_nodes(&node_document(gres, tres)).map_err(|err| err.to_string())?;
    if let Some(problem) = nodes.problems.first() {
        return Err(problem.to_string());
    }
    let partitions = parse_scontrol_text("PartitionName=gpu Nodes=odd01 State=UP");
    checked_service(&config(""), &Inventory::new(nodes, partitions))
        .map(|mapped| mapped.service.manager.accelerators.len())
        .map_err(|err| err.to_string())
}

#[test]
fn a_type_that_is_only_a_sharing_suffix_fails_the_backend_naming_the_node() {
    let err = provide("gpu:-SHARED:1", "").unwrap_err();
    assert!(err.contains("node odd01"), "{err}");
    assert!(err.contains("\"-SHARED\""), "{err}");
    assert!(err.contains("slurm.conf"), "{err}");
    let long = format!("gpu:{}:1", "a".repeat(256));
    let err = provide(&long, "").unwrap_err();
    assert!(err.contains("(256 characters)"), "{err}");
    // The same types reached through the node's TRES (an unreadable GRES beside it).
    let err = provide("gpu:a100:x", "cpu=8,gres/gpu=2,gres/gpu:-SHARED=2").unwrap_err();
    assert!(err.contains("\"-SHARED\""), "{err}");
    match checked_service(&config(""), &{
        let nodes = parse_nodes(&node_document("gpu:-SHARED:1", "")).unwrap();
        Inventory::new(nodes, Vec::new())
    }) {
        Err(SlurmError::GpuType { node, .. }) => assert_eq!(node, "odd01"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn odd_gres_types_are_failures_or_gpus_never_panics() {
    let cases = [
        "gpu:-SHARED:1".to_owned(),
        "gpu::1".to_owned(),
        "gpu:::".to_owned(),
        ":::".to_owned(),
        "gpu:_:1".to_owned(),
        format!("gpu:{}:1", "x".repeat(300)),
        "gpu:a\u{7}b:1".to_owned(),
        "gpu:a\nb:1".to_owned(),
        "gpu:a100:18446744073709551615,gpu:a100:18446744073709551615".to_owned(),
        "gpu:a100:99999999999999999999999".to_owned(),
        "gpu:nvidia_a100_3g.20gb:7".to_owned(),
    ];
    for gres in &cases {
        let _ = provide(gres, "");
        let _ = provide(
            gres,
            &format!("gres/gpu=1,gres/{}=1", gres.replace(':', "/")),
        );
    }
    assert_eq!(provide("gpu:nvidia_a100_3g.20gb:7", ""), Ok(1));
    assert!(provide("gpu:a\u{7}b:1", "").is_err());
    assert!(provide("gpu:a100:99999999999999999999999", "").is_err());
}

proptest! {
    #[test]
    fn any_gres_type_is_a_failure_or_gpus(
        kind in prop_oneof![
            "\\PC{0,300}",
            "[-_.a-z0-9]{0,300}",
            "-SHARED|-MIG-1g.10gb|[:]{1,5}|[\\x00-\\x1f]{1,4}",
        ],
        count in prop_oneof![Just(u64::MAX), 0u64..16],
    ) {
        let _ = provide(&format!("gpu:{kind}:{count}"), "");
        let _ = provide(&format!("gpu:{kind}:{count},gpu:{kind}:{count}"), "");
        let _ = provide("", &format!("cpu=1,gres/gpu={count},gres/gpu:{kind}={count}"));
    }
}
