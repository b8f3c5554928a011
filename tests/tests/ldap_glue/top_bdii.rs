//! A site BDII seen from a top BDII and over time: aggregating the site layout keeps every GPU
//! entry, switching modes refuses nothing, awkward names stay stable across update cycles, and the
//! longest accepted names load while one more is refused.

use super::*;

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
