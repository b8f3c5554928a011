//! The two LDIF modes side by side: GLUE 2.0 keeps every GPU fact (in OtherInfo), GLUE 2.1 uses
//! only its schema's attributes, pieces and entries give the same bytes, and no DN changes class
//! between modes.

use super::*;

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

/// The LDIF of each mode three ways: written entry by entry from [`crate::render::ldif::entry::LdapEntry`]s, and
/// straight from the plan in one piece and in several (as threads render a large site).
#[test]
fn pieces_and_entries_give_the_same_bytes() {
    use crate::render::ldif::mapping::Stamp;
    use crate::render::ldif::tree::stamp;
    use crate::render::ldif::writer::LdifWriter;
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
