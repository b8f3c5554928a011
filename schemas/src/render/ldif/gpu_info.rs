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
pub fn fold(accelerator: &Entity, out: &mut Pairs) {
    let lid = local_key(&accelerator.id);
    out.push_parts(&["GPU.", lid, ".ID"], &accelerator.id);
    for (name, value) in &accelerator.attributes {
        out.push_value(&["GPU.", lid, ".", name], value);
    }
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
    fn local_key_falls_back_to_the_last_colon() {
        assert_eq!(
            local_key("urn:a:b:share-accelerator:hpc/gpu%2Fa100"),
            "gpu%2Fa100"
        );
        assert_eq!(local_key("urn:a:x"), "x");
        assert_eq!(local_key("plain"), "plain");
    }
}
