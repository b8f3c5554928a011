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

fn cloud(site: &mut SiteSnapshot) -> &mut crate::glue::CloudService {
    site.services
        .iter_mut()
        .find_map(|service| match service {
            Service::Cloud(cloud) => Some(cloud),
            Service::Computing(_) => None,
        })
        .expect("the sample has a cloud")
}

#[test]
fn glue20_keeps_every_gpu_fact_in_other_info() {
    let ldif = render_glue20(&snapshot("S"));
    let other: BTreeSet<String> = values(&ldif, "GLUE2EntityOtherInfo").into_iter().collect();
    for expected in [
        "GPU.gpu.Model=NVIDIA A100-SXM4-80GB",
        "GPU.gpu.Vendor=NVIDIA",
        "GPU.gpu.Memory=81920",
        "GPU.gpu.ComputeCapability=8.0",
        "GPU.gpu.PhysicalAccelerators=4",
        "GPU.gpu.LogicalAccelerators=4",
        "GPU.gpu.TotalAcceleratorSlots=16",
        "GPU.gpu.UsedAcceleratorSlots=6",
        "GPU.gpu.FreeAcceleratorSlots=6",
        "GPU.mig-3g.40gb.VirtualizationType=mig",
        "GPU.mig-3g.40gb.MIGProfile=3g.40gb",
        "GPU.mig-3g.40gb.Memory=40960",
        "GPU.gpu%2Fa100.MaxAcceleratorSlotsPerJob=8",
        "GPU.a100-passthrough.TotalAccelerators=8",
        "GPU.g1.a100x2.Number=2",
        "GPU.g1.a100x2.VirtualizationType=passthrough",
        "MaxAccelerators=8",
        "cuda_version=12.4",
        "gpu_driver_version=550.54.15",
    ] {
        assert!(
            other.contains(expected),
            "{expected} missing from {other:#?}"
        );
    }
    let classes: BTreeSet<String> = values(&ldif, "objectClass").into_iter().collect();
    assert!(
        classes
            .iter()
            .all(|class| !class.contains("Accelerator") && !class.contains("Cloud")),
        "{classes:?}"
    );
    assert!(values(&ldif, "GLUE2ServiceType").contains(&"org.cloud.iaas".to_owned()));
}

#[test]
fn fractional_counts_are_never_rounded() {
    let mut site = snapshot("S");
    let half = GpuCount::new(0.5).expect("valid");
    if let Some(accelerator) = cloud(&mut site).instance_types[0].accelerator.as_mut() {
        accelerator.count = half;
    }
    let glue21 = render_glue21(&site);
    assert!(values(&glue21, "GLUE2CloudComputingVirtualAcceleratorNumber").is_empty());
    assert!(values(&glue21, "GLUE2EntityOtherInfo").contains(&"Number=0.5".to_owned()));
    let glue20 = render_glue20(&site);
    assert!(
        values(&glue20, "GLUE2EntityOtherInfo").contains(&"GPU.g1.a100x2.Number=0.5".to_owned())
    );
}

#[test]
fn glue21_uses_only_glue20_attributes_and_those_of_its_own_schema() {
    let schema = schema_file();
    let glue20_names: BTreeSet<String> = parse(&render_glue20(&snapshot("S")))
        .into_iter()
        .flatten()
        .map(|(name, _)| name)
        .collect();
    let glue21 = render_glue21(&snapshot("S"));
    for (name, value) in parse(&glue21).into_iter().flatten() {
        if name == "dn" || glue20_names.contains(&name) {
            continue;
        }
        if name == "objectClass" {
            assert!(glue20_names.contains("objectClass"));
            let known = schema.contains(&format!("NAME '{value}'")) || value.starts_with("GLUE2");
            assert!(known, "unknown class {value}");
            continue;
        }
        assert!(
            schema.contains(&format!("NAME '{name}'")),
            "{name} is not in accelfed-glue21.schema"
        );
    }
    let models = values(&glue21, "GLUE2AcceleratorEnvironmentModel");
    assert_eq!(models, ["NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"]);
    assert_eq!(
        values(&glue21, "GLUE2AcceleratorEnvironmentLogicalAccelerators"),
        ["4", "4"]
    );
}

/// The LDIF of each mode three ways: written entry by entry from [`super::entry::LdapEntry`]s, and
/// straight from the plan in one piece and in several (as threads render a large site).
#[test]
fn pieces_and_entries_give_the_same_bytes() {
    use super::mapping::Stamp;
    use super::tree::stamp;
    use super::writer::LdifWriter;
    use crate::render::parallel::split_exactly;

    let site = snapshot("S");
    let entities = site.entities();
    let stamp: Stamp = stamp(&site);
    let modes = [
        (LdifMode::Glue20, Dit::Resource, render_glue20(&site)),
        (LdifMode::Glue21, Dit::Resource, render_glue21(&site)),
        (
            LdifMode::Glue20,
            Dit::Site,
            render(&site, LdifMode::Glue20, Dit::Site),
        ),
        (
            LdifMode::Glue21,
            Dit::Site,
            render(&site, LdifMode::Glue21, Dit::Site),
        ),
    ];
    for (mode, dit, rendered) in &modes {
        let mappings = mode.mappings();
        let plan = mode.plan(&entities, &stamp, &mappings, *dit);
        let mut writer = LdifWriter::new();
        plan.each(|entry| entry.write(&mut writer));
        let by_entry = writer.finish();
        assert!(by_entry == *rendered, "entry by entry");
        for parts in [1, 2, 5, entities.len()] {
            let ranges = split_exactly(&plan.weights(), parts);
            assert!(plan.render_in(&ranges) == *rendered, "{parts} pieces");
        }
    }
}

/// The object classes of every DN of an LDIF.
fn classes_by_dn(ldif: &[u8]) -> std::collections::BTreeMap<String, Vec<String>> {
    parse(ldif)
        .into_iter()
        .map(|record| {
            let dn = record[0].1.clone();
            let classes = record
                .iter()
                .filter(|(name, _)| name == "objectClass")
                .map(|(_, value)| value.clone())
                .collect();
            (dn, classes)
        })
        .collect()
}

/// slapd refuses to change an entry's structural class (objectClassModsProhibited), so a BDII
/// switched from one mode to the other must find no DN whose classes differ.
#[test]
fn no_dn_has_different_object_classes_in_the_two_modes() {
    let site = snapshot("S");
    for dit in [Dit::Resource, Dit::Site] {
        let glue20 = classes_by_dn(&render(&site, LdifMode::Glue20, dit));
        let glue21 = classes_by_dn(&render(&site, LdifMode::Glue21, dit));
        let mut shared = 0;
        for (dn, classes) in &glue20 {
            if let Some(other) = glue21.get(dn) {
                assert_eq!(classes, other, "{dn} ({dit})");
                shared += 1;
            }
        }
        // The site, the batch service's subtree and the group are the same entries in both.
        assert!(shared >= 10, "{shared} shared DNs ({dit})");
        let cloud_service = glue21
            .iter()
            .find(|(_, classes)| classes.iter().any(|c| c == "GLUE2CloudComputingService"))
            .expect("a cloud service in GLUE 2.1 mode");
        assert!(
            cloud_service
                .0
                .starts_with("GLUE2CloudComputingServiceID=urn:accelfed:S:service:cloud,"),
            "{}",
            cloud_service.0
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
