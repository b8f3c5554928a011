//! GPU types the map cannot publish. A node's GRES type becomes the published model when
//! `[slurm.gpu_types]` does not map it; a type that cannot be a model name (only a sharing
//! suffix such as `-SHARED`, over 255 characters) fails the backend, naming the node and the
//! type, rather than publishing a made-up model or aborting the run.

use accelfed_schemas::gpu::GpuModel;

use super::config::SlurmConfig;
use super::error::SlurmError;
use super::inventory::Inventory;
use super::map::{Mapped, service};

/// [`service`], once every GPU type of the inventory is known to name a model.
pub fn checked_service(config: &SlurmConfig, inventory: &Inventory) -> Result<Mapped, SlurmError> {
    for node in &inventory.nodes {
        for gpu in &node.gpus {
            let Some(kind) = gpu.gpu_type.as_deref() else {
                continue;
            };
            if config.gpu_types.contains_key(kind) {
                continue;
            }
            if let Err(err) = GpuModel::canonical(kind) {
                return Err(SlurmError::GpuType {
                    node: node.name.clone(),
                    gpu_type: shortened(kind),
                    reason: err.to_string(),
                });
            }
        }
    }
    Ok(service(config, inventory))
}

/// The type as an error message can carry it: at most 80 characters (a 10,000-character type
/// is named by its start).
fn shortened(kind: &str) -> String {
    match kind.char_indices().nth(80) {
        Some((at, _)) => format!("{}... ({} characters)", &kind[..at], kind.chars().count()),
        None => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_types_are_named_by_their_start() {
        let long = "a".repeat(300);
        let named = shortened(&long);
        assert!(named.starts_with(&"a".repeat(80)));
        assert!(named.ends_with("(300 characters)"));
        assert_eq!(shortened("-SHARED"), "-SHARED");
    }
}
