//! Whole-document tests of both LDIF modes: golden files, awkward names, no empty values, lossless
//! GPU facts. `UPDATE_GOLDEN=1 cargo test -p accelfed-schemas` rewrites the golden files.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::dn::first_rdn_value;
use super::schema_file;
use super::writer::parse;
use super::{Dit, LdifMode, render, render_glue20, render_glue21};
use crate::glue::sample::snapshot;
use crate::glue::{Service, SiteSnapshot};
use crate::gpu::GpuCount;

mod modes;

/// Compares `actual` with the file at `relative` (from the crate root), or rewrites the file when
/// `UPDATE_GOLDEN=1`. The failure names the first differing line, so a diff is easy to read.
fn assert_golden(relative: &str, actual: &[u8]) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("golden files live in a folder"))
            .expect("create folder");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|err| {
        panic!(
            "{}: {err}; run with UPDATE_GOLDEN=1 to create it",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let expected = String::from_utf8_lossy(&expected);
    let actual = String::from_utf8_lossy(actual);
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    for number in 1.. {
        let (want, got) = (expected_lines.next(), actual_lines.next());
        if want != got {
            panic!(
                "{} differs at line {number}:\n  expected: {want:?}\n  actual:   {got:?}\n\
                 (UPDATE_GOLDEN=1 rewrites the file; review the diff with git before committing)",
                path.display()
            );
        }
        if want.is_none() {
            break;
        }
    }
    panic!("{} differs (line endings?)", path.display());
}

fn dns(ldif: &[u8]) -> Vec<String> {
    parse(ldif)
        .into_iter()
        .map(|record| record[0].1.clone())
        .collect()
}

fn values(ldif: &[u8], attribute: &str) -> Vec<String> {
    parse(ldif)
        .into_iter()
        .flatten()
        .filter(|(name, _)| name == attribute)
        .map(|(_, value)| value)
        .collect()
}

#[test]
fn golden_glue20() {
    assert_golden(
        "tests/golden/sample-glue20.ldif",
        &render_glue20(&snapshot("SAMPLE-SITE")),
    );
}

#[test]
fn golden_glue21() {
    assert_golden(
        "tests/golden/sample-glue21.ldif",
        &render_glue21(&snapshot("SAMPLE-SITE")),
    );
}

#[test]
fn schema_file_is_what_the_code_defines() {
    assert_golden("ldap/accelfed-glue21.schema", schema_file().as_bytes());
}

#[test]
fn rendering_is_deterministic() {
    let site = snapshot("S");
    assert_eq!(render_glue20(&site), render_glue20(&site));
    assert_eq!(render_glue21(&site), render_glue21(&site));
}

#[test]
fn dit_layout_parents_first() {
    for ldif in [render_glue20(&snapshot("S")), render_glue21(&snapshot("S"))] {
        let dns = dns(&ldif);
        assert_eq!(dns[0], "GLUE2DomainID=S,o=glue");
        assert!(dns.contains(&"GLUE2GroupID=resource,o=glue".to_owned()));
        for (index, dn) in dns.iter().enumerate() {
            let parent = dn
                .split_once(",GLUE2")
                .map(|(_, rest)| format!("GLUE2{rest}"));
            match parent {
                Some(parent) => assert!(
                    dns[..index].contains(&parent),
                    "{dn} comes before its parent"
                ),
                None => assert!(dn.ends_with(",o=glue")),
            }
        }
        assert!(
            !dns.iter().any(|dn| dn == "o=glue"),
            "o=glue is the BDII's, not ours"
        );
    }
}

#[test]
fn no_attribute_value_is_empty_in_either_mode() {
    let mut site = snapshot("S");
    site.domain.other_info.insert("empty".into(), String::new());
    for ldif in [render_glue20(&site), render_glue21(&site)] {
        let text = String::from_utf8(ldif.clone()).expect("ASCII");
        for line in text
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with(' '))
        {
            let (_, value) = line.split_once(':').expect("attr: value");
            assert!(
                !value.trim_start_matches(':').trim().is_empty(),
                "empty value in {line:?}"
            );
        }
        assert!(
            parse(&ldif)
                .into_iter()
                .flatten()
                .all(|(_, value)| !value.is_empty())
        );
        assert!(
            !values(&ldif, "GLUE2EntityOtherInfo")
                .iter()
                .any(|v| v.starts_with("empty="))
        );
    }
}

const AWKWARD: &str = "#Ünï, \"site\"+<x>;=\\";

#[test]
fn a_site_with_special_characters_round_trips_through_the_dn() {
    let site = snapshot(AWKWARD);
    for ldif in [render_glue20(&site), render_glue21(&site)] {
        let records = parse(&ldif);
        let text = String::from_utf8(ldif).expect("ASCII");
        assert!(
            text.starts_with("dn:: "),
            "a non-ASCII DN is base64: {}",
            &text[..80]
        );
        let dn = &records[0][0].1;
        assert_eq!(first_rdn_value(dn).expect("valid DN"), AWKWARD);
        assert!(
            dn.starts_with(r#"GLUE2DomainID=\23Ünï\2C \22site\22\2B\3Cx\3E\3B\3D\5C,o=glue"#),
            "{dn}"
        );
        assert!(records[0].contains(&("GLUE2DomainID".to_owned(), AWKWARD.to_owned())));
        // IDs are percent-encoded, so service DNs stay plain ASCII.
        assert!(records.iter().skip(1).any(|record| {
            record[0]
                .1
                .starts_with("GLUE2ServiceID=urn:accelfed:%23%C3%9Cn")
        }));
    }
}

#[test]
fn awkward_other_info_values_survive_via_base64() {
    let mut site = snapshot("S");
    let awkward = [
        "line1\nline2",
        " leading",
        ":colon",
        "<angle",
        "trailing ",
        "Ünï",
        "a=b=c",
    ];
    for (index, value) in awkward.iter().enumerate() {
        site.domain
            .other_info
            .insert(format!("k{index}"), (*value).to_owned());
    }
    for ldif in [render_glue20(&site), render_glue21(&site)] {
        let other = values(&ldif, "GLUE2EntityOtherInfo");
        for (index, value) in awkward.iter().enumerate() {
            assert!(
                other.contains(&format!("k{index}={value}")),
                "k{index} lost: {other:?}"
            );
        }
        let text = String::from_utf8(ldif).expect("ASCII");
        assert!(
            text.lines()
                .all(|line| line.len() <= super::writer::LINE_WIDTH)
        );
    }
}

/// A site BDII publishes everything under its domain entry, the subtree a top BDII reads.
#[test]
fn the_site_layout_puts_every_entry_under_the_domain() {
    let site = snapshot("S");
    for mode in [LdifMode::Glue20, LdifMode::Glue21] {
        let records = parse(&render(&site, mode, Dit::Site));
        let domain = "GLUE2DomainID=S,o=glue";
        assert_eq!(records[0][0].1, domain);
        for record in &records {
            let dn = &record[0].1;
            assert!(dn == domain || dn.ends_with(&format!(",{domain}")), "{dn}");
        }
        let group = format!("GLUE2GroupID=resource,{domain}");
        assert!(records.iter().any(|record| record[0].1 == group));
        let services: Vec<&String> = records
            .iter()
            .map(|record| &record[0].1)
            .filter(|dn| {
                dn.strip_suffix(&format!(",{group}"))
                    .is_some_and(|rdn| rdn.contains("ServiceID=") && !rdn.contains(",G"))
            })
            .collect();
        assert_eq!(services.len(), 2, "{services:?}");
        // The same entries as the resource layout, only moved.
        let resource = parse(&render(&site, mode, Dit::Resource));
        assert_eq!(records.len(), resource.len());
    }
}

/// The EGI profile's OSFamily of a cloud instance type comes from the images its shares boot; the
/// placeholder stays only where they do not say or disagree.
#[test]
fn instance_types_take_the_os_family_of_their_shares_images() {
    let mut site = snapshot("S");
    let family_of_flavor = |site: &SiteSnapshot| -> Vec<String> {
        parse(&render_glue20(site))
            .into_iter()
            .filter(|record| record[0].1.contains(":instance-type:"))
            .flat_map(|record| {
                record
                    .into_iter()
                    .filter(|(name, _)| name == "GLUE2ExecutionEnvironmentOSFamily")
                    .map(|(_, value)| value)
            })
            .collect()
    };
    assert_eq!(family_of_flavor(&site), ["linux"]);
    for service in &mut site.services {
        if let Service::Cloud(cloud) = service {
            cloud.images[0].os_name = Some(crate::names::Text::new("Plan 9").expect("valid"));
        }
    }
    assert_eq!(family_of_flavor(&site), ["UNDEFINEDVALUE"]);
}
