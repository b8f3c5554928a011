//! Identities: a resource lent to two VOs, a VO with two roles, a resized VM each get their own
//! records, and an identity a resource no longer has is retracted.

use super::*;
use crate::meter::{meter, retractions};

#[test]
fn a_node_lent_to_atlas_then_cms_gives_both_vos_their_hours() {
    let mut atlas = held(
        "node-9",
        Sharing::Whole,
        4.0,
        at(2026, 4, 1, 0),
        at(2026, 4, 16, 0),
    );
    atlas.vo = Some(VoName::new("atlas").unwrap());
    let mut cms = atlas.clone();
    cms.vo = Some(VoName::new("cms").unwrap());
    cms.start = at(2026, 4, 16, 0);
    cms.end = Some(at(2026, 5, 1, 0));
    let metered = meter(&[atlas, cms], now(), &installed(4.0));
    let mut found: Vec<(String, Option<String>, f64)> = metered
        .records
        .iter()
        .map(|r| {
            (
                r.associated_record.to_string(),
                r.vo.as_ref().map(ToString::to_string),
                r.gpu_hours(),
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        vec![
            ("node-9@atlas".to_owned(), Some("atlas".to_owned()), 1440.0),
            ("node-9@cms".to_owned(), Some("cms".to_owned()), 1440.0),
        ]
    );
    assert_ne!(metered.records[0].id(), metered.records[1].id());
    assert!(metered.overruns.is_empty(), "4 GPUs for a whole month fit");
}

#[test]
fn one_vo_with_two_roles_and_a_resized_vm_are_split_too() {
    let base = held(
        "vm-3",
        Sharing::Whole,
        1.0,
        at(2026, 4, 1, 0),
        at(2026, 4, 2, 0),
    );
    let mut production = base.clone();
    production.fqan = Some(accelfed_schemas::names::Fqan::new("/atlas/Role=production").unwrap());
    production.start = at(2026, 4, 3, 0);
    production.end = Some(at(2026, 4, 4, 0));
    let mut vgpu = base.clone();
    vgpu.sharing = Sharing::Vgpu {
        vgpu_type: Text::new("GRID A100-10C").unwrap(),
        per_gpu: 4,
    };
    vgpu.count = GpuCount::new(0.25).unwrap();
    vgpu.start = at(2026, 4, 5, 0);
    vgpu.end = Some(at(2026, 4, 6, 0));
    let metered = meter(&[base, production, vgpu], now(), &installed(1.0));
    let mut ids: Vec<String> = metered
        .records
        .iter()
        .map(|r| r.associated_record.to_string())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        vec![
            "vm-3@/atlas/Role=production#whole",
            "vm-3@atlas#vgpu:GRID A100-10C",
            "vm-3@atlas#whole",
        ]
    );
    assert!((gpu_hours(&metered.records) - (24.0 + 24.0 + 6.0)).abs() < 1e-9);
}

#[test]
fn a_renamed_model_or_a_split_vo_retracts_the_old_identity() {
    let (start, end) = (at(2026, 4, 1, 0), at(2026, 4, 11, 0));
    let before = meter(
        &[held("node-9", Sharing::Whole, 2.0, start, end)],
        now(),
        &Installed::default(),
    );
    // The configuration now names the model differently, and cms used the node too.
    let mut renamed = held("node-9", Sharing::Whole, 2.0, start, end);
    renamed.model = GpuModel::new("NVIDIA A100-SXM4-40GB (renamed)").unwrap();
    let mut cms = renamed.clone();
    cms.vo = Some(VoName::new("cms").unwrap());
    cms.start = at(2026, 4, 20, 0);
    cms.end = Some(at(2026, 4, 21, 0));
    // Another resource the run did not see keeps its records.
    let gone = meter(
        &[held("vm-gone", Sharing::Whole, 1.0, start, end)],
        now(),
        &Installed::default(),
    );
    let after = meter(&[renamed, cms], now(), &Installed::default());
    let stored: Vec<UsageRecord> = before
        .records
        .iter()
        .chain(&gone.records)
        .cloned()
        .collect();
    let retracted = retractions(&stored, &after.records, &after.resources);
    assert_eq!(retracted.len(), 1, "{retracted:?}");
    assert_eq!(
        retracted[0].id(),
        before.records[0].id(),
        "same id: it replaces"
    );
    assert_eq!(retracted[0].gpu_seconds(), 0.0);
    assert!(retracted[0].validate(now()).is_ok());
    let hours: f64 = after
        .records
        .iter()
        .chain(&retracted)
        .map(UsageRecord::gpu_hours)
        .sum();
    assert_eq!(
        hours,
        2.0 * 240.0 + 2.0 * 24.0,
        "the old identity's hours are gone"
    );
    // The next run retracts the same way (the retraction now stored changes nothing).
    let again = retractions(&retracted, &after.records, &after.resources);
    assert_eq!(again, retracted);
    // A run that metered the old identity again keeps it.
    assert!(retractions(&before.records, &before.records, &before.resources).is_empty());
}
