//! `accelfed provide` on a Slurm site, as cron or a BDII runs it, against a real Slurm 22.05 (the
//! harness in `accelfed_tests::slurm`) while GPU jobs run:
//!
//! * the GLUE 2.1 JSON publishes the GPU totals, used and free that `scontrol show node` reports,
//!   for the cluster (ComputingManagerAccelerator), per partition (ComputingShareAccelerator) and
//!   per type (AcceleratorEnvironment), and maps AllowAccounts to the VO;
//! * the GLUE 2.0 LDIF loads into a real slapd with only the stock GLUE20.schema, and the GLUE 2.1
//!   LDIF with accelfed's schema, and both answer with the same numbers.
//!
//! A Slurm or slapd that cannot start fails this test (with its logs), never skips it.

// A failing call here is the test failing; its error (the daemons' logs included) is the message.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use accelfed_tests::slapd::Slapd;
use accelfed_tests::slurm::Slurm;

const SITE: &str = "TEST-SLURM-CLI";

fn site_toml(slurm: &Slurm, dir: &Path) -> PathBuf {
    let text = format!(
        "[site]\nname = \"{SITE}\"\n\n[[slurm]]\nid = \"hpc\"\nname = \"test cluster\"\ncluster = \"{}\"\n\
         [slurm.cli]\nslurm_conf = {:?}\ntimeout_s = 30\n\
         [slurm.gpu_types]\na100 = {{ model = \"NVIDIA A100-SXM4-80GB\", memory_mb = 81920, compute_capability = \"8.0\" }}\n\
         [slurm.accounts]\n\"vo.atlas\" = {{ vo = \"atlas\", fqan = \"/atlas\" }}\n\"vo.cms\" = \"cms\"\n",
        slurm.layout.cluster,
        slurm.slurm_conf()
    );
    let path = dir.join("site.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `accelfed provide --config <site> --format <format>`: its stdout; exit status 0 required.
fn provide(config: &Path, format: &str) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--config"])
        .arg(config)
        .args(["--format", format])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "accelfed provide --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// (total, used, free) of a GLUE 2.1 JSON accelerator entity.
fn slots(entity: &Value) -> (u64, u64, u64) {
    let get = |key: &str| {
        entity[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} in {entity}"))
    };
    (
        get("TotalAcceleratorSlots"),
        get("UsedAcceleratorSlots"),
        get("FreeAcceleratorSlots"),
    )
}

fn class<'a>(document: &'a Value, name: &str) -> &'a [Value] {
    document[name].as_array().map_or(&[], Vec::as_slice)
}

fn ids(entities: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = entities
        .iter()
        .map(|e| e["ID"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

fn urn(kind: &str, local: &str) -> String {
    format!("urn:accelfed:{SITE}:{kind}:hpc{local}")
}

/// The JSON rendering, read while `scontrol show node` says the same before and after it (a job
/// may start or end in between; then read again). Returns the document and scontrol's numbers.
fn json_matching_scontrol(slurm: &Slurm, config: &Path) -> (Value, (u64, u64, u64)) {
    for _ in 0..20 {
        let before = slurm.scontrol_gpus().unwrap();
        let document: Value = serde_json::from_slice(&provide(config, "glue21-json")).unwrap();
        if slurm.scontrol_gpus().unwrap() == before {
            let (total, used) = (u64::from(before.0), u64::from(before.1));
            return (document, (total, used, total - used));
        }
    }
    panic!("scontrol kept changing while accelfed provide ran");
}

fn ldap_values(slapd: &Slapd, filter: &str, attribute: &str) -> Vec<String> {
    let mut values: Vec<String> = slapd
        .search("o=glue", filter, &[attribute])
        .unwrap()
        .iter()
        .flat_map(|entry| entry.attrs.get(attribute).cloned().unwrap_or_default())
        .collect();
    values.sort();
    values
}

fn entries(ldif: &[u8]) -> usize {
    String::from_utf8_lossy(ldif)
        .lines()
        .filter(|line| line.starts_with("dn:"))
        .count()
}

#[test]
fn provide_publishes_a_real_slurms_gpus_as_json_and_ldif_that_loads_into_slapd() {
    let slurm = Slurm::start().unwrap_or_else(|err| panic!("{err}"));
    let dir = tempfile::tempdir().unwrap();
    let config = site_toml(&slurm, dir.path());

    let alice = slurm
        .submit("af-alice", &["--gres=gpu:a100:2", "--wrap", "sleep 120"])
        .unwrap();
    let bob = slurm
        .submit("af-bob", &["--gpus=1", "--wrap", "sleep 120"])
        .unwrap();
    slurm
        .wait_running(&[&alice, &bob], Duration::from_secs(60))
        .unwrap_or_else(|err| panic!("{err}"));

    // GLUE 2.1 JSON: the numbers of `scontrol show node`, at every level.
    let (document, want) = json_matching_scontrol(&slurm, &config);
    assert_eq!(want, (4, 3, 1), "scontrol: 4 A100s, 2 + 1 allocated");
    let managers = class(&document, "ComputingManagerAccelerator");
    assert_eq!(ids(managers), vec![urn("manager-accelerator", "/a100")]);
    assert_eq!(slots(&managers[0]), want, "cluster");
    assert_eq!(managers[0]["Model"], "NVIDIA A100-SXM4-80GB");
    assert_eq!(managers[0]["Memory"], 81920);
    let shares = class(&document, "ComputingShareAccelerator");
    assert_eq!(shares.len(), 2, "partitions gpu and atlas: {shares:?}");
    for share in shares {
        assert_eq!(slots(share), want, "partition {}", share["ID"]);
    }
    let environments = class(&document, "AcceleratorEnvironment");
    assert_eq!(environments.len(), 1, "{environments:?}");
    assert_eq!(slots(&environments[0]), want, "type a100");
    assert_eq!(environments[0]["PhysicalAccelerators"], 4);
    assert_eq!(
        ids(class(&document, "ComputingShare")),
        vec![urn("share", "/atlas"), urn("share", "/gpu")]
    );
    // AllowAccounts=vo.atlas on partition atlas: a MappingPolicy for VO atlas.
    let policies = class(&document, "MappingPolicy");
    let atlas_rules: Vec<Value> = policies
        .iter()
        .filter(|p| p["Associations"]["Share"][0] == urn("share", "/atlas"))
        .flat_map(|p| p["Rule"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(
        atlas_rules
            .iter()
            .any(|rule| rule.as_str() == Some("VO:atlas")),
        "rules of partition atlas: {atlas_rules:?}"
    );

    // GLUE 2.0 LDIF into the stock schema: every entry loads, OtherInfo carries the numbers.
    let ldif = provide(&config, "ldif-glue20");
    let slapd = Slapd::start(&[]).unwrap();
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entries(&ldif), "{report}");
    let manager_info = ldap_values(
        &slapd,
        "(&(objectClass=GLUE2Manager)(GLUE2ManagerProductName=SLURM))",
        "GLUE2EntityOtherInfo",
    );
    for expected in [
        format!("GPU.a100.TotalAcceleratorSlots={}", want.0),
        format!("GPU.a100.UsedAcceleratorSlots={}", want.1),
        format!("GPU.a100.FreeAcceleratorSlots={}", want.2),
    ] {
        assert!(
            manager_info.contains(&expected),
            "{expected} in {manager_info:?}"
        );
    }
    assert_eq!(
        ldap_values(&slapd, "(objectClass=GLUE2ComputingShare)", "GLUE2ShareID"),
        vec![urn("share", "/atlas"), urn("share", "/gpu")]
    );
    drop(slapd);

    // GLUE 2.1 LDIF with accelfed's schema: the accelerator classes, searchable by count.
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/ldap/accelfed-glue21.schema");
    let ldif = provide(&config, "ldif-glue21");
    let slapd = Slapd::start(&[&schema]).unwrap();
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entries(&ldif), "{report}");
    let free = ldap_values(
        &slapd,
        "(&(objectClass=GLUE2ComputingShareAccelerator)(GLUE2ComputingShareAcceleratorFreeAcceleratorSlots>=1))",
        "GLUE2ComputingShareAcceleratorFreeAcceleratorSlots",
    );
    assert_eq!(
        free,
        vec![want.2.to_string(); 2],
        "both partitions have a free GPU"
    );
    let used = ldap_values(
        &slapd,
        "(objectClass=GLUE2ComputingManagerAccelerator)",
        "GLUE2ComputingManagerAcceleratorUsedAcceleratorSlots",
    );
    assert_eq!(used, vec![want.1.to_string()]);
}
