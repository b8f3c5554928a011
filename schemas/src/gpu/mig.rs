//! Multi-Instance GPU profiles: what share of its parent GPU one MIG instance is.
//!
//! A profile `<N>g.<M>gb` holds N compute slices of the parent's compute slices (7 on A100, H100,
//! H200, GH200 and B200; 4 on A30) and about M GB of its memory; `+me` variants add the media
//! engines to a 1-slice instance and `1g.<2M>gb` variants double a 1-slice instance's memory, both
//! still one compute slice. The physical share of an instance is N over the parent's slices
//! (`1g.10gb` of an H100 80GB = 1/7, `3g.40gb` = 3/7, `2g.12gb` of an A30 = 2/4).
//!
//! Source: NVIDIA's "Multi-Instance GPU User Guide", section "Supported MIG Profiles" (the profile
//! tables per product), and `nvidia-smi mig -lgip` of an H100 80GB HBM3
//! (`reference/gpu-captures/h100-80gb-hbm3/mig-lgip.txt`: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb,
//! 3g.40gb, 4g.40gb, 7g.80gb; 7 instances of 1g.10gb).
//!
//! A profile the table does not list for its parent (a newer driver's profile, a parent not in the
//! catalogue) falls back to its memory over the parent's nominal memory, and the caller is told so
//! it can warn; a profile or parent that gives not even that counts as one slice of seven.

use super::catalog;
use super::sharing::Sharing;
use crate::names::Text;

/// The MIG layout of a group of parent GPUs.
struct Layout {
    /// Canonical names of the parents.
    parents: &'static [&'static str],
    /// Compute slices of one parent GPU.
    slices: u32,
    /// The profiles NVIDIA lists for them.
    profiles: &'static [&'static str],
}

const LAYOUTS: &[Layout] = &[
    Layout {
        parents: &["NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"],
        slices: 7,
        profiles: &[
            "1g.5gb",
            "1g.5gb+me",
            "1g.10gb",
            "2g.10gb",
            "3g.20gb",
            "4g.20gb",
            "7g.40gb",
        ],
    },
    Layout {
        parents: &[
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA A100 80GB PCIe",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA H100 PCIe",
        ],
        slices: 7,
        profiles: &[
            "1g.10gb",
            "1g.10gb+me",
            "1g.20gb",
            "2g.20gb",
            "3g.40gb",
            "4g.40gb",
            "7g.80gb",
        ],
    },
    Layout {
        parents: &["NVIDIA H100 NVL"],
        slices: 7,
        profiles: &[
            "1g.12gb",
            "1g.12gb+me",
            "1g.24gb",
            "2g.24gb",
            "3g.47gb",
            "4g.47gb",
            "7g.94gb",
        ],
    },
    Layout {
        parents: &["NVIDIA GH200 480GB"],
        slices: 7,
        profiles: &[
            "1g.12gb",
            "1g.12gb+me",
            "1g.24gb",
            "2g.24gb",
            "3g.48gb",
            "4g.48gb",
            "7g.96gb",
        ],
    },
    Layout {
        parents: &["NVIDIA H200", "NVIDIA H200 NVL"],
        slices: 7,
        profiles: &[
            "1g.18gb",
            "1g.18gb+me",
            "1g.35gb",
            "2g.35gb",
            "3g.71gb",
            "4g.71gb",
            "7g.141gb",
        ],
    },
    Layout {
        parents: &["NVIDIA B200"],
        slices: 7,
        profiles: &[
            "1g.23gb",
            "1g.23gb+me",
            "1g.45gb",
            "2g.45gb",
            "3g.90gb",
            "4g.90gb",
            "7g.180gb",
        ],
    },
    Layout {
        parents: &["NVIDIA A30"],
        slices: 4,
        profiles: &["1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"],
    },
];

/// How a profile's share was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigBasis {
    /// From the profile table: compute slices over the parent's.
    Table,
    /// Not in the table for this parent: the profile's memory over the parent's nominal memory.
    MemoryFraction,
    /// Neither the table nor the memory gave a share: one slice of seven.
    Guess,
}

/// The [`Sharing::Mig`] of one instance of `profile` on a `parent` GPU (a canonical name, see
/// [`super::GpuModel::canonical`]), and how it was found; anything but [`MigBasis::Table`]
/// deserves a warning naming the profile and parent.
pub fn mig_sharing(parent: &str, profile: &str) -> (Sharing, MigBasis) {
    let profile = profile.trim();
    let name = Text::new(profile).unwrap_or_else(|_| Text::literal("unknown"));
    let mig = |slices: u32, of: u32| Sharing::Mig {
        profile: name.clone(),
        slices,
        of,
    };
    let parent_entry = catalog::by_name(parent);
    let layout = parent_entry.and_then(|entry| {
        LAYOUTS
            .iter()
            .find(|layout| layout.parents.contains(&entry.name))
    });
    if let Some(layout) = layout
        && layout.profiles.contains(&profile)
        && let Some(slices) = compute_slices(profile)
    {
        return (mig(slices, layout.slices), MigBasis::Table);
    }
    if let (Some(entry), Some(memory)) = (parent_entry, memory_gb(profile))
        && entry.memory_gb > 0
        && memory <= entry.memory_gb
    {
        let divisor = gcd(memory, entry.memory_gb);
        return (
            mig(memory / divisor, entry.memory_gb / divisor),
            MigBasis::MemoryFraction,
        );
    }
    (mig(1, 7), MigBasis::Guess)
}

/// `3g.40gb` -> 3.
fn compute_slices(profile: &str) -> Option<u32> {
    let (slices, _) = profile.split_once('g')?;
    slices.parse().ok().filter(|n| *n > 0)
}

/// `3g.40gb`, `1g.10gb+me` -> 40, 10.
fn memory_gb(profile: &str) -> Option<u32> {
    let (_, rest) = profile.split_once('.')?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let rest = &rest[digits.len()..];
    if !rest.starts_with("gb") {
        return None;
    }
    digits.parse().ok().filter(|n| *n > 0)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(parent: &str, profile: &str) -> (u32, u32, MigBasis) {
        match mig_sharing(parent, profile) {
            (Sharing::Mig { slices, of, .. }, basis) => (slices, of, basis),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_issues_profiles() {
        use MigBasis::Table;
        let a100 = "NVIDIA A100-SXM4-40GB";
        assert_eq!(share(a100, "1g.5gb"), (1, 7, Table));
        assert_eq!(share(a100, "2g.10gb"), (2, 7, Table));
        assert_eq!(share(a100, "3g.20gb"), (3, 7, Table));
        assert_eq!(share(a100, "4g.20gb"), (4, 7, Table));
        assert_eq!(share(a100, "7g.40gb"), (7, 7, Table));
        assert_eq!(share(a100, "1g.5gb+me"), (1, 7, Table));
        let h100 = "NVIDIA H100 80GB HBM3";
        assert_eq!(share(h100, "1g.10gb"), (1, 7, Table));
        assert_eq!(share(h100, "3g.40gb"), (3, 7, Table));
        assert_eq!(share(h100, "1g.20gb"), (1, 7, Table));
        assert_eq!(share("NVIDIA H100 NVL", "3g.47gb"), (3, 7, Table));
        assert_eq!(share("NVIDIA H200", "1g.18gb"), (1, 7, Table));
        assert_eq!(share("NVIDIA A30", "2g.12gb"), (2, 4, Table));
        assert_eq!(share("NVIDIA A30", "1g.6gb+me"), (1, 4, Table));
    }

    #[test]
    fn every_profile_of_the_h100_capture_is_in_the_table() {
        // `nvidia-smi mig -lgip` of a real H100 80GB HBM3 (reference/gpu-captures).
        let capture = include_str!("../../tests/fixtures/gpu/h100-mig-lgip.txt");
        let mut profiles = 0;
        for line in capture.lines() {
            let mut words = line.split_whitespace().skip_while(|w| *w != "MIG");
            if words.next().is_none() {
                continue;
            }
            let profile = words.next().unwrap();
            let _id = words.next();
            let free_total = words.next().unwrap();
            let total: u32 = free_total.split('/').nth(1).unwrap().parse().unwrap();
            let (slices, of, basis) = share("NVIDIA H100 80GB HBM3", profile);
            assert_eq!(basis, MigBasis::Table, "{profile}");
            // As many instances fit as the compute slices allow (memory allowing).
            assert!(total * slices <= of, "{profile}: {total} x {slices}/{of}");
            profiles += 1;
        }
        assert_eq!(profiles, 7);
    }

    #[test]
    fn unknown_profiles_fall_back_to_their_memory_fraction() {
        assert_eq!(
            share("NVIDIA A100-SXM4-80GB", "2g.12gb"),
            (3, 20, MigBasis::MemoryFraction)
        );
        assert_eq!(
            share("NVIDIA H100 80GB HBM3", "1g.5gb"),
            (1, 16, MigBasis::MemoryFraction)
        );
        // A parent outside the catalogue gives no memory to divide.
        assert_eq!(share("NVIDIA X1", "1g.10gb"), (1, 7, MigBasis::Guess));
        assert_eq!(
            share("NVIDIA A100-SXM4-40GB", "weird"),
            (1, 7, MigBasis::Guess)
        );
    }
}
