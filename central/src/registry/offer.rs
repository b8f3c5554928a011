//! GPU offers: what a user can ask a site for, one per cloud flavor with GPUs and one per batch node
//! type's accelerator, read from the site's GLUE2 entities. Queries (HTTP API, CLI, LDAP, web page)
//! all answer with offers and select them with one [`Filter`].
//!
//! * Cloud: a `CloudComputingInstanceType` and its `CloudComputingVirtualAccelerator`. Its VOs are
//!   those of the shares it names (their MappingPolicy `VO:<name>` rules; a flavor that names no
//!   share is open to every share of its service), free/total from the manager's accelerators of
//!   the same model and virtualization.
//! * Batch: an `ExecutionEnvironment` and each of its `AcceleratorEnvironment`s (GPUs each is what a
//!   job can ask for on one node, the logical count), VOs from the shares that list the
//!   environment, free/total from the accelerator environment's slots.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use accelfed_schemas::glue::entity::{Class, Entity, Value};
use accelfed_schemas::glue::from_json::Stamp;
use accelfed_schemas::gpu::GpuModel;

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
    /// GPUs in one instance or on one node (fractions for shared GPUs).
    pub gpus_each: f64,
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
    /// GPUs free now and in total for this kind of GPU, where the site publishes capacity.
    pub free: Option<f64>,
    pub total: Option<f64>,
    pub vos: Vec<String>,
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

impl Offer {
    /// Marks the offer fresh or stale at `now`.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.fresh = now <= self.expires;
        self
    }
}

/// How a GPU reaches the workload, as a filter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    Passthrough,
    Vgpu,
    Mig,
    TimeSlicing,
}

impl Sharing {
    pub fn as_str(self) -> &'static str {
        match self {
            Sharing::Passthrough => "passthrough",
            Sharing::Vgpu => "vgpu",
            Sharing::Mig => "mig",
            Sharing::TimeSlicing => "time-slicing",
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
            _ => Err(format!(
                "unknown sharing mode {text:?} (expected passthrough, vgpu, mig or time-slicing)"
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
    pub min_gpus: Option<f64>,
    pub min_memory_mb: Option<u64>,
    /// At least this compute capability (`8.0` matches 8.0, 8.6, 9.0).
    pub compute_capability: Option<String>,
    pub sharing: Option<Sharing>,
    pub vo: Option<String>,
    pub site: Option<String>,
    pub min_free: Option<f64>,
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
            .is_some_and(|min| offer.gpus_each + 1e-9 < min)
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
            && offer.free.is_none_or(|free| free + 1e-9 < min)
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

/// The offers of one site's entities. `stamps` are at the entities' positions (an empty slice means
/// the information never goes stale, for callers that have none).
pub fn offers(entities: &[Entity], stamps: &[Stamp]) -> Vec<Offer> {
    let view = View::new(entities, stamps);
    let mut out = Vec::new();
    for (position, entity) in entities.iter().enumerate() {
        match entity.class {
            Class::CloudComputingInstanceType => view.flavor(position, &mut out),
            Class::ExecutionEnvironment => view.node_type(position, &mut out),
            _ => {}
        }
    }
    out
}

struct View<'e, 'a> {
    entities: &'e [Entity<'a>],
    stamps: &'e [Stamp],
    by_id: HashMap<&'e str, usize>,
    /// Children of each entity, by position.
    children: Vec<Vec<usize>>,
    site: String,
}

impl<'e, 'a> View<'e, 'a> {
    fn new(entities: &'e [Entity<'a>], stamps: &'e [Stamp]) -> Self {
        let by_id = entities
            .iter()
            .enumerate()
            .map(|(position, entity)| (entity.id.as_str(), position))
            .collect();
        let mut children = vec![Vec::new(); entities.len()];
        for (position, entity) in entities.iter().enumerate() {
            if let Some(parent) = entity.parent.filter(|&parent| parent < entities.len()) {
                children[parent].push(position);
            }
        }
        let site = entities
            .iter()
            .find(|entity| entity.class == Class::AdminDomain)
            .map(|entity| entity.id.clone())
            .unwrap_or_default();
        Self {
            entities,
            stamps,
            by_id,
            children,
            site,
        }
    }

    fn expires(&self, positions: &[usize]) -> DateTime<Utc> {
        positions
            .iter()
            .filter_map(|&position| self.stamps.get(position))
            .map(Stamp::expires)
            .min()
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    fn children_of(&self, position: usize, class: Class) -> impl Iterator<Item = usize> + '_ {
        self.children[position]
            .iter()
            .copied()
            .filter(move |&child| self.entities[child].class == class)
    }

    fn parent(&self, position: usize) -> Option<usize> {
        self.entities[position].parent
    }

    /// The VOs of a share: its MappingPolicies' `VO:<name>` rules.
    fn share_vos(&self, share: usize, vos: &mut Vec<String>) {
        for policy in self.children_of(share, Class::MappingPolicy) {
            if let Some(Value::List(rules)) = self.entities[policy].attribute("Rule") {
                for rule in rules {
                    if let Some(vo) = rule.strip_prefix("VO:")
                        && !vos.iter().any(|have| have == vo)
                    {
                        vos.push(vo.to_owned());
                    }
                }
            }
        }
    }

    fn associated(&self, position: usize, class: Class) -> impl Iterator<Item = usize> + '_ {
        self.entities[position]
            .associations
            .iter()
            .filter(move |(target, _)| *target == class)
            .filter_map(|(_, id)| self.by_id.get(id.as_str()).copied())
    }

    fn flavor(&self, flavor: usize, out: &mut Vec<Offer>) {
        let Some(accelerator) = self
            .associated(flavor, Class::CloudComputingVirtualAccelerator)
            .next()
        else {
            return;
        };
        let Some(manager) = self.parent(flavor) else {
            return;
        };
        let Some(service) = self.parent(manager) else {
            return;
        };
        let mut shares: Vec<usize> = self
            .associated(flavor, Class::CloudComputingShare)
            .collect();
        if shares.is_empty() {
            shares = self
                .children_of(service, Class::CloudComputingShare)
                .collect();
        }
        let mut vos = Vec::new();
        for &share in &shares {
            self.share_vos(share, &mut vos);
        }
        let gpu = &self.entities[accelerator];
        let (free, total) = self.capacity(
            self.children_of(manager, Class::CloudComputingManagerAccelerator),
            gpu,
            ["FreeAccelerators", "TotalAccelerators"],
        );
        let entity = &self.entities[flavor];
        out.push(Offer {
            site: self.site.clone(),
            service_id: self.entities[service].id.clone(),
            service_kind: ServiceKind::Cloud,
            resource_id: entity.id.clone(),
            resource_name: text(entity, "Name").unwrap_or_else(|| entity.id.clone()),
            gpus_each: count(gpu, "Number").unwrap_or(0.0),
            vendor: text(gpu, "Vendor").unwrap_or_default(),
            model: text(gpu, "Model").unwrap_or_default(),
            memory_mb: int(gpu, "Memory"),
            compute_capability: text(gpu, "ComputeCapability"),
            sharing: text(gpu, "VirtualizationType").unwrap_or_else(|| "none".to_owned()),
            mig_profile: text(gpu, "MIGProfile"),
            cpus: int(entity, "CPU"),
            ram_mb: int(entity, "RAM"),
            free,
            total,
            vos,
            expires: self.expires(&[flavor, accelerator]),
            fresh: true,
        });
    }

    fn node_type(&self, environment: usize, out: &mut Vec<Offer>) {
        let Some(manager) = self.parent(environment) else {
            return;
        };
        let Some(service) = self.parent(manager) else {
            return;
        };
        let mut vos = Vec::new();
        for share in self.associated(environment, Class::ComputingShare) {
            self.share_vos(share, &mut vos);
        }
        let entity = &self.entities[environment];
        for accelerator in self.children_of(environment, Class::AcceleratorEnvironment) {
            let gpu = &self.entities[accelerator];
            out.push(Offer {
                site: self.site.clone(),
                service_id: self.entities[service].id.clone(),
                service_kind: ServiceKind::Batch,
                resource_id: entity.id.clone(),
                resource_name: text(entity, "Name").unwrap_or_else(|| local_part(&entity.id)),
                gpus_each: count(gpu, "LogicalAccelerators")
                    .or_else(|| count(gpu, "PhysicalAccelerators"))
                    .unwrap_or(0.0),
                vendor: text(gpu, "Vendor").unwrap_or_default(),
                model: text(gpu, "Model").unwrap_or_default(),
                memory_mb: int(gpu, "Memory"),
                compute_capability: text(gpu, "ComputeCapability"),
                sharing: text(gpu, "VirtualizationType").unwrap_or_else(|| "none".to_owned()),
                mig_profile: text(gpu, "MIGProfile"),
                cpus: int(entity, "LogicalCPUs"),
                ram_mb: int(entity, "MainMemorySize"),
                free: count(gpu, "FreeAcceleratorSlots"),
                total: count(gpu, "TotalAcceleratorSlots"),
                vos: vos.clone(),
                expires: self.expires(&[environment, accelerator]),
                fresh: true,
            });
        }
    }

    /// Free and total GPUs of `gpu`'s model and virtualization among `accelerators`.
    fn capacity(
        &self,
        accelerators: impl Iterator<Item = usize>,
        gpu: &Entity,
        [free_name, total_name]: [&str; 2],
    ) -> (Option<f64>, Option<f64>) {
        let same = |other: &Entity| {
            other.attribute("Model") == gpu.attribute("Model")
                && other.attribute("VirtualizationType") == gpu.attribute("VirtualizationType")
        };
        let mut free = None;
        let mut total = None;
        for position in accelerators {
            let other = &self.entities[position];
            if !same(other) {
                continue;
            }
            if let Some(value) = count(other, free_name) {
                free = Some(free.unwrap_or(0.0) + value);
            }
            if let Some(value) = count(other, total_name) {
                total = Some(total.unwrap_or(0.0) + value);
            }
        }
        (free, total)
    }
}

/// The last segment of an accelfed ID (`urn:accelfed:S:ee:hpc/a100` -> `a100`).
fn local_part(id: &str) -> String {
    id.rsplit(['/', ':']).next().unwrap_or(id).to_owned()
}

fn text(entity: &Entity, name: &str) -> Option<String> {
    match entity.attribute(name)? {
        Value::Text(text) => Some(text.to_string()),
        _ => None,
    }
}

fn int(entity: &Entity, name: &str) -> Option<u64> {
    match entity.attribute(name)? {
        Value::Int(value) => Some(*value),
        Value::Count(count) => count.as_whole(),
        _ => None,
    }
}

fn count(entity: &Entity, name: &str) -> Option<f64> {
    match entity.attribute(name)? {
        Value::Count(count) => Some(count.get()),
        Value::Int(value) => Some(*value as f64),
        Value::Float(value) => Some(*value),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
