//! The Slurm provider and GPU-hours meter against a real Slurm 22.05 with accounting (the harness
//! in `accelfed_tests::slurm`), through the commands and through slurmrestd with JWT.
//!
//! * While jobs run, the provider's total, used and free GPUs equal what `scontrol show node` says
//!   (Gres= and AllocTRES=), for the cluster and for each partition.
//! * After the jobs end, the meter's GPU-seconds per VO equal `sum(ElapsedRaw x gres/gpu)` from
//!   `sacct -X -P -o Account,ElapsedRaw,AllocTRES`, Slurm's own accounting.
//!
//! A Slurm that cannot start fails these tests (with the daemons' logs), never skips them.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use chrono::{DateTime, Utc};

use accelfed_accounting::meter::records_for;
use accelfed_provider::config::Config;
use accelfed_provider::slurm::{SlurmClient, SlurmConfig, observe, service};
use accelfed_schemas::glue::ComputingService;
use accelfed_schemas::gpu::{Capacity, GpuCount};
use accelfed_schemas::names::SiteName;
use accelfed_tests::slurm::{Rest, Slurm};

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

fn config(slurm: &Slurm, rest: Option<&Rest>) -> SlurmConfig {
    let mut text = format!(
        "[site]\nname = \"TEST-SLURM\"\n[[slurm]]\nid = \"hpc\"\ncluster = \"{}\"\n\
         [slurm.cli]\nslurm_conf = {:?}\ntimeout_s = 30\n\
         [slurm.gpu_types]\na100 = {{ model = \"NVIDIA A100-SXM4-80GB\", memory_mb = 81920 }}\n\
         [slurm.accounts]\n\"vo.atlas\" = {{ vo = \"atlas\", fqan = \"/atlas\" }}\n\"vo.cms\" = \"cms\"\n",
        slurm.layout.cluster,
        slurm.slurm_conf()
    );
    if let Some(rest) = rest {
        text.push_str(&format!(
            // No api_version: the client reads slurmrestd's /openapi/v3 and picks v0.0.38, the
            // only version a 22.05 server serves.
            "[slurm.rest]\nurl = \"{}\"\nuser = \"{}\"\ntoken_file = {:?}\n",
            rest.url, rest.user, rest.token_file
        ));
    }
    Config::parse(Path::new("real.toml"), &text)
        .unwrap_or_else(|err| panic!("{err}"))
        .slurm
        .remove(0)
}

fn provide(config: &SlurmConfig) -> ComputingService {
    let inventory =
        block_on(SlurmClient::new(config).inventory()).unwrap_or_else(|e| panic!("{e}"));
    assert!(inventory.problems.is_empty(), "{:?}", inventory.problems);
    service(config, &inventory).service
}

fn capacity(total: u32, used: u32) -> Capacity {
    Capacity {
        total: GpuCount::whole(total),
        used: GpuCount::whole(used),
        free: GpuCount::whole(total - used),
    }
}

/// The provider agrees with `scontrol show node`, read before and after it (retried while a job
/// starts or ends in between).
fn check_provider_while_jobs_run(slurm: &Slurm, config: &SlurmConfig, label: &str) {
    for _ in 0..20 {
        let before = slurm.scontrol_gpus().unwrap();
        let service = provide(config);
        let after = slurm.scontrol_gpus().unwrap();
        if before != after {
            continue;
        }
        let (total, used) = before;
        assert!(
            used >= 3,
            "{label}: the test's jobs should hold 3+ GPUs, scontrol says {used}"
        );
        let want = capacity(total, used);
        assert_eq!(service.manager.accelerators.len(), 1, "{label}");
        assert_eq!(
            service.manager.accelerators[0].capacity, want,
            "{label}: manager"
        );
        assert_eq!(
            service.manager.accelerators[0].gpu.model.as_str(),
            "NVIDIA A100-SXM4-80GB"
        );
        let env = &service.manager.environments[0].accelerators[0];
        assert_eq!(env.capacity, want, "{label}: environment");
        for share in &service.shares {
            assert_eq!(
                share.accelerators[0].capacity, want,
                "{label}: share {}",
                share.local_id
            );
        }
        let atlas = service
            .shares
            .iter()
            .find(|s| s.local_id.as_str() == "atlas")
            .unwrap();
        let vos: Vec<_> = atlas.access.iter().map(|a| a.vo.to_string()).collect();
        assert_eq!(vos, vec!["atlas"], "{label}: AllowAccounts=vo.atlas");
        return;
    }
    panic!("{label}: scontrol kept changing while the provider read the cluster");
}

/// The meter as `accelfed meter` runs it: `observe` (jobs -> observations) then `records_for`
/// (observations -> monthly records); GPU-seconds per VO and the record names.
fn meter(
    config: &SlurmConfig,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> (BTreeMap<String, u64>, Vec<String>) {
    let site = SiteName::new("TEST-SLURM").unwrap();
    let now = Utc::now();
    let observations =
        block_on(observe(config, &site, start, end)).unwrap_or_else(|e| panic!("{e}"));
    let records: Vec<_> = observations
        .iter()
        .flat_map(|obs| records_for(obs, now).unwrap())
        .collect();
    let mut sums = BTreeMap::new();
    for record in &records {
        let vo = record
            .vo
            .as_ref()
            .map_or("none".to_owned(), |v| v.to_string());
        *sums.entry(vo).or_insert(0) +=
            record.count.as_whole().unwrap() * record.available_duration;
    }
    let names = records
        .iter()
        .map(|r| r.associated_record.to_string())
        .collect();
    (sums, names)
}

#[test]
fn real_slurm_gpus_and_gpu_hours_through_the_commands_and_slurmrestd() {
    let mut slurm = Slurm::start().unwrap_or_else(|err| panic!("{err}"));
    let rest = slurm.start_rest().unwrap_or_else(|err| panic!("{err}"));
    let cli = config(&slurm, None);
    let via_rest = config(&slurm, Some(&rest));
    let window_start = Utc::now() - chrono::Duration::minutes(5);

    let alice = slurm
        .submit("af-alice", &["--gres=gpu:a100:2", "--wrap", "sleep 14"])
        .unwrap();
    let bob = slurm
        .submit("af-bob", &["--gpus=1", "--wrap", "sleep 14"])
        .unwrap();
    let array = slurm
        .submit(
            "af-alice",
            &["--array=0-1", "--gpus=1", "--wrap", "sleep 3"],
        )
        .unwrap();
    slurm
        .wait_running(&[&alice, &bob], Duration::from_secs(60))
        .unwrap_or_else(|err| panic!("{err}"));
    check_provider_while_jobs_run(&slurm, &cli, "commands");
    check_provider_while_jobs_run(&slurm, &via_rest, "slurmrestd");

    slurm
        .wait_all_done(Duration::from_secs(120))
        .unwrap_or_else(|err| panic!("{err}"));
    let window_end = Utc::now() + chrono::Duration::minutes(5);
    let fmt = |t: DateTime<Utc>| t.format("%Y-%m-%dT%H:%M:%S").to_string();
    let truth = slurm
        .sacct_gpu_seconds(&fmt(window_start), Some(&fmt(window_end)))
        .unwrap_or_else(|err| panic!("{err}"));
    let expected: BTreeMap<String, u64> = truth
        .iter()
        .map(|(account, sum)| {
            (
                if account == "vo.atlas" {
                    "atlas"
                } else {
                    "cms"
                }
                .to_owned(),
                *sum,
            )
        })
        .collect();
    assert!(
        expected["atlas"] >= 2 * 14 && expected["cms"] >= 14,
        "{expected:?}"
    );

    for (label, config) in [("commands", &cli), ("slurmrestd", &via_rest)] {
        let (metered, names) = meter(config, window_start, window_end);
        assert_eq!(metered, expected, "{label}: GPU-seconds per VO");
        let cluster = &slurm.layout.cluster;
        for id in [
            alice.clone(),
            bob.clone(),
            format!("{array}_0"),
            format!("{array}_1"),
        ] {
            assert!(
                names.contains(&format!("{cluster}:{id}")),
                "{label}: {id} in {names:?}"
            );
        }
    }
}
