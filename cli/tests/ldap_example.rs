//! `accelfed provide` on `examples/site.toml`, as a BDII would run it, loaded into a real slapd:
//! GLUE 2.0 mode into a server that has only the stock GLUE20.schema, GLUE 2.1 mode with
//! accelfed's schema file added, and the GPU query a federation user would run.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use accelfed_tests::slapd::Slapd;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn provide(format: &str) -> Vec<u8> {
    let example = manifest().join("../examples/site.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["provide", "--config"])
        .arg(&example)
        .args(["--format", format])
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn glue21_schema() -> PathBuf {
    manifest().join("../schemas/ldap/accelfed-glue21.schema")
}

fn entries(ldif: &[u8]) -> usize {
    String::from_utf8_lossy(ldif)
        .lines()
        .filter(|line| line.starts_with("dn:"))
        .count()
}

/// The values of `attribute` of every entry `filter` finds, sorted.
fn found(slapd: &Slapd, filter: &str, attribute: &str) -> Vec<String> {
    let mut values: Vec<String> = slapd
        .search("o=glue", filter, &[attribute])
        .expect("slapd answers the search")
        .iter()
        .filter_map(|entry| entry.first(attribute).map(str::to_owned))
        .collect();
    values.sort();
    values
}

#[test]
fn the_example_in_glue20_mode_loads_into_the_stock_schema_with_no_rejection() {
    let ldif = provide("ldif-glue20");
    let slapd = Slapd::start(&[]).unwrap();
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entries(&ldif), "{report}");

    // GPUs in 2.0 live in the execution environments' OtherInfo (2.0 has no cloud classes, so
    // flavors are execution environments too): the A100 node type and the two A100 flavors, not
    // the H100 nodes nor the GPU-less flavor.
    let filter =
        "(&(objectClass=GLUE2ExecutionEnvironment)(GLUE2EntityOtherInfo=GPU.*.Model=*A100*))";
    assert_eq!(
        found(&slapd, filter, "GLUE2ResourceID"),
        [
            "urn:accelfed:EXAMPLE-GPU:ee:hpc/a100",
            "urn:accelfed:EXAMPLE-GPU:instance-type:cloud/g1.a100x1",
            "urn:accelfed:EXAMPLE-GPU:instance-type:cloud/g1.a100x4",
        ]
    );
    let site = found(&slapd, "(objectClass=GLUE2AdminDomain)", "GLUE2DomainID");
    assert_eq!(site, ["EXAMPLE-GPU"]);
}

#[test]
fn the_example_in_glue21_mode_loads_and_answers_the_four_a100s_query_exactly() {
    let ldif = provide("ldif-glue21");
    let schema = glue21_schema();
    let slapd = Slapd::start(&[&schema]).unwrap();
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entries(&ldif), "{report}");

    // "Where can I get at least 4 A100s at once?": the batch node type with 4 per node and the
    // cloud flavor with 4 per VM; not the 1-GPU flavor, not the H100 nodes.
    let filter = "(|\
        (&(objectClass=GLUE2AcceleratorEnvironment)\
          (GLUE2AcceleratorEnvironmentLogicalAccelerators>=4)\
          (GLUE2AcceleratorEnvironmentModel=*A100*))\
        (&(objectClass=GLUE2CloudComputingVirtualAccelerator)\
          (GLUE2CloudComputingVirtualAcceleratorNumber>=4)\
          (GLUE2CloudComputingVirtualAcceleratorModel=*A100*)))";
    let ids: Vec<String> = slapd
        .search("o=glue", filter, &["*"])
        .unwrap()
        .iter()
        .map(|entry| {
            entry
                .first("GLUE2AcceleratorEnvironmentID")
                .or(entry.first("GLUE2CloudComputingVirtualAcceleratorID"))
                .unwrap_or(&entry.dn)
                .to_owned()
        })
        .collect();
    let mut ids = ids;
    ids.sort();
    assert_eq!(
        ids,
        [
            "urn:accelfed:EXAMPLE-GPU:accelerator-env:hpc/a100/a100",
            "urn:accelfed:EXAMPLE-GPU:virtual-accelerator:cloud/g1.a100x4",
        ]
    );

    // Capacity is searchable too: the atlas share of the A100 pool has 4 free GPUs, biomed 2.
    let free = found(
        &slapd,
        "(GLUE2CloudComputingShareAcceleratorFreeAccelerators>=3)",
        "GLUE2CloudComputingShareAcceleratorID",
    );
    assert_eq!(
        free,
        ["urn:accelfed:EXAMPLE-GPU:share-accelerator:cloud/atlas/a100-pt"]
    );
}
