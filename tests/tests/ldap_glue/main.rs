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

/// Object classes of the GLUE 2.1 accelerator entries.
const ACCELERATOR_CLASSES: [&str; 5] = [
    "GLUE2AcceleratorEnvironment",
    "GLUE2ComputingManagerAccelerator",
    "GLUE2ComputingShareAccelerator",
    "GLUE2CloudComputingManagerAccelerator",
    "GLUE2CloudComputingShareAccelerator",
];

/// The DNs of the entries of `entries` that carry GPUs: in GLUE 2.0 mode those with folded GPU
/// facts (`GPU.<lid>.*` OtherInfo), in GLUE 2.1 mode the accelerator entries.
fn gpu_dns(entries: &[LdifEntry]) -> Vec<String> {
    let mut dns: Vec<String> = entries
        .iter()
        .filter(|entry| {
            entry
                .values("GLUE2EntityOtherInfo")
                .iter()
                .any(|value| value.starts_with("GPU."))
                || entry
                    .values("objectClass")
                    .iter()
                    .any(|class| ACCELERATOR_CLASSES.contains(&class.as_str()))
        })
        .map(|entry| entry.dn.clone())
        .collect();
    dns.sort();
    dns
}

const GRID: &str = "GLUE2GroupID=grid,o=glue";

/// What a top BDII does with a site: reads the subtree `GLUE2DomainID=<site>,o=glue` from the
/// site BDII and publishes it under `GLUE2GroupID=grid,o=glue`.
fn aggregate_as_top_bdii(site_bdii: &Slapd, site: &str) -> Vec<LdifEntry> {
    let base = format!("GLUE2DomainID={site},o=glue");
    let mut entries = vec![LdifEntry {
        dn: GRID.to_owned(),
        attrs: vec![
            ("objectClass".into(), vec!["GLUE2Group".into()]),
            ("GLUE2GroupID".into(), vec!["grid".into()]),
        ],
    }];
    let mut found = site_bdii.entries(&base).unwrap();
    // Parents first, as a BDII loads them.
    found.sort_by_key(|entry| entry.dn.matches(',').count());
    for entry in found {
        let head = entry.dn.strip_suffix(",o=glue").unwrap();
        entries.push(LdifEntry {
            dn: format!("{head},{GRID}"),
            attrs: entry.attrs,
        });
    }
    entries
}

#[test]
fn a_top_bdii_aggregating_the_site_layout_sees_every_gpu_entry() {
    let schema = glue21_schema();
    let site = snapshot("SAMPLE-SITE");
    for mode in [LdifMode::Glue20, LdifMode::Glue21] {
        let ldif = render(&site, mode, Dit::Site);
        let written = parse_ldif(&ldif).unwrap();
        let expected: Vec<String> = gpu_dns(&written)
            .into_iter()
            .map(|dn| format!("{},{GRID}", dn.strip_suffix(",o=glue").unwrap()))
            .collect();
        assert!(expected.len() >= 4, "{mode:?}: {expected:?}");

        let site_bdii = Slapd::start(&[&schema]).unwrap();
        let report = site_bdii.update(&written).unwrap();
        assert!(report.refused.is_empty(), "{mode:?}: {report}");
        assert_eq!(report.added, written.len());

        let top_bdii = Slapd::start(&[&schema]).unwrap();
        let report = top_bdii
            .update(&aggregate_as_top_bdii(&site_bdii, "SAMPLE-SITE"))
            .unwrap();
        assert!(report.refused.is_empty(), "{mode:?}: {report}");
        let published = top_bdii.entries(GRID).unwrap();
        assert_eq!(published.len(), written.len() + 1, "{mode:?}");
        assert_eq!(gpu_dns(&published), expected, "{mode:?}");

        // The resource BDII's layout keeps services outside the domain's subtree: a top BDII
        // reading the site that way would see no GPU at all.
        let resource = Slapd::start(&[&schema]).unwrap();
        let report = resource
            .update(&parse_ldif(&render(&site, mode, Dit::Resource)).unwrap())
            .unwrap();
        assert!(report.refused.is_empty(), "{mode:?}: {report}");
        let domain = resource
            .entries("GLUE2DomainID=SAMPLE-SITE,o=glue")
            .unwrap();
        assert!(gpu_dns(&domain).is_empty(), "{mode:?}");
    }
}

#[test]
fn switching_a_bdii_between_the_modes_leaves_no_entry_refused() {
    let schema = glue21_schema();
    let site = snapshot("SAMPLE-SITE");
    for dit in [Dit::Resource, Dit::Site] {
        let glue20 = parse_ldif(&render(&site, LdifMode::Glue20, dit)).unwrap();
        let glue21 = parse_ldif(&render(&site, LdifMode::Glue21, dit)).unwrap();
        let bdii = Slapd::start(&[&schema]).unwrap();
        for (step, entries) in [
            ("2.0", &glue20),
            ("to 2.1", &glue21),
            ("back to 2.0", &glue20),
        ] {
            let report = bdii.update(entries).unwrap();
            assert!(report.refused.is_empty(), "{dit:?} {step}: {report}");
            let mut have: Vec<String> = bdii
                .entries("o=glue")
                .unwrap()
                .into_iter()
                .map(|entry| entry.dn)
                .collect();
            let mut want: Vec<String> = entries.iter().map(|entry| entry.dn.clone()).collect();
            have.sort();
            want.sort();
            assert_eq!(have, want, "{dit:?} {step}");
        }
    }
}

#[test]
fn a_site_with_special_characters_stays_stable_across_update_cycles() {
    let schema = glue21_schema();
    for (mode, dit) in [
        (LdifMode::Glue20, Dit::Site),
        (LdifMode::Glue21, Dit::Resource),
    ] {
        let entries = parse_ldif(&render(&snapshot(AWKWARD), mode, dit)).unwrap();
        let bdii = Slapd::start(&[&schema]).unwrap();
        let first = bdii.update(&entries).unwrap();
        assert!(first.refused.is_empty(), "{mode:?}: {first}");
        assert_eq!(first.added, entries.len(), "{mode:?}: {first}");
        for cycle in [2, 3] {
            // slapd hands back every DN spelled as we wrote it, so nothing is deleted and added
            // again, and nothing changed.
            let report = bdii.update(&entries).unwrap();
            assert!(report.is_unchanged(), "{mode:?} cycle {cycle}: {report}");
        }
        let domain = bdii
            .entries("o=glue")
            .unwrap()
            .into_iter()
            .find(|entry| {
                entry
                    .values("objectClass")
                    .iter()
                    .any(|c| c == "GLUE2AdminDomain")
            })
            .unwrap();
        assert_eq!(domain.values("GLUE2DomainID"), [AWKWARD]);
        assert!(
            domain
                .dn
                .starts_with(r#"GLUE2DomainID=\23Ünï\2C \22site\22\2B\3Cx\3E\3B\3D\5C,"#),
            "{}",
            domain.dn
        );
    }
}

/// The longest site names accelfed publishes, plain and all DN specials (each escaped to three
/// characters): the longest one `SiteSnapshot::validate` accepts loads into slapd whole in both
/// LDIF modes and is found by its name; one character more is refused before anything is rendered,
/// naming the entity, because slapd's back-mdb would refuse its entries (error 80).
#[test]
fn the_longest_site_names_accepted_load_into_slapd_and_one_more_is_refused() {
    use accelfed_schemas::glue::SnapshotError;
    use accelfed_schemas::names::MAX_NAME_CHARS;

    for unit in ["a", ","] {
        let longest = (1..=MAX_NAME_CHARS)
            .rev()
            .find(|n| snapshot(&unit.repeat(*n)).validate().is_ok())
            .unwrap();
        let over = snapshot(&unit.repeat(longest + 1)).validate().unwrap_err();
        assert!(
            matches!(over, SnapshotError::TooLongForLdap { .. }),
            "{over}"
        );
        assert!(over.to_string().contains("shorten the site name"), "{over}");

        let site = unit.repeat(longest);
        let accepted = snapshot(&site);
        for (ldif, schemas) in [
            (render_glue20(&accepted), vec![]),
            (render_glue21(&accepted), vec![glue21_schema()]),
        ] {
            let schemas: Vec<&Path> = schemas.iter().map(PathBuf::as_path).collect();
            let slapd = Slapd::start(&schemas).unwrap();
            let report = slapd.load_ldif(&ldif).unwrap();
            assert_eq!(report.rejected, 0, "{unit:?} x {longest}: {report}");
            assert_eq!(report.loaded, entry_count(&ldif), "{report}");
            let filter = format!(
                "(&(objectClass=GLUE2AdminDomain)(GLUE2DomainID={}))",
                ldap3::ldap_escape(site.as_str())
            );
            let found = slapd.search("o=glue", &filter, &["GLUE2DomainID"]).unwrap();
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].first("GLUE2DomainID"), Some(site.as_str()));
        }
    }
}
