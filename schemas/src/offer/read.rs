//! Offers read from one site's GLUE2 entities (see the module above for which entities make one).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::glue::entity::{Class, Entity, Value};
use crate::glue::from_json::Stamp;
use crate::gpu::GpuCount;

use super::unit::{Facts, Unit};
use super::{InvalidCount, Offer, ServiceKind};

mod attributes;
mod pool;
mod vo_free;

use attributes::{count, int, invalid, local_part, text};
use pool::same_kind;

/// The offers of one site's entities. `stamps` are at the entities' positions (an empty slice means
/// the information never goes stale, for callers that have none). Offers with an invalid count are
/// left out; [`offers_and_skipped`] says which and why.
pub fn offers(entities: &[Entity], stamps: &[Stamp]) -> Vec<Offer> {
    offers_and_skipped(entities, stamps).0
}

/// The offers of one site's entities, and why each one left out was left out.
pub fn offers_and_skipped(
    entities: &[Entity],
    stamps: &[Stamp],
) -> (Vec<Offer>, Vec<InvalidCount>) {
    let view = View::new(entities, stamps);
    let mut found = Vec::new();
    for (position, entity) in entities.iter().enumerate() {
        match entity.class {
            Class::CloudComputingInstanceType => view.flavor(position, &mut found),
            Class::ExecutionEnvironment => view.node_type(position, &mut found),
            _ => {}
        }
    }
    let mut offers = Vec::with_capacity(found.len());
    let mut skipped = Vec::new();
    for offer in found {
        match offer {
            Ok(offer) => offers.push(offer),
            Err(reason) => skipped.push(reason),
        }
    }
    (offers, skipped)
}

/// Offers as they are read: each one, or why it is left out.
type Found = Vec<Result<Offer, InvalidCount>>;

/// The parts of an offer that a flavor and a node type read differently: what one instance or node
/// gives, free and total slots (the same in physical GPUs), VOs.
struct Parts {
    unit: Unit,
    free: Option<GpuCount>,
    total: Option<GpuCount>,
    free_physical: Option<GpuCount>,
    total_physical: Option<GpuCount>,
    pool: String,
    vos: Vec<String>,
    vo_free: Vec<super::VoFree>,
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

    fn flavor(&self, flavor: usize, out: &mut Found) {
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
        out.push(self.flavor_offer(flavor, accelerator, manager, service, vos, &shares));
    }

    fn flavor_offer(
        &self,
        flavor: usize,
        accelerator: usize,
        manager: usize,
        service: usize,
        vos: Vec<String>,
        shares: &[usize],
    ) -> Result<Offer, InvalidCount> {
        let gpu = &self.entities[accelerator];
        let unit = unit_of(
            gpu,
            count(gpu, "Number")?.unwrap_or_default(),
            "PhysicalAccelerators",
        )?;
        let managers = || self.children_of(manager, Class::CloudComputingManagerAccelerator);
        let (free, total) =
            self.capacity(managers(), gpu, ["FreeAccelerators", "TotalAccelerators"])?;
        let (free_physical, total_physical) = self.capacity(
            managers(),
            gpu,
            ["FreePhysicalAccelerators", "TotalPhysicalAccelerators"],
        )?;
        // A manager that publishes no physical counts: the slots' physical worth.
        let free_physical = match free_physical {
            Some(free) => Some(free),
            None => physical(&unit, free, gpu, "FreeAccelerators")?,
        };
        let total_physical = match total_physical {
            Some(total) => Some(total),
            None => physical(&unit, total, gpu, "TotalAccelerators")?,
        };
        let parts = Parts {
            unit,
            free,
            total,
            free_physical,
            total_physical,
            pool: self.pool(managers(), gpu, accelerator),
            vos,
            vo_free: self.vo_free(
                shares,
                Class::CloudComputingShareAccelerator,
                gpu,
                "FreeAccelerators",
            )?,
        };
        Ok(self.offer(ServiceKind::Cloud, service, flavor, accelerator, parts))
    }

    fn node_type(&self, environment: usize, out: &mut Found) {
        let Some(manager) = self.parent(environment) else {
            return;
        };
        let Some(service) = self.parent(manager) else {
            return;
        };
        let shares: Vec<usize> = self
            .associated(environment, Class::ComputingShare)
            .collect();
        let mut vos = Vec::new();
        for &share in &shares {
            self.share_vos(share, &mut vos);
        }
        for accelerator in self.children_of(environment, Class::AcceleratorEnvironment) {
            out.push(self.node_type_offer(environment, accelerator, service, &vos, &shares));
        }
    }

    fn node_type_offer(
        &self,
        environment: usize,
        accelerator: usize,
        service: usize,
        vos: &[String],
        shares: &[usize],
    ) -> Result<Offer, InvalidCount> {
        let gpu = &self.entities[accelerator];
        let slots = match count(gpu, "LogicalAccelerators")? {
            Some(slots) => slots,
            None => count(gpu, "PhysicalAccelerators")?.unwrap_or_default(),
        };
        let unit = unit_of(gpu, slots, "PhysicalAccelerators")?;
        let free = count(gpu, "FreeAcceleratorSlots")?;
        let total = count(gpu, "TotalAcceleratorSlots")?;
        let parts = Parts {
            free_physical: physical(&unit, free, gpu, "FreeAcceleratorSlots")?,
            total_physical: physical(&unit, total, gpu, "TotalAcceleratorSlots")?,
            unit,
            free,
            total,
            pool: gpu.id.clone(),
            vos: vos.to_vec(),
            vo_free: self.vo_free(
                shares,
                Class::ComputingShareAccelerator,
                gpu,
                "FreeAcceleratorSlots",
            )?,
        };
        Ok(self.offer(ServiceKind::Batch, service, environment, accelerator, parts))
    }

    /// The offer of the accelerator at `gpu` on the flavor or node type at `resource`: the
    /// attributes both kinds read the same way, under the names each kind's class gives them.
    fn offer(
        &self,
        kind: ServiceKind,
        service: usize,
        resource: usize,
        gpu: usize,
        parts: Parts,
    ) -> Offer {
        let entity = &self.entities[resource];
        let accelerator = &self.entities[gpu];
        let (cpus, ram) = match kind {
            ServiceKind::Cloud => ("CPU", "RAM"),
            ServiceKind::Batch => ("LogicalCPUs", "MainMemorySize"),
        };
        let resource_name = text(entity, "Name").unwrap_or_else(|| match kind {
            ServiceKind::Cloud => entity.id.clone(),
            ServiceKind::Batch => local_part(&entity.id),
        });
        Offer {
            site: self.site.clone(),
            service_id: self.entities[service].id.clone(),
            service_kind: kind,
            resource_id: entity.id.clone(),
            resource_name,
            gpus_each: parts.unit.gpus_each,
            slots_each: parts.unit.slots_each,
            physical_each: parts.unit.physical_each,
            gets: parts.unit.gets,
            vendor: text(accelerator, "Vendor").unwrap_or_default(),
            model: text(accelerator, "Model").unwrap_or_default(),
            memory_mb: int(accelerator, "Memory"),
            compute_capability: text(accelerator, "ComputeCapability"),
            sharing: text(accelerator, "VirtualizationType").unwrap_or_else(|| "none".to_owned()),
            mig_profile: text(accelerator, "MIGProfile"),
            cpus: int(entity, cpus),
            ram_mb: int(entity, ram),
            free: parts.free,
            total: parts.total,
            free_physical: parts.free_physical,
            total_physical: parts.total_physical,
            slot_share: parts.unit.slot_share,
            pool: parts.pool,
            vos: parts.vos,
            vo_free: parts.vo_free,
            expires: self.expires(&[resource, gpu]),
            fresh: true,
        }
    }

    /// Free and total GPUs of `gpu`'s model and virtualization among `accelerators`.
    fn capacity(
        &self,
        accelerators: impl Iterator<Item = usize>,
        gpu: &Entity,
        [free_name, total_name]: [&str; 2],
    ) -> Result<(Option<GpuCount>, Option<GpuCount>), InvalidCount> {
        let same = |other: &Entity| same_kind(other, gpu);
        let mut free = None;
        let mut total = None;
        for position in accelerators {
            let other = &self.entities[position];
            if !same(other) {
                continue;
            }
            if let Some(value) = count(other, free_name)? {
                free = Some(free.unwrap_or_default() + value);
            }
            if let Some(value) = count(other, total_name)? {
                total = Some(total.unwrap_or_default() + value);
            }
        }
        Ok((free, total))
    }
}

/// What one instance or node of `gpu` gives: `slots` units, with the physical count under
/// `physical_name` where published.
fn unit_of(gpu: &Entity, slots: GpuCount, physical_name: &str) -> Result<Unit, InvalidCount> {
    let model = text(gpu, "Model").unwrap_or_default();
    let virtualization = text(gpu, "VirtualizationType").unwrap_or_default();
    let mig_profile = text(gpu, "MIGProfile");
    let slot_share = text(gpu, "SlotShare");
    Ok(Unit::of(Facts {
        model: &model,
        virtualization: &virtualization,
        mig_profile: mig_profile.as_deref(),
        slot_share: slot_share.as_deref(),
        slots,
        physical: count(gpu, physical_name)?,
    }))
}

/// `slots` (published as `name` for `gpu`) in physical GPUs.
fn physical(
    unit: &Unit,
    slots: Option<GpuCount>,
    gpu: &Entity,
    name: &str,
) -> Result<Option<GpuCount>, InvalidCount> {
    slots
        .map(|slots| unit.physical(slots))
        .transpose()
        .map_err(|source| invalid(gpu, &format!("{name} in physical GPUs"), source))
}

#[cfg(test)]
mod tests;
