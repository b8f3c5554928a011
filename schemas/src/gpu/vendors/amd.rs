//! AMD Instinct device ids and product labels.
//!
//! Source of the ids and names: AMD's own name table, `amdgpu.ids` of libdrm
//! (<https://gitlab.freedesktop.org/mesa/drm/-/blob/main/data/amdgpu.ids>, MIT licence), the file
//! `amdgpu_get_marketing_name` and `rocm-smi` read: `740C, 01, AMD Instinct MI250X / MI250` and so
//! on. Only the Instinct lines are taken. `740c` is one id for two products in AMD's own table, so
//! it is kept as that table names it and [`DeviceName::Shared`] says so: one id must not merge two
//! products' GPU-hours.
//!
//! The AMD GPU labeller (ROCm k8s-device-plugin, `cmd/k8s-node-labeller`) writes the product name
//! the board's firmware reports, with underscores for spaces, and that name carries form-factor
//! and board words AMD's name table does not use (`AMD_Instinct_MI300X_OAM`,
//! `AMD_INSTINCT_MI250_(MCM)_OAM_AC_MBA`): [`product_name`] keeps the words up to the model.

/// What AMD's table says a device id is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceName {
    /// One product.
    One(&'static str),
    /// Several products share the id (the name lists them).
    Shared(&'static str),
}

/// (device id, AMD's name, whether the id names several products).
const DEVICES: &[(u16, &str, bool)] = &[
    (0x738c, "AMD Instinct MI100", false),
    (0x7408, "AMD Instinct MI250X", false),
    (0x740c, "AMD Instinct MI250X / MI250", true),
    (0x740f, "AMD Instinct MI210", false),
    (0x74a0, "AMD Instinct MI300A", false),
    (0x74a1, "AMD Instinct MI300X", false),
    (0x74a5, "AMD Instinct MI325X", false),
];

/// AMD's name of a device id (PCI vendor `1002`).
pub fn device_name(device: u16) -> Option<DeviceName> {
    DEVICES
        .iter()
        .find(|(id, _, _)| *id == device)
        .map(|(_, name, shared)| {
            if *shared {
                DeviceName::Shared(name)
            } else {
                DeviceName::One(name)
            }
        })
}

/// The labeller's product name as AMD's table would write it: underscores as spaces, `AMD` in
/// front, and the words after the model (`MI300X`, the first word that is `MI` and digits) left
/// out. A name without such a word is only respaced.
pub fn product_name(label: &str) -> String {
    let words: Vec<&str> = label
        .split(|c: char| c == '_' || c.is_whitespace())
        .filter(|word| !word.is_empty())
        .collect();
    let is_model = |word: &&str| {
        let upper = word.to_ascii_uppercase();
        upper
            .strip_prefix("MI")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    };
    let kept = match words.iter().position(is_model) {
        Some(at) => &words[..=at],
        None => &words[..],
    };
    let name = kept.join(" ");
    if name.to_ascii_uppercase().starts_with("AMD") {
        name
    } else {
        format!("AMD {name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::GpuModel;

    #[test]
    fn every_single_product_id_names_a_catalogued_model() {
        for (id, name, shared) in DEVICES {
            let catalogued = crate::gpu::catalog::by_name(name).map(|entry| entry.name);
            if *shared {
                assert_eq!(catalogued, None, "{id:04x}");
            } else {
                assert_eq!(catalogued, Some(*name), "{id:04x}");
            }
        }
        assert_eq!(
            device_name(0x74a1),
            Some(DeviceName::One("AMD Instinct MI300X"))
        );
        assert_eq!(
            device_name(0x740c),
            Some(DeviceName::Shared("AMD Instinct MI250X / MI250"))
        );
        assert_eq!(device_name(0x6860), None);
    }

    #[test]
    fn labeller_product_names_lose_their_board_words() {
        let canonical = |label: &str| {
            GpuModel::canonical(&product_name(label))
                .unwrap()
                .as_str()
                .to_owned()
        };
        assert_eq!(canonical("AMD_Instinct_MI300X_OAM"), "AMD Instinct MI300X");
        assert_eq!(
            canonical("AMD_INSTINCT_MI250_(MCM)_OAM_AC_MBA"),
            "AMD Instinct MI250"
        );
        assert_eq!(canonical("Instinct_MI210"), "AMD Instinct MI210");
        assert_eq!(product_name("Radeon_Pro_W7900"), "AMD Radeon Pro W7900");
    }
}
