//! Flavors on the captured cloud: old clouds without embedded flavors, a configured OS family,
//! private flavors shared with some projects, NIC aliases beside GPUs.

use super::*;

#[test]
fn old_clouds_without_embedded_flavors_count_through_the_flavor_list() {
    let new = map(
        &config(),
        &captured_state("nova-servers-detail-alltenants-2.93.json"),
    );
    let old = map(
        &config(),
        &captured_state("nova-servers-detail-alltenants-2.1.json"),
    );
    assert!(old.warnings.is_empty(), "{:?}", old.warnings);
    let total = |m: &accelfed_provider::openstack::Mapped| {
        m.usage.iter().map(|u| u.count().get()).sum::<f64>()
    };
    assert_eq!(total(&old), total(&new));
}

/// The cloud's `os_family` is every instance type's OSFamily (the captured images say no OS), and
/// unset leaves it to the images; a value outside GLUE2's list does not parse.
#[test]
fn a_configured_os_family_is_every_instance_types() {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let parse = |value: &str| {
        let text = CONFIG.replacen(
            "[[openstack]]\n",
            &format!("[[openstack]]\nos_family = {value}\n"),
            1,
        );
        toml::from_str::<File>(&text).map(|mut file| file.openstack.remove(0))
    };
    let state = captured_state("nova-servers-detail-alltenants-2.93.json");
    let families = |config: &OpenstackConfig| {
        map(config, &state)
            .service
            .instance_types
            .iter()
            .map(|flavor| flavor.os_family)
            .collect::<Vec<_>>()
    };
    let stated = families(&parse("\"linux\"").unwrap());
    assert!(!stated.is_empty());
    assert!(
        stated.iter().all(|f| *f == Some(OsFamily::Linux)),
        "{stated:?}"
    );
    assert!(families(&config()).iter().all(Option::is_none));
    let refused = parse("\"debian\"").unwrap_err().to_string();
    assert!(refused.contains("is not a GLUE2 OSFamily"), "{refused}");
}

#[test]
fn private_flavors_reach_only_the_projects_they_are_shared_with() {
    let mut state = captured_state("nova-servers-detail-alltenants-2.93.json");
    let flavor = state
        .flavors
        .iter_mut()
        .find(|f| f.name == "g1.v100x2")
        .unwrap();
    flavor.is_public = false;
    let id = flavor.id.clone();
    state
        .flavor_access
        .insert(id, vec!["d4c2c49480524bd1b0c937dd2cd459d0".into()]);
    state.project_errors.insert(
        "390d564ccd6c4875a2cd4d698a7bc9d0".into(),
        "quota: 503".into(),
    );
    let mapped = map(&config(), &state);
    let flavor = mapped
        .service
        .instance_types
        .iter()
        .find(|t| t.name.as_str() == "g1.v100x2")
        .unwrap();
    assert_eq!(flavor.shares.len(), 1);
    assert_eq!(
        flavor.shares[0].as_str(),
        "d4c2c49480524bd1b0c937dd2cd459d0"
    );
    let atlas = mapped
        .service
        .shares
        .iter()
        .find(|s| s.access.vo.as_str() == "atlas")
        .unwrap();
    assert_eq!(atlas.running_vm, None);
    assert!(mapped.service.other_info["degraded_shares"].contains("quota: 503"));
}

#[test]
fn nic_aliases_neither_make_a_gpu_flavor_nor_hide_the_gpu_beside_them() {
    // The recorded cloud plus two flavors a site with SR-IOV NICs has: one V100 with a NIC, and a
    // NIC alone; the NIC alias is described as `type = "Other"`, as the configuration allows.
    let source = format!(
        "{CONFIG}\n[openstack.pci_alias.nic-sriov]\ntype = \"Other\"\nvendor = \"Mellanox\"\nmodel = \"ConnectX-6 Virtual Function\"\nvendor_id = \"15b3\"\nproduct_id = \"101c\"\n"
    );
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let config = toml::from_str::<File>(&source).unwrap().openstack.remove(0);
    let mut state = captured_state("nova-servers-detail-alltenants-2.93.json");
    let recorded = state
        .flavors
        .iter()
        .find(|f| f.name == "g1.v100x1")
        .unwrap()
        .clone();
    for (id, name, alias) in [
        (
            "d1f0a7c2-0000-4000-8000-000000000001",
            "g1.v100-nic",
            "nvidia-v100:1,nic-sriov:1",
        ),
        (
            "d1f0a7c2-0000-4000-8000-000000000002",
            "n1.sriov",
            "nic-sriov:2",
        ),
    ] {
        let mut flavor = recorded.clone();
        flavor.id = id.into();
        flavor.name = name.into();
        flavor.extra_specs = Some(
            [("pci_passthrough:alias".to_owned(), alias.to_owned())]
                .into_iter()
                .collect(),
        );
        state.flavors.push(flavor);
    }
    let mapped = map(&config, &state);
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);

    let snapshot = snapshot(Service::Cloud(mapped.service.clone()));
    snapshot.validate().unwrap();
    let json =
        accelfed_schemas::render::render(&snapshot, accelfed_schemas::render::Format::Glue21Json);
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    // one more GPU flavor than the recorded cloud's three, each naming a V100 or an A100 vGPU
    let accelerators = doc["CloudComputingVirtualAccelerator"].as_array().unwrap();
    assert_eq!(accelerators.len(), 4, "{accelerators:#?}");
    let text = serde_json::to_string(accelerators).unwrap();
    assert!(!text.contains("ConnectX"), "{text}");
    assert!(
        text.contains("d1f0a7c2-0000-4000-8000-000000000001"),
        "{text}"
    );
    assert!(
        !text.contains("d1f0a7c2-0000-4000-8000-000000000002"),
        "{text}"
    );

    // and the GLUE 2.0 LDIF publishes the NIC-only flavor with no `GPU.*` key
    let ldif = String::from_utf8(accelfed_schemas::render::render(
        &snapshot,
        accelfed_schemas::render::Format::LdifGlue20,
    ))
    .unwrap();
    let unfolded = ldif.replace("\n ", "");
    let nic_entries: Vec<&str> = unfolded
        .split("\n\n")
        .filter(|e| {
            e.lines()
                .next()
                .is_some_and(|dn| dn.contains("d1f0a7c2-0000-4000-8000-000000000002"))
        })
        .collect();
    assert!(
        !nic_entries.is_empty(),
        "the NIC flavor is published as a flavor"
    );
    for entry in nic_entries {
        assert!(!entry.contains("GPU."), "{entry}");
    }
    assert!(!unfolded.contains("ConnectX"));
}
