//! Each recorded data version read into nodes, partitions and jobs; versions and errors in a
//! document; the example site and a located configuration error.

use super::*;

#[test]
fn v0038_cli_node_with_running_jobs_and_partition_access() {
    let nodes = parse_nodes(&fixture("v0.0.38/sinfo-running.json")).unwrap();
    assert_eq!(nodes.version, DataVersion::V0038);
    assert_eq!(nodes.release, "22.05.8");
    let partitions = parse_scontrol_text(
        &String::from_utf8(fixture("v0.0.38/scontrol-partitions.txt")).unwrap(),
    );
    let inventory = Inventory {
        version: nodes.version,
        release: nodes.release,
        nodes: nodes.nodes,
        partitions,
        problems: nodes.problems,
    };
    let mapped = service(&config(), &inventory);
    let service = mapped.service;
    // `scontrol show node` said Gres=gpu:a100:4 and AllocTRES gres/gpu:a100=3 at capture time.
    let a100 = by_id(&service.manager.accelerators, "a100");
    assert_eq!(a100.capacity, capacity(4, 3, 1));
    assert_eq!(a100.gpu.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert_eq!(
        by_id(&share(&service, "gpu").accelerators, "a100").capacity,
        capacity(4, 3, 1)
    );
    let vos = |name: &str| -> Vec<String> {
        share(&service, name)
            .access
            .iter()
            .map(|a| a.vo.to_string())
            .collect()
    };
    assert_eq!(vos("gpu"), vec!["atlas", "cms"]);
    // The captured node's 2 CPUs were both allocated: no free slot, 2 used, 2 for one job.
    assert_eq!(
        share(&service, "gpu").slots,
        ShareSlots {
            free: Some(0),
            used: Some(2),
            max_per_job: Some(2)
        }
    );
    // AllowAccounts=vo.atlas
    assert_eq!(vos("atlas"), vec!["atlas"]);
    assert_eq!(share(&service, "atlas").max_wall_time_s, Some(3600));
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);
}

#[test]
fn v0038_rest_nodes_and_partitions() {
    let nodes = parse_nodes(&fixture("v0.0.38/rest-nodes-idle.json")).unwrap();
    assert_eq!(nodes.nodes[0].gpus[0].used, 0);
    let partitions = parse_partitions(&fixture("v0.0.38/rest-partitions.json")).unwrap();
    let atlas = partitions.iter().find(|p| p.name == "atlas").unwrap();
    assert!(atlas.accounts.admits("vo.atlas") && !atlas.accounts.admits("vo.cms"));
    assert_eq!(atlas.max_time_s, Some(3600));
}

#[test]
fn v0038_sacct_jobs_with_array_tasks() {
    for name in ["v0.0.38/sacct.json", "v0.0.38/rest-jobs.json"] {
        let (summary, jobs, problems) = jobs(&fixture(name));
        let summary = summary.unwrap();
        assert_eq!(summary.version, DataVersion::V0038);
        assert!(problems.is_empty());
        // `sacct -X -P -o JobID,Account,ElapsedRaw,AllocTRES` printed the same at capture time.
        assert_eq!(
            seen(&jobs),
            vec![
                ("1", "vo.atlas", 2, 0, Some("a100"), 20),
                ("2", "vo.cms", 1, 0, Some("a100"), 20),
                ("3_1", "vo.atlas", 1, 0, Some("a100"), 5),
                ("3_0", "vo.atlas", 1, 0, Some("a100"), 5),
            ],
            "{name}"
        );
        assert_eq!(jobs[0].cluster, "afproto");
        assert_eq!(jobs[0].user, "af-alice");
        assert_eq!(
            jobs[0].end.unwrap() - jobs[0].start.unwrap(),
            chrono::Duration::seconds(20)
        );
    }
}

#[test]
fn v0040_nodes_states_mig_and_unknown_types() {
    let nodes = parse_nodes(&fixture("v0.0.40/scontrol-nodes.json")).unwrap();
    assert_eq!(nodes.version, DataVersion::Modern(40));
    assert_eq!(nodes.problems.len(), 1);
    assert!(
        nodes.problems[0].to_string().starts_with("node bad01:"),
        "{}",
        nodes.problems[0]
    );
    let partitions = parse_partitions(&fixture("v0.0.40/scontrol-partitions.json")).unwrap();
    let inventory = Inventory {
        version: nodes.version,
        release: nodes.release,
        nodes: nodes.nodes,
        partitions,
        problems: nodes.problems,
    };
    let mapped = service(&config(), &inventory);
    let service = &mapped.service;
    let manager = &service.manager.accelerators;
    // gpu01 4 (2 used), gpu02 drained 4 (1 used), gpu03 down 4, mig01 1 idle.
    assert_eq!(by_id(manager, "a100").capacity, capacity(13, 3, 3));
    let mig = by_id(manager, "1g.10gb");
    assert_eq!(mig.capacity, capacity(7, 3, 4));
    assert_eq!(mig.gpu.virtualization, Virtualization::Mig);
    assert_eq!(mig.gpu.mig_profile.as_ref().unwrap().as_str(), "1g.10gb");
    // Issue #28: the MIG node's 7 instances of 1/7 are 1 physical GPU per node, not 7.
    let mig_node = service
        .manager
        .environments
        .iter()
        .flat_map(|ee| &ee.accelerators)
        .find(|a| a.gpu.mig_profile == mig.gpu.mig_profile)
        .unwrap();
    assert_eq!(
        (
            mig_node.logical_per_instance,
            mig_node.physical_per_instance
        ),
        (GpuCount::whole(7), GpuCount::whole(1))
    );
    // Unknown type: not in [slurm.gpu_types], so a warning; its name goes through the model
    // catalogue, which knows the one product of the l40s family.
    let l40s = by_id(manager, "l40s");
    assert_eq!(l40s.capacity, capacity(8, 8, 0));
    assert_eq!(l40s.gpu.model.as_str(), "NVIDIA L40S");
    assert!(
        mapped.warnings.iter().any(|w| w.contains("\"l40s\"")),
        "{:?}",
        mapped.warnings
    );
    assert!(
        mapped.warnings.iter().any(|w| w.contains("bad01")),
        "{:?}",
        mapped.warnings
    );

    assert_eq!(
        by_id(&share(service, "gpu").accelerators, "a100").capacity,
        capacity(12, 3, 2)
    );
    assert_eq!(
        by_id(&share(service, "atlas").accelerators, "a100").capacity,
        capacity(8, 3, 2)
    );
    let atlas_vos: Vec<_> = share(service, "atlas")
        .access
        .iter()
        .map(|a| a.vo.to_string())
        .collect();
    assert_eq!(atlas_vos, vec!["atlas"]);
    let mig_share = share(service, "mig");
    assert_eq!(mig_share.serving_state.as_str(), "draining");
    // AllowGroups=cms, mapped through [slurm.groups].
    assert_eq!(
        mig_share
            .access
            .iter()
            .map(|a| a.vo.to_string())
            .collect::<Vec<_>>(),
        vec!["cms"]
    );
    assert!(service.shares.iter().all(|s| s.local_id.as_str() != "cpu"));
    // Job slots are CPUs: gpu01 64 with 16 allocated, gpu02 (drained) and gpu03 (down) 64 with 16
    // allocated and nothing free, l40s01 48 with 16 allocated; bad01 was refused.
    let slots = |free, used, max_per_job| ShareSlots {
        free: Some(free),
        used: Some(used),
        max_per_job: Some(max_per_job),
    };
    assert_eq!(
        share(service, "gpu").slots,
        slots(48 + 32, 4 * 16, 3 * 64 + 48)
    );
    assert_eq!(share(service, "atlas").slots, slots(48, 2 * 16, 2 * 64));
    assert_eq!(mig_share.slots, slots(48, 16, 64));
    let environment_totals: GpuCount = service
        .manager
        .environments
        .iter()
        .flat_map(|e| e.accelerators.iter().map(|a| a.capacity.total))
        .sum();
    assert_eq!(environment_totals, GpuCount::whole(28));
}

#[test]
fn v0040_sacct_arrays_het_running_gpuutil_and_bad_tres() {
    let (summary, jobs, problems) = jobs(&fixture("v0.0.40/sacct.json"));
    let summary = summary.unwrap();
    assert_eq!(
        (summary.version, summary.jobs),
        (DataVersion::Modern(40), 9)
    );
    let ids: Vec<&str> = jobs.iter().map(|j| j.job_id.as_str()).collect();
    assert_eq!(
        ids,
        vec!["101", "102", "103", "100_3", "105+0", "105+1", "107", "108"]
    );
    assert_eq!(
        (jobs[0].gpus, jobs[0].gpu_type.as_deref(), jobs[0].gpuutil),
        (2, Some("a100"), Some(150))
    );
    assert_eq!((jobs[1].gpus, jobs[1].gpu_type.as_deref()), (1, None));
    assert!(jobs[2].is_running() && jobs[2].end.is_none());
    assert_eq!(jobs[2].state, "RUNNING");
    assert_eq!(jobs[4].gpu_type.as_deref(), Some("l40s"));
    assert_eq!(jobs[5].gpus, 0);
    assert!(jobs[6].start.is_none());
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].job_id, "109");
    assert!(
        problems[0].to_string().contains("gres/gpu has count None"),
        "{}",
        problems[0]
    );
}

#[test]
fn v0041_rest_jobs_with_meta_last_are_accepted() {
    let (summary, jobs, _) = jobs(&fixture("v0.0.41/rest-jobs.json"));
    assert_eq!(summary.unwrap().version, DataVersion::Modern(41));
    assert_eq!(jobs.len(), 3);
    let nodes = parse_nodes(&fixture("v0.0.41/rest-nodes.json")).unwrap();
    assert_eq!(nodes.version, DataVersion::Modern(41));
    assert!(nodes.nodes[1].unavailable);
}

#[test]
fn unknown_data_versions_fail_with_the_version_before_or_after_the_data() {
    let meta_first =
        br#"{"meta": {"plugin": {"data_parser": "data_parser/v0.0.45"}}, "jobs": [{"job_id": 1}]}"#;
    let (summary, jobs, _) = jobs(meta_first);
    let err = summary.unwrap_err().to_string();
    assert!(err.contains("v0.0.45"), "{err}");
    assert!(
        jobs.is_empty(),
        "no job is read before the version is known"
    );
    let meta_last = br#"{"jobs": [], "meta": {"plugin": {"data_parser": "data_parser/v0.0.99"}}}"#;
    assert!(
        read_jobs(&meta_last[..], &mut |_| {})
            .unwrap_err()
            .to_string()
            .contains("v0.0.99")
    );
    let nodes = br#"{"nodes": [], "meta": {"plugin": {"type": "openapi/v0.0.37"}}}"#;
    assert!(
        parse_nodes(nodes)
            .unwrap_err()
            .to_string()
            .contains("v0.0.37")
    );
}

#[test]
fn slurm_errors_in_a_document_fail_it() {
    let doc = br#"{"meta": {"plugin": {"type": "openapi/dbv0.0.38"}}, "errors": [{"error": "x", "error_number": 1007, "description": "Protocol authentication error", "source": "slurmdb"}], "jobs": []}"#;
    let err = read_jobs(&doc[..], &mut |_| {}).unwrap_err().to_string();
    assert!(err.contains("Protocol authentication error"), "{err}");
}

#[test]
fn the_example_slurm_site_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/slurm-site.toml");
    let loaded = Config::load(&path).unwrap_or_else(|err| panic!("{err}"));
    let slurm = &loaded.config.slurm[0];
    assert_eq!(slurm.gpu_types["a100"].memory_mb.unwrap().get(), 81920);
    assert_eq!(
        slurm
            .vo_of("vo.atlas", "normal", "gpu")
            .unwrap()
            .vo
            .as_str(),
        "atlas"
    );
    assert_eq!(
        slurm.vo_of("x", "biomed", "gpu").unwrap().vo.as_str(),
        "biomed"
    );
    assert_eq!(
        slurm.vo_of("x", "normal", "lhcb-gpu").unwrap().vo.as_str(),
        "lhcb"
    );
    assert!(slurm.vo_of("x", "normal", "gpu").is_none());
}

#[test]
fn bad_slurm_config_is_located() {
    let toml = "[site]\nname = \"T\"\n[[slurm]]\nid = \"hpc\"\n[slurm.rest]\nurl = \"ftp://x\"\nuser = \"u\"\ntoken_file = \"/t\"\n";
    let err = Config::parse(&PathBuf::from("s.toml"), toml)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("s.toml:6:7: slurm.rest.url:"), "{err}");
    let toml = "[site]\nname = \"T\"\n[[slurm]]\nid = \"hpc\"\nsqueue = true\n";
    let err = Config::parse(&PathBuf::from("s.toml"), toml)
        .unwrap_err()
        .to_string();
    assert!(err.contains("squeue"), "{err}");
    let toml = "[site]\nname = \"T\"\n[[slurm]]\nid = \"hpc\"\n[slurm.rest]\nurl = \"http://x\"\nuser = \"u\"\ntoken_file = \"/t\"\napi_version = \"v0.0.45\"\n";
    let err = Config::parse(&PathBuf::from("s.toml"), toml)
        .unwrap_err()
        .to_string();
    assert!(err.contains("v0.0.45"), "{err}");
}
