//! GLUE 2.0 mode's home for GPU facts: `GLUE2EntityOtherInfo` values on the parent entry.
//!
//! GLUE 2.0 has no accelerator classes, so each accelerator entity (AcceleratorEnvironment,
//! Computing/CloudComputing Manager/Share accelerators, CloudComputingVirtualAccelerator) becomes a
//! group of `key=value` pairs on the entry it nests under:
//!
//! ```text
//! GLUE2EntityOtherInfo: GPU.<lid>.ID=<the GLUE 2.1 ID of the accelerator entity>
//! GLUE2EntityOtherInfo: GPU.<lid>.<Attribute>=<value>      (one per attribute)
//! ```
//!
//! `<Attribute>` is the GLUE 2.1 attribute name exactly as the JSON rendering has it (`Model`,
//! `Memory`, `TotalAcceleratorSlots`, `FreeAccelerators`, `Number`, `VirtualizationType`, ...), so
//! every attribute the model has survives, fractional counts as decimals (`Number=0.5`). `<lid>` is
//! the last path segment of the accelerator's ID (the local id, percent-encoded as in IDs), unique
//! among the accelerators of one parent. Attribute names contain no dot, so a reader splits the key
//! at its first and last dot.

use crate::glue::entity::{Class, Entity};

use super::other_info::Pairs;

/// The classes GLUE 2.0 mode folds into their parent.
pub fn is_accelerator(class: Class) -> bool {
    matches!(
        class,
        Class::AcceleratorEnvironment
            | Class::ComputingManagerAccelerator
            | Class::ComputingShareAccelerator
            | Class::CloudComputingManagerAccelerator
            | Class::CloudComputingShareAccelerator
            | Class::CloudComputingVirtualAccelerator
    )
}

/// The local part of an accelerator ID: what follows the last `/` (or `:` where there is none).
pub fn local_key(id: &str) -> &str {
    let cut = id
        .rfind('/')
        .or_else(|| id.rfind(':'))
        .map_or(0, |index| index + 1);
    &id[cut..]
}

/// Appends to `out` the OtherInfo pairs that stand for `accelerator` on its parent.
///
/// The pairs come in key order (names sorted, `ID` among them), and [`by_key_prefix`] orders an
/// entry's accelerators, so sorting the entry's pairs ([`Pairs::normalize`]) is mostly one pass
/// over runs already in order: an execution environment has a hundred folded facts.
pub fn fold(accelerator: &Entity, out: &mut Pairs) {
    const MOST: usize = 32;
    let lid = local_key(&accelerator.id);
    let attributes = &accelerator.attributes;
    let sorted = attributes.len().min(MOST);
    let mut order = [0; MOST];
    for (index, slot) in order[..sorted].iter_mut().enumerate() {
        *slot = index;
    }
    order[..sorted].sort_unstable_by_key(|&index| attributes[index].0);
    let mut id_written = false;
    for &index in &order[..sorted] {
        let (name, value) = &attributes[index];
        if !id_written && *name > "ID" {
            out.push_parts(&["GPU.", lid, ".ID"], &accelerator.id);
            id_written = true;
        }
        out.push_value(&["GPU.", lid, ".", name], value);
    }
    if !id_written {
        out.push_parts(&["GPU.", lid, ".ID"], &accelerator.id);
    }
    // Past the sorted ones (no class has that many): order does not matter, normalizing sorts.
    for (name, value) in attributes.iter().skip(MOST) {
        out.push_value(&["GPU.", lid, ".", name], value);
    }
    // The accelerator's own OtherInfo: a fractional physical count lives there (GLUE 2.1 types
    // physical counts as whole cards), and must survive folding as its attribute would.
    for (key, value) in &accelerator.other_info {
        out.push_parts(&["GPU.", lid, ".", key], value);
    }
}

/// Orders accelerators as their folded keys (`GPU.<lid>.`) sort, so [`fold`]ing them in this order
/// gives pairs that are mostly in order already.
pub fn by_key_prefix(a: &Entity, b: &Entity) -> std::cmp::Ordering {
    fn prefix<'e>(entity: &'e Entity) -> impl Iterator<Item = u8> + 'e {
        local_key(&entity.id).bytes().chain(std::iter::once(b'.'))
    }
    prefix(a).cmp(prefix(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glue::entity::Value;
    use crate::gpu::GpuCount;

    #[test]
    fn keys_use_the_local_part_and_the_glue21_attribute_names() {
        let accelerator = Entity {
            class: Class::CloudComputingVirtualAccelerator,
            id: "urn:accelfed:S:virtual-accelerator:cloud/g1.half".into(),
            parent: Some(0),
            attributes: vec![
                ("Model", Value::Text("NVIDIA A100".into())),
                ("Number", Value::Count(GpuCount::new(0.5).expect("valid"))),
            ],
            other_info: vec![],
            associations: vec![],
        };
        let mut pairs = Pairs::default();
        fold(&accelerator, &mut pairs);
        let texts: Vec<&str> = pairs.iter().collect();
        assert_eq!(
            texts,
            [
                "GPU.g1.half.ID=urn:accelfed:S:virtual-accelerator:cloud/g1.half",
                "GPU.g1.half.Model=NVIDIA A100",
                "GPU.g1.half.Number=0.5",
            ]
        );
    }

    #[test]
    fn facts_come_sorted_with_the_id_among_them() {
        let accelerator = Entity {
            class: Class::AcceleratorEnvironment,
            id: "urn:accelfed:S:accelerator-env:hpc/n/gpu".into(),
            parent: Some(0),
            attributes: vec![
                ("Vendor", Value::Text("NVIDIA".into())),
                ("Model", Value::Text("A100".into())),
                ("FreeAcceleratorSlots", Value::Int(3)),
            ],
            other_info: vec![],
            associations: vec![],
        };
        let mut pairs = Pairs::default();
        fold(&accelerator, &mut pairs);
        let keys: Vec<&str> = pairs
            .iter()
            .map(|p| p.split_once('=').expect("pair").0)
            .collect();
        assert_eq!(
            keys,
            [
                "GPU.gpu.FreeAcceleratorSlots",
                "GPU.gpu.ID",
                "GPU.gpu.Model",
                "GPU.gpu.Vendor"
            ]
        );
    }

    #[test]
    fn local_key_falls_back_to_the_last_colon() {
        assert_eq!(
            local_key("urn:a:b:share-accelerator:hpc/gpu%2Fa100"),
            "gpu%2Fa100"
        );
        assert_eq!(local_key("urn:a:x"), "x");
        assert_eq!(local_key("plain"), "plain");
    }
}
