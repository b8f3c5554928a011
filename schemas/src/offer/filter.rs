//! What a user asks for ([`Filter`]) and how it is held against an offer. GPU counts are physical:
//! `min_gpus` counts whole GPUs one instance or node gives, so a node of MIG slices is never an
//! answer to "4 GPUs"; slices, replicas and vGPUs have their own `min_slices` and `mig_profile`.

use serde::{Deserialize, Serialize};

use crate::gpu::{GpuCount, GpuModel};

use super::Offer;

/// How a GPU reaches the workload, as a filter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    Passthrough,
    Vgpu,
    Mig,
    TimeSlicing,
    Mps,
}

impl Sharing {
    pub fn as_str(self) -> &'static str {
        match self {
            Sharing::Passthrough => "passthrough",
            Sharing::Vgpu => "vgpu",
            Sharing::Mig => "mig",
            Sharing::TimeSlicing => "time-slicing",
            Sharing::Mps => "mps",
        }
    }
}

impl std::str::FromStr for Sharing {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.to_ascii_lowercase().as_str() {
            "passthrough" => Ok(Sharing::Passthrough),
            "vgpu" => Ok(Sharing::Vgpu),
            "mig" => Ok(Sharing::Mig),
            "time-slicing" | "timeslicing" | "time_slicing" => Ok(Sharing::TimeSlicing),
            "mps" => Ok(Sharing::Mps),
            _ => Err(format!(
                "unknown sharing mode {text:?} (expected passthrough, vgpu, mig, time-slicing or mps)"
            )),
        }
    }
}

/// What a user asks for; every field that is set must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Filter {
    /// Vendor, case-insensitive (`nvidia` matches `NVIDIA`, `NVIDIA Corporation`).
    pub vendor: Option<String>,
    /// Model, matched by tokens with vendor and product-line words dropped: `A100` matches
    /// `NVIDIA A100-SXM4-80GB` and `Tesla A100`.
    pub model: Option<String>,
    /// At least this many whole physical GPUs in one instance or on one node; offers of slices,
    /// replicas or vGPUs have none. A count that is not a finite number of 0 or more is refused
    /// where the filter is read.
    pub min_gpus: Option<GpuCount>,
    /// At least this many slices, replicas or vGPUs in one instance or on one node; only offers of
    /// such parts of shared GPUs match.
    pub min_slices: Option<GpuCount>,
    /// The MIG profile of the slices (`1g.10gb`), case-insensitive.
    pub mig_profile: Option<String>,
    pub min_memory_mb: Option<u64>,
    /// At least this compute capability (`8.0` matches 8.0, 8.6, 9.0).
    pub compute_capability: Option<String>,
    pub sharing: Option<Sharing>,
    pub vo: Option<String>,
    pub site: Option<String>,
    /// At least this many physical GPUs free (for slices: the GPUs their free slots make up).
    pub min_free: Option<GpuCount>,
    /// Leave out offers whose information is stale.
    pub fresh: bool,
}

impl Filter {
    pub fn matches(&self, offer: &Offer) -> bool {
        if let Some(vendor) = &self.vendor {
            let have = offer.vendor.to_lowercase();
            let vendor = vendor.to_lowercase();
            if have != vendor && !have.split_whitespace().any(|word| word == vendor) {
                return false;
            }
        }
        if let Some(model) = &self.model {
            let Ok(name) = GpuModel::new(offer.model.clone()) else {
                return false;
            };
            if !name.matches(model) {
                return false;
            }
        }
        if self
            .min_gpus
            .is_some_and(|min| !offer.gpus_each.at_least(min))
        {
            return false;
        }
        if let Some(min) = self.min_slices
            && (offer.slot_share.is_none() && offer.gpus_each > GpuCount::ZERO
                || !offer.slots_each.at_least(min))
        {
            return false;
        }
        if let Some(profile) = &self.mig_profile
            && !offer
                .mig_profile
                .as_deref()
                .is_some_and(|have| have.eq_ignore_ascii_case(profile.trim()))
        {
            return false;
        }
        if let Some(min) = self.min_memory_mb
            && offer.memory_mb.is_none_or(|memory| memory < min)
        {
            return false;
        }
        if let Some(wanted) = &self.compute_capability {
            match (
                version(wanted),
                offer.compute_capability.as_deref().and_then(version),
            ) {
                (Some(wanted), Some(have)) if have >= wanted => {}
                _ => return false,
            }
        }
        if let Some(sharing) = self.sharing
            && !offer.sharing.eq_ignore_ascii_case(sharing.as_str())
        {
            return false;
        }
        if let Some(vo) = &self.vo
            && !offer.vos.iter().any(|have| have.eq_ignore_ascii_case(vo))
        {
            return false;
        }
        if let Some(site) = &self.site
            && !offer.site.eq_ignore_ascii_case(site)
        {
            return false;
        }
        if let Some(min) = self.min_free
            && offer
                .free_physical
                .or(offer.free)
                .is_none_or(|free| !free.at_least(min))
        {
            return false;
        }
        offer.fresh || !self.fresh
    }
}

/// `8.6` as (8, 6), for ordering compute capabilities.
fn version(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |minor| minor.parse().ok())?;
    Some((major, minor))
}
