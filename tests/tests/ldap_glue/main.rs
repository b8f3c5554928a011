//! The LDIF renderings against a real slapd: GLUE 2.0 mode into the stock GLUE20.schema, GLUE 2.1
//! mode with accelfed's schema file, GPU queries that a federation user would run, a site whose
//! name needs every kind of DN escaping, and BDII update cycles: a site BDII's layout aggregated
//! the way a top BDII does, a switch between the modes, repeated cycles.
//!
//! Update cycles go through the harness's `Slapd::update` rather than Debian's `bdii` package:
//! Debian 12's bdii-update calls `ldapadd -h HOST -p PORT`, which OpenLDAP 2.5's tools refuse, so
//! a stock BDII's cycle cannot run here; the harness applies the same add / modify / delete.

// A failing call here is the test failing; its error (slapd's log included) is the message.
#![allow(clippy::unwrap_used)]

mod top_bdii;

use std::path::{Path, PathBuf};

use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::render::ldif::{Dit, LdifMode, render, render_glue20, render_glue21};
use accelfed_tests::slapd::{Found, LdifEntry, Slapd, parse_ldif};

fn glue21_schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/ldap/accelfed-glue21.schema")
}

fn entry_count(ldif: &[u8]) -> usize {
    String::from_utf8_lossy(ldif)
        .lines()
        .filter(|line| line.starts_with("dn:"))
        .count()
}

fn dns(found: &[Found]) -> Vec<String> {
    let mut dns: Vec<String> = found.iter().map(|entry| entry.dn.clone()).collect();
    dns.sort();
    dns
}

#[test]
fn glue20_loads_into_the_stock_schema_without_rejections() {
    let slapd = Slapd::start(&[]).unwrap();
    let ldif = render_glue20(&snapshot("SAMPLE-SITE"));
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entry_count(&ldif), "{report}");
    // Every entry is there (o=glue is the harness's own).
    let all = slapd.search("o=glue", "(objectClass=*)", &["1.1"]).unwrap();
    assert_eq!(all.len(), entry_count(&ldif) + 1);

    // GPU facts are findable through OtherInfo: the environments with A100s.
    let found = slapd
        .search(
            "o=glue",
            "(&(objectClass=GLUE2ExecutionEnvironment)(GLUE2EntityOtherInfo=GPU.*.Model=*A100*))",
            &["GLUE2ResourceID"],
        )
        .unwrap();
    let ids: Vec<&str> = found
        .iter()
        .filter_map(|entry| entry.first("GLUE2ResourceID"))
        .collect();
    assert_eq!(found.len(), 3, "{ids:?}");
    let cloud = slapd
        .search(
            "o=glue",
            "(GLUE2ServiceType=org.cloud.iaas)",
            &["GLUE2ServiceID"],
        )
        .unwrap();
    assert_eq!(
        cloud[0].first("GLUE2ServiceID"),
        Some("urn:accelfed:SAMPLE-SITE:service:cloud")
    );
}

#[test]
fn glue21_loads_with_accelfeds_schema_and_answers_gpu_queries() {
    let schema = glue21_schema();
    let slapd = Slapd::start(&[&schema]).unwrap();
    let ldif = render_glue21(&snapshot("SAMPLE-SITE"));
    let report = slapd.load_ldif(&ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entry_count(&ldif), "{report}");

    // Environments offering at least 4 A100s per node: the A100 node type (4 physical, 4 logical)
    // and the MIG node type (4 logical MIG slices per node).
    let filter = "(&(objectClass=GLUE2AcceleratorEnvironment)(GLUE2AcceleratorEnvironmentLogicalAccelerators>=4)\
                  (GLUE2AcceleratorEnvironmentModel=*A100*))";
    let found = slapd
        .search("o=glue", filter, &["GLUE2AcceleratorEnvironmentID"])
        .unwrap();
    let mut ids: Vec<&str> = found
        .iter()
        .filter_map(|entry| entry.first("GLUE2AcceleratorEnvironmentID"))
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "urn:accelfed:SAMPLE-SITE:accelerator-env:hpc/a100-mig/mig-3g.40gb",
            "urn:accelfed:SAMPLE-SITE:accelerator-env:hpc/a100/gpu",
        ]
    );
    let dn = "GLUE2AcceleratorEnvironmentID=urn:accelfed:SAMPLE-SITE:accelerator-env:hpc/a100/gpu,\
              GLUE2ResourceID=urn:accelfed:SAMPLE-SITE:ee:hpc/a100,\
              GLUE2ManagerID=urn:accelfed:SAMPLE-SITE:manager:hpc,\
              GLUE2ServiceID=urn:accelfed:SAMPLE-SITE:service:hpc,GLUE2GroupID=resource,o=glue";
    assert!(dns(&found).contains(&dn.to_owned()), "{:?}", dns(&found));

    // Whole physical GPUs: only the full-A100 node type has 4 per node.
    let filter = "(&(objectClass=GLUE2AcceleratorEnvironment)(GLUE2AcceleratorEnvironmentPhysicalAccelerators>=4)\
                  (GLUE2AcceleratorEnvironmentModel=*A100*))";
    let found = slapd
        .search("o=glue", filter, &["GLUE2AcceleratorEnvironmentID"])
        .unwrap();
    assert_eq!(dns(&found), [dn]);

    // Ordering works on the cloud side too: flavors with at least 2 GPUs, and free capacity.
    let flavors = slapd
        .search(
            "o=glue",
            "(GLUE2CloudComputingVirtualAcceleratorNumber>=2)",
            &["GLUE2CloudComputingVirtualAcceleratorCloudComputingInstanceTypeForeignKey"],
        )
        .unwrap();
    assert_eq!(flavors.len(), 1);
    assert_eq!(
        flavors[0]
            .first("GLUE2CloudComputingVirtualAcceleratorCloudComputingInstanceTypeForeignKey"),
        Some("urn:accelfed:SAMPLE-SITE:instance-type:cloud/g1.a100x2")
    );
    let free = slapd
        .search(
            "o=glue",
            "(GLUE2CloudComputingManagerAcceleratorFreeAccelerators>=5)",
            &[],
        )
        .unwrap();
    assert_eq!(free.len(), 1);
    assert_eq!(
        free[0].first("GLUE2CloudComputingManagerAcceleratorVirtualizationType"),
        Some("passthrough")
    );
    assert!(
        slapd
            .search(
                "o=glue",
                "(GLUE2CloudComputingManagerAcceleratorFreeAccelerators>=6)",
                &[]
            )
            .unwrap()
            .is_empty()
    );
}

const AWKWARD: &str = "#Ünï, \"site\"+<x>;=\\";

/// Loads `ldif` of the site [`AWKWARD`] into a fresh slapd and finds the site back by its exact name.
fn load_and_find_awkward_site(ldif: &[u8], schemas: &[&Path]) {
    let slapd = Slapd::start(schemas).unwrap();
    let report = slapd.load_ldif(ldif).unwrap();
    assert_eq!(report.rejected, 0, "{report}");
    assert_eq!(report.loaded, entry_count(ldif), "{report}");

    let filter = format!(
        "(&(objectClass=GLUE2AdminDomain)(GLUE2DomainID={}))",
        ldap3::ldap_escape(AWKWARD)
    );
    let found = slapd
        .search("o=glue", &filter, &["GLUE2DomainID", "GLUE2EntityName"])
        .unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].first("GLUE2DomainID"), Some(AWKWARD));
    assert_eq!(found[0].first("GLUE2EntityName"), Some(AWKWARD));
    // The server parsed our escaped DN into the same value: a base search on its DN finds it.
    let again = slapd
        .search(&found[0].dn, "(objectClass=*)", &["GLUE2DomainID"])
        .unwrap();
    assert_eq!(again[0].first("GLUE2DomainID"), Some(AWKWARD));
    // Services link back to the site by its name.
    let filter = format!(
        "(GLUE2ServiceAdminDomainForeignKey={})",
        ldap3::ldap_escape(AWKWARD)
    );
    let services = slapd
        .search("GLUE2GroupID=resource,o=glue", &filter, &["GLUE2ServiceID"])
        .unwrap();
    assert_eq!(services.len(), 2, "{services:?}");
}

#[test]
fn a_site_with_special_characters_loads_and_is_found_by_its_exact_name_glue20() {
    load_and_find_awkward_site(&render_glue20(&snapshot(AWKWARD)), &[]);
}

#[test]
fn a_site_with_special_characters_loads_and_is_found_by_its_exact_name_glue21() {
    load_and_find_awkward_site(&render_glue21(&snapshot(AWKWARD)), &[&glue21_schema()]);
}

#[test]
fn a_rejected_entry_is_reported_with_its_dn_and_the_servers_reason() {
    let slapd = Slapd::start(&[]).unwrap();
    let ldif = b"dn: GLUE2GroupID=ok,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: ok\n\n\
                 dn: GLUE2GroupID=bad,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: bad\nnotAnAttribute: x\n";
    let report = slapd.load_ldif(ldif).unwrap();
    assert_eq!((report.loaded, report.rejected), (1, 1), "{report}");
    assert!(
        report.errors[0].starts_with("GLUE2GroupID=bad,o=glue: "),
        "{report}"
    );
    assert!(report.errors[0].contains("notAnAttribute"), "{report}");
}

#[test]
fn a_missing_schema_file_is_an_error_that_names_it() {
    let err = Slapd::start(&[Path::new("/nonexistent/x.schema")]).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x.schema"), "{err}");
}
