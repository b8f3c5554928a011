//! Jobs metered into observations: names, elapsed time without suspension, GPUs from TRES or GRES
//! (with the warnings that name the setting), MIG slices and shards as shares of a physical GPU.

use super::*;

#[test]
fn jobs_become_observations_named_cluster_colon_job_id() {
    use accelfed_provider::slurm::observation;
    use accelfed_schemas::names::SiteName;
    use accelfed_schemas::usage::{RecordType, Source};

    let (_, jobs, _) = jobs(&fixture("v0.0.40/sacct.json"));
    let config = config();
    let site = SiteName::new("TEST").unwrap();
    let observations: Vec<_> = jobs
        .iter()
        .filter_map(|job| observation(&config, &site, job).unwrap())
        .collect();
    let names: Vec<&str> = observations.iter().map(|o| o.resource.as_str()).collect();
    // 105+1 holds no GPU, 107 never started, 108 is a CPU job.
    assert_eq!(
        names,
        vec![
            "gpucluster:101",
            "gpucluster:102",
            "gpucluster:103",
            "gpucluster:100_3",
            "gpucluster:105+0"
        ]
    );
    let first = &observations[0];
    assert_eq!(
        (first.record_type, first.source),
        (RecordType::Job, Source::Slurm)
    );
    assert_eq!(first.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert_eq!(first.count, GpuCount::whole(2));
    assert_eq!(first.vo.as_ref().unwrap().as_str(), "atlas");
    assert_eq!(first.fqan.as_ref().unwrap().as_str(), "/atlas");
    // gres/gpuutil=150 over 2 GPUs.
    assert_eq!(first.utilisation, Some(0.75));
    assert!(
        observations[2].end.is_none(),
        "running job metered up to now"
    );
    // Untyped job with two configured types: published as "GPU". l40s is not configured, but the
    // model catalogue knows the one product of that family by the name nvidia-smi prints.
    assert_eq!(observations[1].model.as_str(), "GPU");
    assert_eq!(observations[4].model.as_str(), "NVIDIA L40S");
}

#[test]
fn jobs_are_charged_their_elapsed_time_without_suspended_time() {
    use accelfed_provider::slurm::observation;
    use accelfed_schemas::names::SiteName;

    // job 101 ran 3600 s wall-clock of which 600 s suspended; 103 still runs, suspended 100 s
    let mut document: serde_json::Value =
        serde_json::from_slice(&fixture("v0.0.40/sacct.json")).unwrap();
    for job in document["jobs"].as_array_mut().unwrap() {
        match job["job_id"].as_u64() {
            Some(101) => {
                job["time"]["elapsed"] = 3000.into();
                job["time"]["suspended"] = 600.into();
            }
            Some(103) => job["time"]["suspended"] = 100.into(),
            _ => {}
        }
    }
    let (_, jobs, _) = jobs(&serde_json::to_vec(&document).unwrap());
    let (config, site) = (config(), SiteName::new("TEST").unwrap());
    let observed = |id: &str| {
        let job = jobs.iter().find(|j| j.job_id == id).unwrap();
        (
            job.clone(),
            observation(&config, &site, job).unwrap().unwrap(),
        )
    };
    let (job, charged) = observed("101");
    assert_eq!((job.elapsed_s, job.suspended_s), (3000, 600));
    assert_eq!(charged.end, job.end);
    assert_eq!((charged.end.unwrap() - charged.start).num_seconds(), 3000);
    // 2 GPUs x 3000 s, not x 3600 s
    let gpu_seconds =
        charged.count.get() * (charged.end.unwrap() - charged.start).num_seconds() as f64;
    assert_eq!(gpu_seconds, 6000.0);

    let (job, running) = observed("103");
    assert_eq!(running.end, None);
    assert_eq!((running.start - job.start.unwrap()).num_seconds(), 100);

    // an unsuspended job is charged end - start, which its elapsed equals
    let (job, plain) = observed("102");
    assert_eq!(plain.start, job.start.unwrap());
    assert_eq!((plain.end.unwrap() - plain.start).num_seconds(), 1800);
}

/// The nodes of `file` with each node's `tres` changed by `edit`, mapped.
fn mapped_with_tres(
    file: &str,
    edit: impl Fn(&str, &mut serde_json::Value),
) -> (Inventory, Vec<String>) {
    let mut document: serde_json::Value = serde_json::from_slice(&fixture(file)).unwrap();
    for node in document["nodes"].as_array_mut().unwrap() {
        let name = node["name"].as_str().unwrap().to_owned();
        edit(&name, node);
    }
    let nodes = parse_nodes(&serde_json::to_vec(&document).unwrap()).unwrap();
    let inventory = Inventory {
        version: nodes.version,
        release: nodes.release,
        nodes: nodes.nodes,
        partitions: Vec::new(),
        problems: nodes.problems,
    };
    let warnings = service(&config(), &inventory).warnings;
    (inventory, warnings)
}

#[test]
fn accounting_without_gres_gpu_tres_is_a_warning_naming_the_setting() {
    // Slurm 22.05 as the harness runs it, AccountingStorageTRES=gres/gpu,gres/gpu:a100: quiet
    let (_, warnings) = mapped_with_tres("v0.0.38/sinfo-running.json", |_, _| {});
    assert!(warnings.is_empty(), "{warnings:?}");
    // the same node where AccountingStorageTRES does not list gres/gpu: its tres has no GPUs
    let (_, warnings) = mapped_with_tres("v0.0.38/sinfo-running.json", |_, node| {
        node["tres"] = "cpu=2,mem=4000M,billing=2".into();
    });
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("AccountingStorageTRES"),
        "{}",
        warnings[0]
    );
    assert!(warnings[0].contains("4 GPUs"), "{}", warnings[0]);

    // 23.11's nodes: GPUs tracked, then not. One node also has `shard:16` that its tres does not
    // track: that is said on its own, since shard jobs would go unmetered.
    let (_, warnings) = mapped_with_tres("v0.0.40/scontrol-nodes.json", |_, _| {});
    let untracked: Vec<&String> = warnings
        .iter()
        .filter(|w| w.contains("AccountingStorageTRES"))
        .collect();
    assert_eq!(untracked.len(), 1, "{warnings:?}");
    assert!(
        untracked[0].contains("16 GPU shards") && untracked[0].contains("gres/shard"),
        "{warnings:?}"
    );
    let (_, warnings) = mapped_with_tres("v0.0.40/scontrol-nodes.json", |_, node| {
        let tres = node["tres"].as_str().unwrap();
        let kept: Vec<&str> = tres
            .split(',')
            .filter(|t| !t.starts_with("gres/"))
            .collect();
        node["tres"] = kept.join(",").into();
    });
    assert!(
        warnings.iter().any(|w| w.contains("AccountingStorageTRES")),
        "{warnings:?}"
    );
    // the meter's check reads the same nodes
    assert!(accelfed_provider::slurm::untracked_gpus_warnings(&[]).is_empty());
}

#[test]
fn a_null_gres_beside_gpu_tres_counts_the_tres_gpus_with_a_warning() {
    let (inventory, warnings) = mapped_with_tres("v0.0.38/sinfo-running.json", |_, node| {
        node["gres"] = "(null)".into();
        node["gres_used"] = "(null)".into();
        node["tres"] = "cpu=2,mem=4000M,billing=2,gres/gpu=8,gres/gpu:a100=8".into();
    });
    let node = &inventory.nodes[0];
    assert_eq!(node.gpus.len(), 1);
    assert_eq!((node.gpus[0].total, node.gpus[0].used), (8, 0));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("node afnode")
            && warnings[0].contains("\"(null)\"")
            && warnings[0].contains("8 GPUs"),
        "{}",
        warnings[0]
    );
    // an unreadable gres with GPUs in tres: read from tres (typed), not skipped
    let (inventory, warnings) = mapped_with_tres("v0.0.38/sinfo-running.json", |_, node| {
        node["gres"] = "gpu:a100:four".into();
    });
    assert!(inventory.problems.is_empty());
    assert_eq!(inventory.nodes[0].gpus[0].total, 4);
    assert_eq!(inventory.nodes[0].gpus[0].gpu_type.as_deref(), Some("a100"));
    assert!(warnings[0].contains("gres unreadable"), "{}", warnings[0]);
    // without GPUs in tres the node is skipped as before
    let (inventory, _) = mapped_with_tres("v0.0.38/sinfo-running.json", |_, node| {
        node["gres"] = "gpu:a100:four".into();
        node["tres"] = "cpu=2,mem=4000M,billing=2".into();
    });
    assert_eq!(inventory.problems.len(), 1);
}

#[test]
fn a_mig_slice_job_counts_its_share_of_the_physical_gpu() {
    use accelfed_provider::slurm::observation;
    use accelfed_schemas::gpu::Sharing;
    use accelfed_schemas::names::SiteName;

    // job 101 holds three 1g.10gb slices of the mig01 node's A100 instead of two A100s
    let mut document: serde_json::Value =
        serde_json::from_slice(&fixture("v0.0.40/sacct.json")).unwrap();
    for job in document["jobs"].as_array_mut().unwrap() {
        if job["job_id"].as_u64() == Some(101) {
            for tres in job["tres"]["allocated"].as_array_mut().unwrap() {
                match tres["name"].as_str() {
                    Some("gpu") => tres["count"] = 3.into(),
                    Some("gpu:a100") => {
                        tres["name"] = "gpu:1g.10gb".into();
                        tres["count"] = 3.into();
                    }
                    _ => {}
                }
            }
        }
    }
    let (_, jobs, _) = jobs(&serde_json::to_vec(&document).unwrap());
    let job = jobs.iter().find(|j| j.job_id == "101").unwrap();
    let site = SiteName::new("TEST").unwrap();
    let observed = observation(&config(), &site, job).unwrap().unwrap();
    assert_eq!(observed.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert!(
        (observed.count.get() - 3.0 / 7.0).abs() < 1e-9,
        "{}",
        observed.count
    );
    assert!(matches!(
        observed.sharing,
        Sharing::Mig {
            slices: 1,
            of: 7,
            ..
        }
    ));
    // whole GPUs stay whole
    let whole = jobs.iter().find(|j| j.job_id == "103").unwrap();
    let whole = observation(&config(), &site, whole).unwrap().unwrap();
    assert_eq!((whole.count.get(), whole.sharing), (4.0, Sharing::Whole));
}

/// A job that holds `shards` GPU shards and no whole GPU, metered without and with
/// `shards_per_gpu`: skipped with a problem naming the setting (never counted as whole GPUs), or
/// shards / per_gpu A100s shared by MPS for its elapsed time, with no utilisation (Slurm's
/// gpuutil is per whole GPU).
fn assert_shard_job_metered(job: &SlurmJob, shards: u64, per_gpu: u32) {
    use accelfed_provider::slurm::observation;
    use accelfed_schemas::gpu::Sharing;
    use accelfed_schemas::names::SiteName;

    assert_eq!((job.gpus, job.shards), (0, shards), "job {}", job.job_id);
    let site = SiteName::new("TEST").unwrap();
    let skipped = observation(&config(), &site, job).unwrap_err().to_string();
    assert!(
        skipped.contains(&format!("gres/shard={shards}")) && skipped.contains("shards_per_gpu"),
        "{skipped}"
    );

    let mut shared = config();
    shared.shards_per_gpu = std::num::NonZeroU32::new(per_gpu);
    let observed = observation(&shared, &site, job).unwrap().unwrap();
    assert_eq!(observed.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert_eq!(observed.count.get(), shards as f64 / f64::from(per_gpu));
    assert_eq!(observed.sharing, Sharing::Mps { replicas: per_gpu });
    assert_eq!(observed.utilisation, None);
    let charged = observed.end.unwrap() - observed.start;
    assert_eq!(charged.num_seconds(), job.elapsed_s as i64);
}

/// The TRES entries of a v0.0.40 job replaced by shards shaped as Slurm 22.05 records them (see
/// `v0038_real_shard_jobs`): the newer document shape reads the same.
#[test]
fn a_shard_job_counts_its_share_of_a_gpu_or_is_skipped_naming_the_setting() {
    let mut document: serde_json::Value =
        serde_json::from_slice(&fixture("v0.0.40/sacct.json")).unwrap();
    for job in document["jobs"].as_array_mut().unwrap() {
        if job["job_id"].as_u64() == Some(101) {
            let allocated = job["tres"]["allocated"].as_array_mut().unwrap();
            allocated.retain(|tres| !tres["name"].as_str().is_some_and(|n| n.starts_with("gpu")));
            allocated
                .push(serde_json::json!({"type": "gres", "name": "shard", "id": 1003, "count": 2}));
            allocated.push(
                serde_json::json!({"type": "gres", "name": "shard:a100", "id": 1004, "count": 2}),
            );
        }
    }
    let (_, jobs, _) = jobs(&serde_json::to_vec(&document).unwrap());
    let job = jobs.iter().find(|j| j.job_id == "101").unwrap();
    assert_shard_job_metered(job, 2, 8);
}

/// `v0.0.38/sacct-shards.json`: `sacct --json` of Slurm 22.05.8 (Debian 12) recorded in the test
/// harness's private Slurm started with `Slurm::start_sharded(4)` (4 A100s, gres.conf
/// `Name=shard Type=a100 Count=16`, `AccountingStorageTRES=...,gres/shard,gres/shard:a100`);
/// slurmrestd's `/slurmdb/v0.0.38/jobs` answered the same bytes. Job 1 asked `--gres=shard:3`,
/// job 2 `--gres=shard:a100:2`, job 3 `--gpus=1`; Slurm allocated both shard jobs the untyped and
/// the typed entry (`gres/shard=3`, `gres/shard:a100=3`), as `sacct -X -P -o AllocTRES` printed
/// `billing=1,cpu=1,gres/shard:a100=3,gres/shard=3,node=1`.
#[test]
fn v0038_real_shard_jobs() {
    let (summary, jobs, problems) = jobs(&fixture("v0.0.38/sacct-shards.json"));
    assert_eq!(summary.unwrap().release, "22.05.8");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        seen(&jobs),
        vec![
            ("1", "vo.atlas", 0, 3, Some("a100"), 6),
            ("2", "vo.cms", 0, 2, Some("a100"), 4),
            ("3", "vo.cms", 1, 0, Some("a100"), 4),
        ]
    );
    assert_shard_job_metered(&jobs[0], 3, 4);
    assert_shard_job_metered(&jobs[1], 2, 4);
}
