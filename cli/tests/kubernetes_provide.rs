//! `accelfed provide` on a Kubernetes site, as cron or a BDII runs it, against the fixture API
//! server of `accelfed_tests::fake_kubernetes` (a local HTTPS server answering like the
//! Kubernetes API, through the real `kube` client; none can be installed on this machine kind):
//!
//! * with a generated kubeconfig, the GLUE 2.1 JSON publishes the fixture's truth (total, used and
//!   free GPUs per product and sharing mode, `provider/tests/fixtures/kubernetes/README.md`);
//! * the GLUE 2.0 LDIF loads into a real slapd with only the stock GLUE20.schema, and the GLUE 2.1
//!   LDIF with accelfed's schema, 0 entries rejected, and LDAP answers with the same numbers;
//! * with in-cluster auth (`KUBERNETES_SERVICE_HOST`/`_PORT` in the process environment, token and
//!   CA from a service-account folder) the same document is published.
//!
//! A slapd that cannot start fails this test (with its log), never skips it.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use accelfed_tests::fake_kubernetes::{Behaviour, FakeApi};
use accelfed_tests::slapd::Slapd;

const SITE: &str = "TEST-K8S-CLI";
const TOKEN: &str = "provide-token-51aa";

/// (total, used, free) per GPU kind: the fixture's truth.
fn truth() -> BTreeMap<String, (u64, u64, u64)> {
    [
        ("nvidia-a100-sxm4-80gb", (12, 4, 1)),
        ("nvidia-a100-sxm4-80gb.mig-1g.10gb", (7, 3, 4)),
        ("nvidia-a100-sxm4-80gb.mig-3g.40gb", (2, 1, 1)),
        ("tesla-t4.time-slicing", (8, 3, 5)),
        ("nvidia-a10.vgpu", (1, 1, 0)),
        ("amd-instinct-mi210", (8, 0, 8)),
    ]
    .into_iter()
    .map(|(kind, counts)| (kind.to_owned(), counts))
    .collect()
}

const CLUSTER: &str = "[[kubernetes]]\nid = \"k8s\"\ncluster = \"gpu-cluster\"\npage_size = 4\n\
    vo_label = \"accelfed.io/vo\"\nvo_annotation = \"accelfed.io/vo\"\n";
const VOS: &str = "[kubernetes.namespaces]\ncms = { vo = \"cms\", fqan = \"/cms\" }\n";

fn write_site(dir: &Path, auth: &str) -> PathBuf {
    let path = dir.join("site.toml");
    std::fs::write(
        &path,
        format!("[site]\nname = \"{SITE}\"\n\n{CLUSTER}{auth}{VOS}"),
    )
    .unwrap();
    path
}

/// `accelfed provide --format <format>` with `env` added; its stdout, exit status 0 required.
fn provide(config: &Path, format: &str, env: &[(&str, String)]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--config"])
        .arg(config)
        .args(["--format", format])
        .env_remove("RUST_LOG")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
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

/// (total, used, free) per GPU kind of the manager's accelerators in GLUE 2.1 JSON.
fn manager_counts(document: &Value) -> BTreeMap<String, (u64, u64, u64)> {
    document["ComputingManagerAccelerator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entity| {
            let id = entity["ID"].as_str().unwrap();
            let kind = id.rsplit_once("k8s/").map_or(id, |(_, kind)| kind);
            let get = |key: &str| entity[key].as_u64().unwrap();
            (
                kind.to_owned(),
                (
                    get("TotalAcceleratorSlots"),
                    get("UsedAcceleratorSlots"),
                    get("FreeAcceleratorSlots"),
                ),
            )
        })
        .collect()
}

fn entries(ldif: &[u8]) -> usize {
    String::from_utf8_lossy(ldif)
        .lines()
        .filter(|line| line.starts_with("dn:"))
        .count()
}

#[track_caller]
fn load(slapd: &Slapd, ldif: &[u8]) {
    let report = slapd.load_ldif(ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entries(ldif), "{report}");
}

#[test]
fn provide_publishes_the_fixture_cluster_as_json_and_ldif_that_loads_into_slapd() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let api = runtime.block_on(FakeApi::start(Behaviour {
        token: TOKEN.to_owned(),
        ..Behaviour::default()
    }));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kubeconfig"), api.kubeconfig(TOKEN)).unwrap();
    let config = write_site(
        dir.path(),
        &format!(
            "kubeconfig = \"{}\"\ncontext = \"fixture\"\n",
            dir.path().join("kubeconfig").display()
        ),
    );

    // GLUE 2.1 JSON: the fixture's truth per GPU kind.
    let document: Value = serde_json::from_slice(&provide(&config, "glue21-json", &[])).unwrap();
    assert_eq!(manager_counts(&document), truth());
    let shares: Vec<&str> = document["ComputingShare"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ID"].as_str().unwrap())
        .collect();
    assert_eq!(
        shares,
        [
            format!("urn:accelfed:{SITE}:share:k8s/atlas"),
            format!("urn:accelfed:{SITE}:share:k8s/cms")
        ]
    );

    // GLUE 2.0 LDIF into the stock schema: every entry loads; the manager's OtherInfo carries
    // the numbers of each GPU kind.
    let ldif20 = provide(&config, "ldif-glue20", &[]);
    let slapd = Slapd::start(&[]).unwrap();
    load(&slapd, &ldif20);
    let info: Vec<String> = slapd
        .search(
            "o=glue",
            "(&(objectClass=GLUE2Manager)(GLUE2ManagerProductName=Kubernetes))",
            &["GLUE2EntityOtherInfo"],
        )
        .unwrap()
        .iter()
        .flat_map(|entry| {
            entry
                .attrs
                .get("GLUE2EntityOtherInfo")
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    let (total, used, free) = truth()
        .values()
        .fold((0, 0, 0), |sum, c| (sum.0 + c.0, sum.1 + c.1, sum.2 + c.2));
    assert_eq!((total, used, free), (38, 12, 19));
    for (kind, (total, used, free)) in truth() {
        for (name, value) in [("Total", total), ("Used", used), ("Free", free)] {
            let wanted = format!("{name}AcceleratorSlots={value}");
            assert!(
                info.iter()
                    .any(|line| line.contains(&kind) && line.ends_with(&wanted)),
                "{kind}: {wanted} in {info:?}"
            );
        }
    }
    drop(slapd);

    // GLUE 2.1 LDIF with accelfed's schema: the accelerator classes, searchable by count.
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/ldap/accelfed-glue21.schema");
    let ldif21 = provide(&config, "ldif-glue21", &[]);
    let slapd = Slapd::start(&[&schema]).unwrap();
    load(&slapd, &ldif21);
    let mut found: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    let prefix = "GLUE2ComputingManagerAccelerator";
    for entry in slapd
        .search("o=glue", &format!("(objectClass={prefix})"), &[])
        .unwrap()
    {
        let get = |name: &str| -> u64 {
            entry
                .first(&format!("{prefix}{name}"))
                .unwrap_or_else(|| panic!("{prefix}{name} in {:?}", entry.attrs))
                .parse()
                .unwrap()
        };
        let id = entry.first(&format!("{prefix}ID")).unwrap_or(&entry.dn);
        let kind = id.rsplit_once("k8s/").map_or(id, |(_, kind)| kind);
        found.insert(
            kind.to_owned(),
            (
                get("TotalAcceleratorSlots"),
                get("UsedAcceleratorSlots"),
                get("FreeAcceleratorSlots"),
            ),
        );
    }
    assert_eq!(found, truth());
    drop(slapd);

    // In-cluster: the API server from the pod's environment, token and CA from the folder.
    let account = dir.path().join("serviceaccount");
    std::fs::create_dir_all(&account).unwrap();
    std::fs::write(account.join("token"), TOKEN).unwrap();
    std::fs::write(account.join("ca.crt"), &api.ca_pem).unwrap();
    let pod_dir = dir.path().join("in-cluster");
    std::fs::create_dir_all(&pod_dir).unwrap();
    let in_cluster = write_site(
        &pod_dir,
        &format!(
            "in_cluster = true\nservice_account_dir = \"{}\"\n",
            account.display()
        ),
    );
    let port = api.url.rsplit(':').next().unwrap().to_owned();
    let env = [
        ("KUBERNETES_SERVICE_HOST", "127.0.0.1".to_owned()),
        ("KUBERNETES_SERVICE_PORT", port),
    ];
    let from_pod: Value =
        serde_json::from_slice(&provide(&in_cluster, "glue21-json", &env)).unwrap();
    assert_eq!(manager_counts(&from_pod), truth());
    assert_eq!(api.seen.lock().unwrap().unauthorized, 0);
}
