//! The federation registry end to end: the central service (in-process, as `accelfed serve`
//! assembles it) with the test CA, two sites (the example site with its cloud and cluster, and a
//! Slurm-shaped batch-only site) push with `accelfed provide --publish registry` and their own tokens; `accelfed query`
//! answers with exactly the expected offers; a site with a short Validity turns stale and is
//! marked; a token of the wrong site and bad documents are refused with a reason, and what was
//! stored stays.

#![allow(clippy::unwrap_used)]

mod consistency;
mod gpu_filters;
mod history;
mod metrics;
mod publish_table;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use accelfed_tests::central::{Server, TOKEN_A, TOKEN_B, accelfed, sha256_hex, stderr};
use accelfed_tests::pki::{PkiFiles, pki};

/// central.toml with the registry on a free port, a small document limit, a history of 3
/// documents per site, two sites.
fn central_config(dir: &Path, pki: &PkiFiles) -> PathBuf {
    let path = dir.join("central.toml");
    std::fs::write(
        &path,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\n\
             [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n\
             [database]\npath = \"{}\"\n\n[registry]\nmax_document_bytes = 300000\nkeep_history = 3\n\n\
             [sites.EXAMPLE-GPU]\ntoken_sha256 = \"{}\"\n\n[sites.EXAMPLE-HPC]\ntoken_sha256 = \"{}\"\n",
            pki.cert.display(),
            pki.key.display(),
            dir.join("accounting.sqlite").display(),
            sha256_hex(TOKEN_A),
            sha256_hex(TOKEN_B),
        ),
    )
    .unwrap();
    path
}

fn example(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// The cloud site: the example site as shipped. The batch site: the example's Slurm cluster alone,
/// under another name, with a Validity of 2 s so it turns stale during the test.
fn sites(dir: &Path) -> (PathBuf, PathBuf) {
    let cloud = dir.join("cloud.toml");
    std::fs::write(&cloud, example("site.toml")).unwrap();
    let text = example("site.toml");
    let cut = text.find("[[static.cloud]]").unwrap();
    let batch_text = text[..cut]
        .replace("name = \"EXAMPLE-GPU\"", "name = \"EXAMPLE-HPC\"")
        .replace("validity = 3600", "validity = 2");
    assert!(batch_text.contains("EXAMPLE-HPC") && batch_text.contains("validity = 2"));
    let batch = dir.join("batch.toml");
    std::fs::write(&batch, batch_text).unwrap();
    (cloud, batch)
}

/// Pushes with the flags, which override the example's `[publish.registry]` (it names
/// registry.example.org); `publish_table` pushes with the table.
fn push(server: &Server, pki: &PkiFiles, config: &Path, token_file: &Path) -> Output {
    accelfed()
        .args(["provide", "--publish", "registry", "--config"])
        .arg(config)
        .args(["--registry-url", &server.url(), "--registry-token-file"])
        .arg(token_file)
        .arg("--registry-ca")
        .arg(&pki.ca)
        .output()
        .unwrap()
}

fn query(server: &Server, pki: &PkiFiles, args: &[&str]) -> Vec<serde_json::Value> {
    let output = accelfed()
        .args(["query", "--url", &server.url(), "--ca"])
        .arg(&pki.ca)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// (site, resource, GPUs each, VOs, fresh) of each offer.
fn summary(offers: &[serde_json::Value]) -> Vec<(String, String, f64, String, bool)> {
    offers
        .iter()
        .map(|offer| {
            (
                offer["site"].as_str().unwrap().to_owned(),
                offer["resource_name"].as_str().unwrap().to_owned(),
                offer["gpus_each"].as_f64().unwrap(),
                offer["vos"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|vo| vo.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join(","),
                offer["fresh"].as_bool().unwrap(),
            )
        })
        .collect()
}

/// `PUT /registry/v1/document` with curl-free raw HTTPS: through the publisher library.
fn put_raw(server: &Server, pki: &PkiFiles, token: &str, body: Vec<u8>) -> Result<String, String> {
    let ca = std::fs::read(&pki.ca).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
            accelfed_publishers::registry::push(&client, &server.url(), token, body).await
        })
        .map_err(|error| error.to_string())
}

#[test]
fn two_sites_push_and_a_query_finds_their_a100s() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let server = Server::start(&central_config(dir.path(), &pki));
    let (cloud, batch) = sites(dir.path());
    let token_a = dir.path().join("a.token");
    let token_b = dir.path().join("b.token");
    std::fs::write(&token_a, format!("{TOKEN_A}\n")).unwrap();
    std::fs::write(&token_b, format!("{TOKEN_B}\n")).unwrap();

    let pushed = push(&server, &pki, &cloud, &token_a);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    // First pushed with an hour's Validity, so "fresh" below holds however slow the machine is
    // (a 2 s Validity raced the wall clock between push and query).
    let short = std::fs::read_to_string(&batch).unwrap();
    std::fs::write(&batch, short.replace("validity = 2", "validity = 3600")).unwrap();
    let pushed = push(&server, &pki, &batch, &token_b);
    assert!(pushed.status.success(), "{}", stderr(&pushed));

    let wanted = ["--model", "A100", "--min-gpus", "4", "--vo", "atlas"];
    let offers = summary(&query(&server, &pki, &wanted));
    println!("{offers:#?}");
    assert_eq!(
        offers,
        vec![
            (
                "EXAMPLE-GPU".into(),
                "A100 nodes".into(),
                4.0,
                "atlas,biomed".into(),
                true
            ),
            (
                "EXAMPLE-GPU".into(),
                "g1.a100x4".into(),
                4.0,
                "atlas".into(),
                true
            ),
            (
                "EXAMPLE-HPC".into(),
                "A100 nodes".into(),
                4.0,
                "atlas,biomed".into(),
                true
            ),
        ]
    );

    // Pushed again with a Validity of 2 s, which has run out 3 s later however slow the machine
    // is: still listed, marked; --fresh leaves it out.
    std::fs::write(&batch, &short).unwrap();
    let pushed = push(&server, &pki, &batch, &token_b);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    std::thread::sleep(Duration::from_secs(3));
    let offers = summary(&query(&server, &pki, &wanted));
    assert_eq!(offers.len(), 3);
    assert!(!offers[2].4, "EXAMPLE-HPC is stale: {offers:?}");
    assert!(offers[0].4 && offers[1].4);
    let mut fresh_args = wanted.to_vec();
    fresh_args.push("--fresh");
    let fresh = summary(&query(&server, &pki, &fresh_args));
    assert_eq!(fresh.len(), 2);
    assert!(fresh.iter().all(|offer| offer.0 == "EXAMPLE-GPU"));

    // The table marks it too.
    let table = accelfed()
        .args(["query", "--url", &server.url(), "--ca"])
        .arg(&pki.ca)
        .args(wanted)
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.starts_with("SITE"), "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("EXAMPLE-HPC") && l.ends_with("STALE")),
        "{table}"
    );

    // The batch site's token cannot push the cloud site's document; nothing stored changes.
    let refused = push(&server, &pki, &cloud, &token_b);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains(
            "describes site \"EXAMPLE-GPU\" but the token belongs to site \"EXAMPLE-HPC\""
        ),
        "{}",
        stderr(&refused)
    );
    assert_eq!(summary(&query(&server, &pki, &wanted)), offers);

    // Bad documents, each refused with its reason; the stored ones stay.
    let good: serde_json::Value = {
        let output = accelfed()
            .args(["provide", "--config"])
            .arg(&batch)
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let mut unknown_class = good.clone();
    unknown_class["Spaceship"] = serde_json::json!([]);
    let mut duplicate = good.clone();
    duplicate["Location"][0]["ID"] = good["Contact"][0]["ID"].clone();
    let mut schema = good.clone();
    schema["Location"][0]["Latitude"] = serde_json::json!(123.0);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"{\"AdminDomain\": [".to_vec(), "invalid JSON"),
        (
            unknown_class.to_string().into_bytes(),
            "unknown class \"Spaceship\"",
        ),
        (duplicate.to_string().into_bytes(), "appears twice"),
        (
            schema.to_string().into_bytes(),
            "schema violation at /Location/0/Latitude",
        ),
        (vec![b' '; 300_001], "document too large"),
    ];
    for (body, reason) in cases {
        let error = put_raw(&server, &pki, TOKEN_B, body).unwrap_err();
        assert!(error.contains(reason), "{reason}: {error}");
    }
    let error = put_raw(&server, &pki, "not-a-token", b"{}".to_vec()).unwrap_err();
    assert!(error.contains("401"), "{error}");
    assert_eq!(summary(&query(&server, &pki, &wanted)), offers);
}

/// A node type of 2 nodes with 2 T4s each, time-sliced into 4 replicas per GPU, for the batch site.
const T4_TIME_SLICED: &str = r#"
[[static.batch.node_type]]
id = "t4-shared"
name = "T4 time-sliced nodes"
count = 2
busy = 1
sockets = 1
cpus = 32
memory = "256 GB"

[[static.batch.node_type.gpu]]
id = "t4"
vendor = "NVIDIA"
model = "Tesla T4"
memory = "15360 MiB"
compute_capability = "7.5"
virtualization = "time-slicing"
count = 2
slices = 8
used = 6
sharing = { mode = "time-slicing", replicas = 4 }

[[static.batch.share]]
id = "t4"
queue = "t4"
vos = ["biomed"]
node_types = ["t4-shared"]
"#;
