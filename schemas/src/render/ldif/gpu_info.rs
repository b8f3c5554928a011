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

use super::entry;

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

/// The OtherInfo pairs that stand for `accelerator` on its parent.
pub fn fold(accelerator: &Entity) -> Vec<(String, String)> {
    let prefix = format!("GPU.{}.", local_key(&accelerator.id));
    let mut pairs = vec![(format!("{prefix}ID"), accelerator.id.clone())];
    for (name, value) in &accelerator.attributes {
        pairs.push((format!("{prefix}{name}"), entry::text(value)));
    }
    pairs
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
        assert_eq!(
            fold(&accelerator),
            [
                (
                    "GPU.g1.half.ID".to_owned(),
                    "urn:accelfed:S:virtual-accelerator:cloud/g1.half".to_owned()
                ),
                ("GPU.g1.half.Model".to_owned(), "NVIDIA A100".to_owned()),
                ("GPU.g1.half.Number".to_owned(), "0.5".to_owned()),
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
