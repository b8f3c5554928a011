//! `accelfed meter` on a Slurm site, as cron runs it:
//!
//! * against a real Slurm 22.05 with accounting (the harness in `accelfed_tests::slurm`): after GPU
//!   jobs of two VOs ran, the spool holds one record per job whose GPU-seconds per VO equal
//!   `sum(ElapsedRaw x gres/gpu)` from `sacct -X -P -o Account,ElapsedRaw,AllocTRES`;
//! * against a real Slurm whose GPUs also offer shards (`gres/shard:a100`, tracked by accounting):
//!   through `sacct` and through slurmrestd, a job holding K shards is one record of K /
//!   `shards_per_gpu` A100s (MPS sharing) for the `ElapsedRaw` sacct prints, beside a whole-GPU
//!   job's record; without `shards_per_gpu` the shard job is skipped with a warning naming the
//!   setting, never counted whole;
//! * with a `sacct` that prints jobs and then fails: exit status 1, the error names the command, its
//!   exit status and stderr, and nothing is written to the spool.
//!
//! A Slurm that cannot start fails this test (with its logs), never skips it.

// A failing call here is the test failing; its error (the daemons' logs included) is the message.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use accelfed_accounting::spool::Spool;
use accelfed_schemas::gpu::Sharing;
use accelfed_schemas::usage::UsageRecord;
use accelfed_tests::slurm::Slurm;

fn site_toml(dir: &Path, slurm_section: &str) -> PathBuf {
    let text = format!(
        "[site]\nname = \"TEST-SLURM-METER\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\n\
         [[slurm]]\nid = \"hpc\"\n{slurm_section}\
         [slurm.gpu_types]\na100 = {{ model = \"NVIDIA A100-SXM4-80GB\", memory_mb = 81920 }}\n\
         [slurm.accounts]\n\"vo.atlas\" = {{ vo = \"atlas\", fqan = \"/atlas\" }}\n\"vo.cms\" = \"cms\"\n"
    );
    let path = dir.join("site.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `--since` for jobs the test runs: before any of them, in `accelfed meter`'s syntax.
fn an_hour_ago() -> String {
    (chrono::Utc::now() - chrono::Duration::hours(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn meter(config: &Path, since: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["meter", "--config"])
        .arg(config)
        .args(["--since", since])
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

/// The records in the spool.
fn records(spool: &Path) -> Vec<UsageRecord> {
    let spool = Spool::open(spool).unwrap();
    spool
        .pending(10_000)
        .unwrap()
        .iter()
        .map(|pending| pending.record().unwrap())
        .collect()
}

/// GPU-seconds per VO and the record names in the spool.
fn spooled(spool: &Path) -> (BTreeMap<String, u64>, Vec<String>) {
    let mut sums = BTreeMap::new();
    let mut names = Vec::new();
    for record in records(spool) {
        let vo = record
            .vo
            .as_ref()
            .map_or("none".to_owned(), |v| v.to_string());
        *sums.entry(vo).or_insert(0) +=
            record.count.as_whole().unwrap() * record.available_duration;
        names.push(record.associated_record.to_string());
    }
    names.sort();
    (sums, names)
}

/// Slurm's own truth per VO (the test accounts are `vo.<name>`).
fn sacct_gpu_seconds(slurm: &Slurm) -> BTreeMap<String, u64> {
    let per_account = slurm
        .sacct_gpu_seconds("2000-01-01", None)
        .unwrap_or_else(|err| panic!("{err}"));
    per_account
        .into_iter()
        .map(|(account, sum)| match account.strip_prefix("vo.") {
            Some(vo @ ("atlas" | "cms")) => (vo.to_owned(), sum),
            _ => panic!("unexpected account {account}"),
        })
        .collect()
}

#[test]
fn meter_spools_a_real_slurms_gpu_seconds_per_vo_as_sacct_counts_them() {
    let mut slurm = Slurm::start().unwrap_or_else(|err| panic!("{err}"));
    let dir = tempfile::tempdir().unwrap();
    let config = site_toml(
        dir.path(),
        &format!(
            "cluster = \"{}\"\n[slurm.cli]\nslurm_conf = {:?}\ntimeout_s = 30\n",
            slurm.layout.cluster,
            slurm.slurm_conf()
        ),
    );
    let since = an_hour_ago();
    let alice = slurm
        .submit("af-alice", &["--gres=gpu:a100:2", "--wrap", "sleep 6"])
        .unwrap();
    let bob = slurm
        .submit("af-bob", &["--gpus=1", "--wrap", "sleep 4"])
        .unwrap();
    let cpu_only = slurm.submit("af-bob", &["--wrap", "sleep 1"]).unwrap();
    slurm
        .wait_all_done(Duration::from_secs(120))
        .unwrap_or_else(|err| panic!("{err}"));

    let out = meter(&config, &since);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truth = sacct_gpu_seconds(&slurm);
    assert!(
        truth["atlas"] >= 2 * 6 && truth["cms"] >= 4,
        "sacct: {truth:?}"
    );
    let (sums, names) = spooled(&dir.path().join("spool.sqlite"));
    assert_eq!(sums, truth, "GPU-seconds per VO in the spool vs sacct");
    let cluster = &slurm.layout.cluster;
    let mut expected = vec![format!("{cluster}:{alice}"), format!("{cluster}:{bob}")];
    expected.sort();
    assert_eq!(
        names, expected,
        "one record per GPU job, none for {cpu_only}"
    );

    // Metering again replaces, never adds.
    let out = meter(&config, &since);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(spooled(&dir.path().join("spool.sqlite")).0, truth);
}

/// The spooled record of `<cluster>:<job>`, with what the run printed when it is missing.
fn record_of<'a>(records: &'a [UsageRecord], name: &str, stderr: &str) -> &'a UsageRecord {
    records
        .iter()
        .find(|r| r.associated_record.as_str() == name)
        .unwrap_or_else(|| panic!("no record {name}; the meter said:\n{stderr}"))
}

#[test]
fn shard_jobs_on_a_real_slurm_are_metered_as_their_share_of_a_gpu_via_sacct_and_slurmrestd() {
    // 4 GPUs x 4 shards: gres.conf `Name=shard Type=a100 Count=16 File=.../gpu[0-3]`.
    const PER_GPU: u32 = 4;
    let mut slurm = Slurm::start_sharded(PER_GPU).unwrap_or_else(|err| panic!("{err}"));
    let rest = slurm.start_rest().unwrap_or_else(|err| panic!("{err}"));
    let since = an_hour_ago();
    // An untyped and a typed shard request (Slurm records both with the type), and a whole GPU.
    let untyped = slurm
        .submit("af-alice", &["--gres=shard:3", "--wrap", "sleep 6"])
        .unwrap();
    let typed = slurm
        .submit("af-bob", &["--gres=shard:a100:2", "--wrap", "sleep 4"])
        .unwrap();
    let whole = slurm
        .submit("af-bob", &["--gpus=1", "--wrap", "sleep 4"])
        .unwrap();
    slurm
        .wait_all_done(Duration::from_secs(120))
        .unwrap_or_else(|err| panic!("{err}"));

    // Slurm's own record, read with sacct's text output, apart from the meter.
    let allocations = slurm
        .sacct_allocations("2000-01-01", None)
        .unwrap_or_else(|err| panic!("{err}"));
    let sacct = |id: &str| {
        allocations
            .iter()
            .find(|a| a.job_id == id)
            .unwrap_or_else(|| panic!("job {id} not in sacct: {allocations:?}"))
    };
    for (id, shards) in [(&untyped, 3), (&typed, 2)] {
        let job = sacct(id);
        let counts = ["gres/shard", "gres/shard:a100", "gres/gpu"].map(|t| job.tres(t).unwrap());
        assert_eq!(counts, [shards, shards, 0], "{job:?}");
    }
    assert_eq!(sacct(&whole).tres("gres/gpu").unwrap(), 1);

    let cluster = &slurm.layout.cluster;
    let access = [
        (
            "sacct",
            format!(
                "[slurm.cli]\nslurm_conf = {:?}\ntimeout_s = 30\n",
                slurm.slurm_conf()
            ),
        ),
        (
            "slurmrestd",
            format!(
                "[slurm.rest]\nurl = \"{}\"\nuser = \"{}\"\ntoken_file = {:?}\n",
                rest.url, rest.user, rest.token_file
            ),
        ),
    ];
    for (label, table) in &access {
        let dir = tempfile::tempdir().unwrap();
        let config = site_toml(
            dir.path(),
            &format!("cluster = \"{cluster}\"\nshards_per_gpu = {PER_GPU}\n{table}"),
        );
        let out = meter(&config, &since);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{label}: {stderr}");
        let records = records(&dir.path().join("spool.sqlite"));
        assert_eq!(records.len(), 3, "{label}: {stderr}");
        for (id, shards) in [(&untyped, 3), (&typed, 2)] {
            let record = record_of(&records, &format!("{cluster}:{id}"), &stderr);
            let elapsed = sacct(id).elapsed_s;
            assert!(elapsed >= 4, "{label}: job {id} ran {elapsed} s");
            assert_eq!(record.available_duration, elapsed, "{label}: job {id}");
            // Shards over shards per GPU; 3/4 and 2/4 are exact in binary, so this is equality.
            let share = f64::from(shards) / f64::from(PER_GPU);
            assert_eq!(record.count.get(), share, "{label}: job {id}");
            assert_eq!(
                record.count.get() * record.available_duration as f64,
                share * elapsed as f64,
                "{label}: job {id}: GPU-seconds"
            );
            assert_eq!(record.sharing, Sharing::Mps { replicas: PER_GPU });
            assert_eq!(record.model.as_str(), "NVIDIA A100-SXM4-80GB", "{label}");
        }
        let record = record_of(&records, &format!("{cluster}:{whole}"), &stderr);
        assert_eq!(record.count.as_whole(), Some(1), "{label}");
        assert_eq!(record.available_duration, sacct(&whole).elapsed_s);
        assert_eq!(record.sharing, Sharing::Whole, "{label}");
    }

    // Without shards_per_gpu a shard is no known part of a GPU: skipped and named, not whole.
    let dir = tempfile::tempdir().unwrap();
    let config = site_toml(
        dir.path(),
        &format!("cluster = \"{cluster}\"\n{}", access[0].1),
    );
    let out = meter(&config, &since);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for id in [&untyped, &typed] {
        let warned = stderr.lines().any(|line| {
            line.contains(&format!("job {id} of cluster {cluster}"))
                && line.contains("shards_per_gpu")
        });
        assert!(
            warned,
            "no warning naming job {id} and shards_per_gpu:\n{stderr}"
        );
    }
    let names: Vec<String> = records(&dir.path().join("spool.sqlite"))
        .iter()
        .map(|r| r.associated_record.to_string())
        .collect();
    assert_eq!(names, vec![format!("{cluster}:{whole}")]);
}

#[test]
fn a_failing_sacct_fails_the_run_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../provider/tests/fixtures/slurm/v0.0.38/sacct.json");
    let sacct = bin.join("sacct");
    std::fs::write(
        &sacct,
        format!(
            "#!/bin/sh\ncat {}\necho 'sacct: error: slurmdbd: Connection refused' >&2\nexit 1\n",
            fixture.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&sacct, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = site_toml(
        dir.path(),
        &format!("[slurm.cli]\nbin_dir = {bin:?}\ntimeout_s = 10\n"),
    );
    let out = meter(&config, "2026-01-01");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("sacct --json"), "{stderr}");
    assert!(stderr.contains("exit status: 1"), "{stderr}");
    assert!(stderr.contains("slurmdbd: Connection refused"), "{stderr}");
    let spool = dir.path().join("spool.sqlite");
    if spool.exists() {
        assert!(
            Spool::open(&spool).unwrap().is_empty().unwrap(),
            "records were written"
        );
    }
}
