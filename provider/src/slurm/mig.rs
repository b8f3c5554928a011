//! What one MIG slice a Slurm GRES type names is of its physical GPU.
//!
//! Sites name MIG types themselves (`1g.10gb`, `a100_3g.20gb`) and map them to a model in
//! `[slurm.gpu_types]`; with `AutoDetect=nvml` Slurm names them after the device instead, the
//! NVML name lower-cased with `_` for spaces and the profile appended
//! (`nvidia_a100_3g.20gb`, `nvidia_h100_80gb_hbm3_1g.10gb`). A type nobody mapped still names
//! its parent GPU that way, so its share is read from the parent's profile table rather than
//! guessed: a 3g.20gb slice is 3/7 of an A100 40GB, not the smallest slice.

use accelfed_schemas::gpu::{GpuModel, MigBasis, Recognised, Sharing, mig_sharing};

/// The share of one `profile` slice of GRES type `gpu_type`, whose model is `model` (the
/// configured one, or the type name when the type is not configured).
///
/// In order: the model's profile table; the parent the type name itself names (AutoDetect
/// names), where every catalogued variant of a family-only name (`nvidia_a100`) that lists the
/// profile agrees on its share; the model's memory fraction where the model is catalogued; and
/// at last the profile's compute slices of seven (the slices of every MIG GPU NVIDIA lists but
/// the A30's four), never a flat 1/7 for a larger slice.
pub(super) fn slice_sharing(gpu_type: &str, model: &GpuModel, profile: &str) -> Sharing {
    let (sharing, basis) = mig_sharing(model.as_str(), profile);
    match basis {
        MigBasis::Table | MigBasis::MemoryFraction => sharing,
        MigBasis::Guess => parent_named(gpu_type, profile).unwrap_or_else(|| {
            match (sharing, compute_slices(profile)) {
                (Sharing::Mig { profile, of, .. }, Some(slices)) if slices <= of => Sharing::Mig {
                    profile,
                    slices,
                    of,
                },
                (sharing, _) => sharing,
            }
        }),
    }
}

/// The share from the parent GPU a type name spells before its profile
/// (`nvidia_h100_80gb_hbm3` of `nvidia_h100_80gb_hbm3_1g.10gb`), where its table lists it.
fn parent_named(gpu_type: &str, profile: &str) -> Option<Sharing> {
    let parent = gpu_type
        .strip_suffix(profile)?
        .trim_end_matches(['_', '-', ' ']);
    if parent.is_empty() {
        return None;
    }
    let (model, recognised) = GpuModel::canonical_with_note(parent).ok()?;
    let candidates: Vec<&str> = match &recognised {
        Recognised::Catalogue => vec![model.as_str()],
        Recognised::Family(variants) => variants.clone(),
        Recognised::Unknown => return None,
    };
    let mut found: Option<Sharing> = None;
    for candidate in candidates {
        let (sharing, basis) = mig_sharing(candidate, profile);
        if basis != MigBasis::Table {
            continue;
        }
        match &found {
            None => found = Some(sharing),
            // Variants that disagree (a profile two memory sizes share): not one answer.
            Some(first) if first.physical_share() != sharing.physical_share() => return None,
            Some(_) => {}
        }
    }
    found
}

/// The GPU an AutoDetect MIG type names before its profile, where the catalogue knows it as one
/// product (`nvidia_h100_80gb_hbm3_1g.10gb` -> `NVIDIA H100 80GB HBM3`): the model a type no
/// `[slurm.gpu_types]` entry maps is published and metered under, as a MIG slice's model is its
/// GPU's everywhere else. A family-only name (`nvidia_a100`: the 40 and 80 GB boards) or an
/// unknown one names none.
pub(super) fn parent_model(gpu_type: &str) -> Option<GpuModel> {
    let profile = super::map::mig_profile(gpu_type)?;
    let parent = gpu_type
        .strip_suffix(profile.as_str())?
        .trim_end_matches(['_', '-', ' ']);
    if parent.is_empty() {
        return None;
    }
    match GpuModel::canonical_with_note(parent).ok()? {
        (model, Recognised::Catalogue) => Some(model),
        _ => None,
    }
}

/// `3g.20gb` -> 3.
fn compute_slices(profile: &str) -> Option<u32> {
    let (slices, _) = profile.split_once('g')?;
    slices.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(gpu_type: &str, profile: &str) -> (u32, u32) {
        let model = GpuModel::canonical(gpu_type).unwrap();
        match slice_sharing(gpu_type, &model, profile) {
            Sharing::Mig { slices, of, .. } => (slices, of),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn autodetect_names_are_read_by_their_parent_and_profile() {
        // Slurm AutoDetect=nvml names: the NVML device name, lower case, `_` for spaces.
        assert_eq!(share("nvidia_a100_3g.20gb", "3g.20gb"), (3, 7));
        assert_eq!(share("nvidia_a100_1g.5gb", "1g.5gb"), (1, 7));
        assert_eq!(share("nvidia_h100_80gb_hbm3_1g.10gb", "1g.10gb"), (1, 7));
        assert_eq!(share("nvidia_h100_80gb_hbm3_3g.40gb", "3g.40gb"), (3, 7));
        assert_eq!(share("nvidia_a30_2g.12gb", "2g.12gb"), (2, 4));
    }

    #[test]
    fn autodetect_names_of_one_product_name_its_model() {
        let model = |gpu_type: &str| parent_model(gpu_type).map(|m| m.as_str().to_owned());
        assert_eq!(
            model("nvidia_h100_80gb_hbm3_1g.10gb").as_deref(),
            Some("NVIDIA H100 80GB HBM3")
        );
        assert_eq!(
            model("nvidia_a100-sxm4-40gb_3g.20gb").as_deref(),
            Some("NVIDIA A100-SXM4-40GB")
        );
        // A family of several boards, an unknown GPU, no profile: no model is assumed.
        assert_eq!(model("nvidia_a100_3g.20gb"), None);
        assert_eq!(model("mystery_2g.10gb"), None);
        assert_eq!(model("1g.10gb"), None);
        assert_eq!(model("nvidia_h100_80gb_hbm3"), None);
    }

    #[test]
    fn a_configured_model_decides_over_the_type_name() {
        let model = GpuModel::canonical("NVIDIA A30").unwrap();
        match slice_sharing("1g.6gb", &model, "1g.6gb") {
            Sharing::Mig { slices, of, .. } => assert_eq!((slices, of), (1, 4)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_parent_counts_the_profile_slices_of_seven() {
        assert_eq!(share("4g.40gb", "4g.40gb"), (4, 7));
        assert_eq!(share("mystery_2g.10gb", "2g.10gb"), (2, 7));
        // More slices than seven is no slice count: the table's guess stands.
        assert_eq!(share("9g.90gb", "9g.90gb"), (1, 7));
    }
}
