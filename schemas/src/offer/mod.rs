//! GPU offers: what a user can ask a site for, one per cloud flavor with GPUs and one per batch node
//! type's accelerator, read from the site's GLUE2 entities. Queries (HTTP API, CLI, LDAP, web page)
//! all answer with offers and select them with one [`Filter`].
//!
//! * Cloud: a `CloudComputingInstanceType` and its `CloudComputingVirtualAccelerator`. Its VOs are
//!   those of the shares it names (their MappingPolicy `VO:<name>` rules; a flavor that names no
//!   share is open to every share of its service), free/total from the manager's accelerators of
//!   the same model and virtualization.
//! * Batch: an `ExecutionEnvironment` and each of its `AcceleratorEnvironment`s (slots each is what
//!   a job can ask for on one node, the logical count; physical GPUs beside them), VOs from the
//!   shares that list the environment, free/total from the accelerator environment's slots.
//!
//! Counts are physical GPUs beside slots ([`unit`]): `gpus_each` is whole GPUs, zero for an offer of
//! MIG slices, replicas or vGPUs, whose slots and physical GPUs are `slots_each`/`physical_each`.
//! Every count is a [`GpuCount`]; an offer one of whose counts is no GPU count (negative, not a
//! number, past [`GpuCount::MAX`]) is left out, with an [`InvalidCount`] saying why.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::gpu::{CountError, GpuCount};

mod filter;
mod read;
pub mod unit;

pub use filter::{Filter, Sharing};

pub use read::{offers, offers_and_skipped};

/// A cloud flavor or a batch node type with GPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    pub site: String,
    /// The GLUE2 ID of the service.
    pub service_id: String,
    /// `cloud` or `batch`.
    pub service_kind: ServiceKind,
    /// The instance type's or execution environment's GLUE2 ID.
    pub resource_id: String,
    /// The flavor name or the node type's name (its local id when it has no name).
    pub resource_name: String,
    /// Whole physical GPUs in one instance or on one node (a fractional flavor as written); zero
    /// when what it gives is slices, replicas or vGPUs of shared GPUs. What `min_gpus` counts.
    pub gpus_each: GpuCount,
    /// Units one instance or node gives: MIG slices, replicas, vGPUs, or GPUs when whole.
    #[serde(default)]
    pub slots_each: GpuCount,
    /// The physical GPUs behind `slots_each`.
    #[serde(default)]
    pub physical_each: GpuCount,
    /// What one slot is of a physical GPU (`1/7`), when slots are parts of shared GPUs.
    #[serde(default)]
    pub slot_share: Option<String>,
    /// What a user gets, in words: `1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices
    /// on 8 GPUs`.
    #[serde(default)]
    pub gets: String,
    pub vendor: String,
    pub model: String,
    pub memory_mb: Option<u64>,
    pub compute_capability: Option<String>,
    /// passthrough, vgpu, mig, time-slicing or none.
    pub sharing: String,
    pub mig_profile: Option<String>,
    /// vCPUs of a flavor or logical CPUs of a node, where published.
    pub cpus: Option<u64>,
    /// RAM of a flavor or a node in MB, where published.
    pub ram_mb: Option<u64>,
    /// Slots free now and in total for this kind of GPU, where the site publishes capacity.
    pub free: Option<GpuCount>,
    pub total: Option<GpuCount>,
    /// The same in physical GPUs.
    #[serde(default)]
    pub free_physical: Option<GpuCount>,
    #[serde(default)]
    pub total_physical: Option<GpuCount>,
    /// The pool of physical GPUs the offer draws on, unique within its site: the GLUE2 IDs of the
    /// manager accelerators a flavor's counts come from, or the node type's accelerator
    /// environment. Offers of one pool repeat its free and total counts, so a sum over offers
    /// counts each pool once (`accelfed serve`'s page does).
    #[serde(default)]
    pub pool: String,
    pub vos: Vec<String>,
    /// What each VO can get, where the site publishes its shares' accelerators: the registry's
    /// answers for one VO give these instead of the free counts above ([`Offer::for_vo`]). Not
    /// part of an answer's JSON.
    #[serde(skip)]
    pub vo_free: Vec<VoFree>,
    /// When the site's information about this offer stops being fresh.
    pub expires: DateTime<Utc>,
    /// Whether `expires` is still ahead; set when an answer is made.
    pub fresh: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceKind {
    Cloud,
    Batch,
}

impl ServiceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceKind::Cloud => "cloud",
            ServiceKind::Batch => "batch",
        }
    }
}

/// The free count of one VO's shares' accelerators of an offer's model and virtualization: what
/// the VO can start now, the smaller of the free GPUs and its quota headroom as the site computes
/// it (a share's FreeAccelerators).
#[derive(Debug, Clone, PartialEq)]
pub struct VoFree {
    pub vo: String,
    /// Slots, as `Offer::free`.
    pub free: GpuCount,
    /// Physical GPUs, as `Offer::free_physical`.
    pub free_physical: Option<GpuCount>,
}

impl Offer {
    /// The free counts `vo` can get of this offer (slots, physical GPUs): each the smaller of the
    /// offer's and the VO's shares', or `None` where the site publishes no share figure for `vo`.
    pub fn vo_capacity(&self, vo: &str) -> Option<(Option<GpuCount>, Option<GpuCount>)> {
        let share = self
            .vo_free
            .iter()
            .find(|v| v.vo.eq_ignore_ascii_case(vo))?;
        let smaller = |offer: Option<GpuCount>, share: Option<GpuCount>| match (offer, share) {
            (Some(offer), Some(share)) => Some(if share < offer { share } else { offer }),
            (offer, share) => share.or(offer),
        };
        Some((
            smaller(self.free, Some(share.free)),
            smaller(self.free_physical, share.free_physical),
        ))
    }

    /// The offer as `vo` sees it: its free counts those [`Offer::vo_capacity`] gives.
    pub fn for_vo(&self, vo: &str) -> Offer {
        let mut offer = self.clone();
        if let Some((free, free_physical)) = self.vo_capacity(vo) {
            offer.free = free;
            offer.free_physical = free_physical;
        }
        offer
    }

    /// Whether `vo` can start one instance or job of this offer now: false where the VO's free
    /// slots (its quota headroom included) are fewer than one instance takes. True where the site
    /// publishes no share figure for the VO (nothing says otherwise).
    pub fn fits_vo(&self, vo: &str) -> bool {
        match self.vo_capacity(vo) {
            Some((Some(free), _)) => free.at_least(if self.slots_each > self.gpus_each {
                self.slots_each
            } else {
                self.gpus_each
            }),
            _ => true,
        }
    }

    /// Marks the offer fresh or stale at `now`.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.fresh = now <= self.expires;
        self
    }
}

/// Why an offer was left out: a count it is made of is published, but is no GPU count.
///
/// Such an offer is skipped, never published with the count clamped or taken as absent: a
/// registry that answered "0 GPUs" or "10,000,000 free" for a value it could not read would send
/// users to resources that are not there, and one that dropped the value would hide the site's
/// fault. Leaving the offer out, with this reason logged, keeps every answer true to what the
/// site published.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{entity}: {attribute}: {source}; its offer is left out")]
pub struct InvalidCount {
    /// Where the count is published: `<class> <ID>`, or an LDAP entry's DN.
    pub entity: String,
    /// The attribute (or OtherInfo key) that holds it.
    pub attribute: String,
    pub source: CountError,
}
