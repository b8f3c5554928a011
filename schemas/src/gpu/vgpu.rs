//! NVIDIA vGPU type names, as a guest sees its vGPU: `nvidia-smi` and DCGM in the VM print
//! `NVIDIA A10-12Q` (older drivers `GRID A100-40C`), and GPU Feature Discovery labels the node
//! `nvidia.com/gpu.product=NVIDIA-A10-12Q`. The name is not a GPU model: it is a share of one.
//!
//! The type names follow NVIDIA's scheme (NVIDIA Virtual GPU Software User Guide, "Virtual GPU
//! Types for Supported GPUs"): `<board>-<framebuffer GB><series>` for a time-sliced vGPU, series
//! A, B, C or Q (apps, PC, compute, workstation), and `<board>-<compute slices>-<framebuffer
//! GB><series>` for one backed by a MIG instance (`A100-1-5C` on the `1g.5gb` slice). A time-sliced
//! type's instances split the board's memory evenly, so one physical GPU holds memory / framebuffer
//! of them (`A10-12Q`: 24 / 12 = 2, each half an A10); a MIG-backed one is its slice's share.
//!
//! Boards are named by their GPU family, with a letter for the variant where one family has
//! several (`A100D` the A100 80GB PCIe, `H100XM` the H100 SXM5): those are [`VARIANT_BOARDS`]; any
//! other board is looked up in the model catalogue by name (`A10`, `L40S`, `T4`).

use super::catalog::{self, Entry};
use super::mig::{MigBasis, mig_sharing};
use super::sharing::Sharing;
use crate::names::Text;

/// Boards whose vGPU name is not the catalogue name of their GPU, from the vGPU types tables of
/// NVIDIA's Virtual GPU Software User Guide. `A100` is both the PCIe and the HGX A100 40GB (the same
/// GA100 with 40 GB and 7 MIG slices, so the share and the hours are the same); the PCIe name is
/// used.
pub const VARIANT_BOARDS: &[(&str, &str)] = &[
    ("A100", "NVIDIA A100-PCIE-40GB"),
    ("A100D", "NVIDIA A100 80GB PCIe"),
    ("A100DX", "NVIDIA A100-SXM4-80GB"),
    ("H100", "NVIDIA H100 PCIe"),
    ("H100XM", "NVIDIA H100 80GB HBM3"),
    ("H100L", "NVIDIA H100 NVL"),
    ("V100", "Tesla V100-PCIE-16GB"),
    ("V100D", "Tesla V100-PCIE-32GB"),
    ("V100X", "Tesla V100-SXM2-16GB"),
    ("V100DX", "Tesla V100-SXM2-32GB"),
    ("V100S", "Tesla V100S-PCIE-32GB"),
    ("P100", "Tesla P100-PCIE-16GB"),
    ("P100C", "Tesla P100-PCIE-12GB"),
    ("P100X", "Tesla P100-SXM2-16GB"),
];

/// A vGPU type name read apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VgpuType<'a> {
    /// The type as NVIDIA names it, vendor prefix removed: `A10-12Q`, `A100-1-5C`.
    pub name: &'a str,
    /// The board part: `A10`, `A100D`.
    pub board: &'a str,
    /// The parent's compute slices when the type is backed by a MIG instance.
    pub mig_slices: Option<u32>,
    /// The vGPU's framebuffer in GB.
    pub framebuffer_gb: u32,
}

/// How a vGPU type's share of its physical GPU was found.
#[derive(Debug, Clone, PartialEq)]
pub enum VgpuShare {
    /// The physical GPU and what one vGPU is of it.
    Known {
        parent: &'static Entry,
        sharing: Sharing,
        /// For a MIG-backed type, how the slice's share was found (anything but the table
        /// deserves a warning); `Table` for time-sliced types, whose share is exact.
        basis: MigBasis,
    },
    /// The board is in neither [`VARIANT_BOARDS`] nor the catalogue.
    UnknownBoard,
    /// The framebuffer is larger than the board's memory: not a type of that board.
    TooLarge { parent: &'static Entry },
}

/// Reads a vGPU type name in any source's spelling (`NVIDIA A10-12Q`, `NVIDIA-A10-12Q`,
/// `GRID A100-40C`, `A100-1-5C`); `None` when it is not one.
pub fn parse(raw: &str) -> Option<VgpuType<'_>> {
    let mut name = raw.trim();
    for prefix in ["NVIDIA-", "NVIDIA ", "GRID-", "GRID "] {
        if let Some(rest) = name.strip_prefix(prefix) {
            name = rest;
            break;
        }
    }
    let mut parts = name.split('-');
    let board = parts.next()?;
    let (slices, last) = match (parts.next()?, parts.next(), parts.next()) {
        (last, None, None) => (None, last),
        (slices, Some(last), None) => (Some(slices.parse::<u32>().ok()?), last),
        _ => return None,
    };
    let digits = last.strip_suffix(['A', 'B', 'C', 'Q'])?;
    let framebuffer_gb = digits.parse::<u32>().ok().filter(|gb| *gb > 0)?;
    let board_ok = board.len() >= 2
        && board.starts_with(|c: char| c.is_ascii_uppercase())
        && board
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    (board_ok && slices != Some(0)).then_some(VgpuType {
        name,
        board,
        mig_slices: slices,
        framebuffer_gb,
    })
}

impl VgpuType<'_> {
    /// The physical GPU this type is a share of, from [`VARIANT_BOARDS`] or the catalogue.
    pub fn parent(&self) -> Option<&'static Entry> {
        VARIANT_BOARDS
            .iter()
            .find(|(board, _)| *board == self.board)
            .and_then(|(_, name)| catalog::by_name(name))
            .or_else(|| catalog::by_name(self.board))
    }

    /// The MIG profile behind a MIG-backed type (`A100-1-5C` -> `1g.5gb`).
    pub fn mig_profile(&self) -> Option<String> {
        self.mig_slices
            .map(|slices| format!("{slices}g.{}gb", self.framebuffer_gb))
    }

    /// What one vGPU of this type is of its physical GPU.
    pub fn share(&self) -> VgpuShare {
        let Some(parent) = self.parent() else {
            return VgpuShare::UnknownBoard;
        };
        if self.framebuffer_gb > parent.memory_gb {
            return VgpuShare::TooLarge { parent };
        }
        if let Some(profile) = self.mig_profile() {
            let (sharing, basis) = mig_sharing(parent.name, &profile);
            return VgpuShare::Known {
                parent,
                sharing,
                basis,
            };
        }
        let vgpu_type = Text::new(self.name).unwrap_or_else(|_| Text::literal("vgpu"));
        VgpuShare::Known {
            parent,
            sharing: Sharing::Vgpu {
                vgpu_type,
                per_gpu: parent.memory_gb / self.framebuffer_gb,
            },
            basis: MigBasis::Table,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known(raw: &str) -> (&'static str, Sharing) {
        match parse(raw).unwrap().share() {
            VgpuShare::Known {
                parent, sharing, ..
            } => (parent.name, sharing),
            other => panic!("{raw}: {other:?}"),
        }
    }

    #[test]
    fn every_spelling_of_a_type_reads_the_same() {
        for raw in [
            "NVIDIA A10-12Q",
            "NVIDIA-A10-12Q",
            "A10-12Q",
            " GRID A10-12Q ",
        ] {
            let vgpu = parse(raw).unwrap();
            assert_eq!(
                (vgpu.name, vgpu.board, vgpu.mig_slices, vgpu.framebuffer_gb),
                ("A10-12Q", "A10", None, 12),
                "{raw}"
            );
        }
    }

    #[test]
    fn time_sliced_types_split_the_board_memory() {
        let (parent, sharing) = known("NVIDIA-A10-12Q");
        assert_eq!(parent, "NVIDIA A10");
        assert_eq!(sharing.physical_share(), 0.5);
        let (parent, sharing) = known("GRID A100-4C");
        assert_eq!(parent, "NVIDIA A100-PCIE-40GB");
        assert_eq!(sharing.physical_share(), 0.1);
        let (parent, sharing) = known("NVIDIA H100XM-80C");
        assert_eq!(parent, "NVIDIA H100 80GB HBM3");
        assert_eq!(sharing.physical_share(), 1.0);
        // 94 GB do not split into 23 GB types evenly: a GPU holds 4 of them, each a quarter.
        let (_, sharing) = known("NVIDIA H100L-23C");
        assert_eq!(sharing.physical_share(), 0.25);
        assert_eq!(known("NVIDIA T4-8Q").0, "Tesla T4");
    }

    #[test]
    fn mig_backed_types_are_their_slice() {
        let (parent, sharing) = known("NVIDIA A100D-3-40C");
        assert_eq!(parent, "NVIDIA A100 80GB PCIe");
        assert!((sharing.physical_share() - 3.0 / 7.0).abs() < 1e-12);
        assert_eq!(sharing.mode(), "mig");
    }

    #[test]
    fn names_that_are_no_vgpu_type_or_board_are_told_apart() {
        for raw in [
            "NVIDIA A100-SXM4-40GB",
            "Tesla-T4",
            "NVIDIA H100 80GB HBM3",
            "NVIDIA-A10",
            "A10-12",
            "A10-0-5C",
        ] {
            assert_eq!(parse(raw), None, "{raw}");
        }
        assert_eq!(
            parse("NVIDIA-Z9-8Q").unwrap().share(),
            VgpuShare::UnknownBoard
        );
        assert!(matches!(
            parse("NVIDIA-A10-48Q").unwrap().share(),
            VgpuShare::TooLarge { .. }
        ));
    }
}
