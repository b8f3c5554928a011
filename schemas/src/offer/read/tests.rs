//! Offers whose counts are no GPU counts. A parsed document's counts are checked where it is read;
//! these are entities built by hand, with integers and floats where counts belong.

use super::*;
use crate::glue::sample;
use crate::gpu::CountError;

/// The sample's entities with `name` of the first `class` entity set to `value`.
fn sample_with(class: Class, name: &'static str, value: Value<'static>) -> Vec<Entity<'static>> {
    let snapshot = sample::snapshot("S");
    let mut entities: Vec<Entity<'static>> = snapshot
        .entities()
        .into_iter()
        .map(|entity| Entity {
            attributes: entity
                .attributes
                .into_iter()
                .map(|(key, value)| (key, owned(value)))
                .collect(),
            ..entity
        })
        .collect();
    let entity = entities
        .iter_mut()
        .find(|entity| entity.class == class)
        .expect("the sample has one");
    match entity.attributes.iter_mut().find(|(key, _)| *key == name) {
        Some((_, old)) => *old = value,
        None => entity.attributes.push((name, value)),
    }
    entities
}

fn owned(value: Value<'_>) -> Value<'static> {
    match value {
        Value::Text(text) => Value::Text(text.into_owned().into()),
        Value::Int(v) => Value::Int(v),
        Value::Count(v) => Value::Count(v),
        Value::Float(v) => Value::Float(v),
        Value::List(v) => Value::List(v),
        Value::Time(v) => Value::Time(v),
    }
}

fn names(offers: &[Offer]) -> Vec<&str> {
    offers.iter().map(|o| o.resource_name.as_str()).collect()
}

#[test]
fn whole_integers_and_floats_read_as_counts() {
    let entities = sample_with(
        Class::CloudComputingVirtualAccelerator,
        "Number",
        Value::Int(2),
    );
    let (offers, skipped) = offers_and_skipped(&entities, &[]);
    assert_eq!(skipped, []);
    assert_eq!(names(&offers), ["A100 nodes", "a100-mig", "g1.a100x2"]);
    assert_eq!(offers[2].gpus_each, GpuCount::whole(2));
    let entities = sample_with(
        Class::AcceleratorEnvironment,
        "FreeAcceleratorSlots",
        Value::Float(6.0),
    );
    assert_eq!(offers_and_skipped(&entities, &[]).1, []);
}

#[test]
fn an_offer_whose_count_is_no_count_is_left_out_with_the_reason() {
    for bad in [
        Value::Float(-1.0),
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Int(u64::MAX),
    ] {
        let entities = sample_with(
            Class::CloudComputingVirtualAccelerator,
            "Number",
            bad.clone(),
        );
        let (kept, skipped) = offers_and_skipped(&entities, &[]);
        // The batch node types are still offered; only the flavor is left out.
        assert_eq!(names(&kept), ["A100 nodes", "a100-mig"], "{bad:?}");
        let [reason] = skipped.as_slice() else {
            panic!("{bad:?}: {skipped:?}");
        };
        assert_eq!(reason.attribute, "Number");
        let text = reason.to_string();
        assert!(
            text.starts_with("CloudComputingVirtualAccelerator urn:accelfed:S:"),
            "{text}"
        );
        assert!(text.ends_with("; its offer is left out"), "{text}");
        assert_eq!(kept, offers(&entities, &[]));
    }
    let entities = sample_with(
        Class::AcceleratorEnvironment,
        "FreeAcceleratorSlots",
        Value::Float(-3.0),
    );
    let (offers, skipped) = offers_and_skipped(&entities, &[]);
    assert_eq!(names(&offers), ["a100-mig", "g1.a100x2"]);
    assert!(matches!(
        skipped[0].source,
        CountError::Negative(value) if value == -3.0
    ));
}

#[test]
fn slots_whose_physical_worth_is_too_large_leave_the_offer_out() {
    // Two physical GPUs behind each of 4 slots: 6 million free slots would be 12 million GPUs.
    let mut entities = sample_with(
        Class::AcceleratorEnvironment,
        "PhysicalAccelerators",
        Value::Count(GpuCount::whole(8)),
    );
    let gpu = entities
        .iter_mut()
        .find(|entity| entity.class == Class::AcceleratorEnvironment)
        .expect("the sample has one");
    for (key, value) in &mut gpu.attributes {
        match *key {
            "LogicalAccelerators" => *value = Value::Count(GpuCount::whole(4)),
            "FreeAcceleratorSlots" => *value = Value::Count(GpuCount::whole(6_000_000)),
            _ => {}
        }
    }
    let (offers, skipped) = offers_and_skipped(&entities, &[]);
    assert_eq!(names(&offers), ["a100-mig", "g1.a100x2"]);
    assert_eq!(skipped.len(), 1);
    assert_eq!(
        skipped[0].attribute,
        "FreeAcceleratorSlots in physical GPUs"
    );
    assert!(matches!(skipped[0].source, CountError::TooLarge(_)));
}

#[test]
fn flavors_of_one_manager_accelerator_share_its_pool_and_node_types_have_their_own() {
    use crate::glue::Service;
    let mut snapshot = sample::snapshot("S");
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            let mut four = cloud.instance_types[0].clone();
            four.local_id = crate::names::LocalId::new("g1.a100x4").unwrap();
            cloud.instance_types.push(four);
        }
    }
    let entities = snapshot.entities();
    let offers = offers(&entities, &[]);
    let pool = |name: &str| {
        offers
            .iter()
            .find(|offer| offer.resource_name == name || offer.resource_id.ends_with(name))
            .map(|offer| offer.pool.as_str())
            .unwrap_or_else(|| panic!("no offer {name} in {offers:?}"))
    };
    assert_eq!(
        pool("g1.a100x2"),
        "urn:accelfed:S:manager-accelerator:cloud/a100-passthrough"
    );
    assert_eq!(pool("g1.a100x2"), pool("g1.a100x4"));
    assert_eq!(
        pool("A100 nodes"),
        "urn:accelfed:S:accelerator-env:hpc/a100/gpu"
    );
    assert_ne!(pool("A100 nodes"), pool("a100-mig"));
}
