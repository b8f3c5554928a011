//! `accelfed validate --config` renders the site's static services and checks the document as the
//! federation registry checks a push: a configuration that parses but whose document the registry
//! (or a BDII's LDAP) would refuse exits 2 with the reason.

#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

fn validate(source: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.toml");
    std::fs::write(&path, source).unwrap();
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["validate", "--config", path.to_str().unwrap()])
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .output()
        .expect("the binary runs")
}

const BATCH: &str = "\n[[static.batch]]\nid = \"hpc\"\nmanager = \"SLURM\"\n\
                     [[static.batch.node_type]]\nid = \"NODE\"\ncount = 2\n\
                     [[static.batch.node_type.gpu]]\nid = \"a100\"\nvendor = \"NVIDIA\"\n\
                     model = \"NVIDIA A100-SXM4-80GB\"\ncount = 4\n";

#[test]
fn ids_too_long_for_a_bdii_are_refused_with_exit_2() {
    let long_site = format!("[site]\nname = \"{}\"\n{BATCH}", "S".repeat(230));
    let out = validate(&long_site.replace("NODE", "a100"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("site.toml:5:6: static.batch[0].id: ComputingService ID")
            && stderr.contains("more than the 240 a BDII's slapd stores"),
        "{stderr}"
    );

    // Where the file alone makes the ID (the site's Location), the error points at the name.
    let located = format!(
        "[site]\nname = \"{}\"\n[site.location]\ncountry = \"CZ\"\n",
        "S".repeat(110)
    );
    let out = validate(&located);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("site.toml:2:8: site.name: Location ID"),
        "{stderr}"
    );

    // Each name fits alone; together they do not (an ID below the service): refused once the
    // document is built, naming the entity.
    let source = format!("[site]\nname = \"{}\"\n{BATCH}", "S".repeat(100));
    let out = validate(&source.replace("NODE", &"n".repeat(120)));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("site.toml: the site's document cannot be built")
            && stderr.contains("LDAP RDN"),
        "{stderr}"
    );
}

#[test]
fn a_site_whose_document_the_registry_accepts_is_valid() {
    let source = format!("[site]\nname = \"S\"\n{BATCH}").replace("NODE", "a100");
    let out = validate(&source);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("valid (site S, providers: static)"),
        "{stderr}"
    );
}
