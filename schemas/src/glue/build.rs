//! Builds the entity list of a snapshot (see [`super::entity`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use super::capacity::{physical, share_text, total_pairs, whole_physical_counts};
use super::entity::{Class, Entity, Value};
use super::ids::{Ids, Kind};
use super::{
    AcceleratorCapacity, AdminDomain, CloudService, ComputingService, Endpoint,
    ExecutionEnvironment, Service, SiteSnapshot, VoAccess,
};
use crate::gpu::{Capacity, GpuSpec};
use crate::names::Text;

impl SiteSnapshot {
    /// The GLUE2 entities of this snapshot, parents before children.
    ///
    /// Text attributes borrow from the snapshot: a large site has hundreds of thousands of them.
    pub fn entities(&self) -> Vec<Entity<'_>> {
        let entities = self.entities_unchecked();
        // Every rendering starts here: in debug builds (every test), no document with two
        // physical truths gets past, whichever path built it. Providers refuse it earlier, in
        // `validate`, with the same checker.
        #[cfg(debug_assertions)]
        if let Err(mismatch) = super::physical::check(&entities) {
            panic!("site {}: {mismatch}", self.domain.name);
        }
        entities
    }

    /// [`Self::entities`] without the debug builds' physical check, for
    /// [`SiteSnapshot::validate`], which reports what that check finds as an error.
    pub(super) fn entities_unchecked(&self) -> Vec<Entity<'_>> {
        let mut builder = Builder {
            ids: Ids::new(&self.domain.name),
            out: Vec::new(),
        };
        let managers = self.services.iter().flat_map(|service| match service {
            Service::Computing(service) => &service.manager.accelerators,
            Service::Cloud(service) => &service.manager.accelerators,
        });
        let site = builder.domain(&self.domain, total_pairs(managers));
        for service in &self.services {
            match service {
                Service::Computing(service) => builder.computing(site, service),
                Service::Cloud(service) => builder.cloud(site, service),
            }
        }
        builder.out
    }
}

struct Builder<'a> {
    ids: Ids,
    out: Vec<Entity<'a>>,
}

/// Collects attributes, leaving out the absent ones.
struct Attrs<'a>(Vec<(&'static str, Value<'a>)>);

impl Default for Attrs<'_> {
    fn default() -> Self {
        // Room for the largest class (a manager accelerator has 19), so it never grows.
        Self(Vec::with_capacity(20))
    }
}

impl<'a> Attrs<'a> {
    fn text<T: AsRef<str> + ?Sized>(mut self, key: &'static str, value: &'a T) -> Self {
        self.0
            .push((key, Value::Text(Cow::Borrowed(value.as_ref()))));
        self
    }
    fn opt_text(self, key: &'static str, value: Option<&'a Text>) -> Self {
        match value {
            Some(value) => self.text(key, value),
            None => self,
        }
    }
    fn int(mut self, key: &'static str, value: impl Into<u64>) -> Self {
        self.0.push((key, Value::Int(value.into())));
        self
    }
    fn opt_int(self, key: &'static str, value: Option<impl Into<u64>>) -> Self {
        match value {
            Some(value) => self.int(key, value),
            None => self,
        }
    }
    fn value(mut self, key: &'static str, value: Value<'a>) -> Self {
        self.0.push((key, value));
        self
    }
    fn list(mut self, key: &'static str, values: &[Text]) -> Self {
        if !values.is_empty() {
            self.0.push((
                key,
                Value::List(values.iter().map(|v| v.as_str().to_owned()).collect()),
            ));
        }
        self
    }
    /// The attributes every accelerator class shares: what the device is.
    fn gpu(self, gpu: &'a GpuSpec) -> Self {
        self.text("Type", gpu.kind.as_str())
            .text("Vendor", &gpu.vendor)
            .text("Model", &gpu.model)
            .opt_int("Memory", gpu.memory.map(|m| m.get()))
            .opt_text("ComputeCapability", gpu.compute_capability.as_ref())
            .opt_int("ClockSpeed", gpu.clock_speed_mhz)
            .text("VirtualizationType", gpu.virtualization.as_str())
            .opt_text("MIGProfile", gpu.mig_profile.as_ref())
            .opt_text("DriverVersion", gpu.driver_version.as_ref())
            .opt_text("CUDAVersion", gpu.cuda_version.as_ref())
            .slot_share(gpu)
    }
    /// What one slot (or one device of a flavor) is of a physical GPU, where it is not a whole one.
    fn slot_share(self, gpu: &GpuSpec) -> Self {
        match share_text(&gpu.sharing) {
            Some(share) => self.value("SlotShare", Value::Text(Cow::Owned(share))),
            None => self,
        }
    }
    /// The attributes of a service of either family.
    fn service(
        family: &Family,
        name: Option<&'a Text>,
        quality_level: &'a Text,
        capabilities: &[Text],
    ) -> Self {
        Self::default()
            .opt_text("Name", name)
            .text("Type", family.service_type)
            .text("QualityLevel", quality_level)
            .list("Capability", capabilities)
    }
    /// Capacity under the names a class family uses (`AcceleratorSlots` in batch, `Accelerators` in
    /// clouds).
    fn capacity(self, names: [&'static str; 3], capacity: &Capacity) -> Self {
        self.value(names[0], Value::Count(capacity.total))
            .value(names[1], Value::Count(capacity.used))
            .value(names[2], Value::Count(capacity.free))
    }
}

const BATCH_CAPACITY: [&str; 3] = [
    "TotalAcceleratorSlots",
    "UsedAcceleratorSlots",
    "FreeAcceleratorSlots",
];
const CLOUD_CAPACITY: [&str; 3] = ["TotalAccelerators", "UsedAccelerators", "FreeAccelerators"];
/// The same capacity in physical GPUs, beside the slots, in every family.
const PHYSICAL_CAPACITY: [&str; 3] = [
    "TotalPhysicalAccelerators",
    "UsedPhysicalAccelerators",
    "FreePhysicalAccelerators",
];

/// What differs between the two service families where their entities are otherwise alike (the
/// service, its endpoints, its manager, the manager's and the shares' accelerators).
struct Family {
    service: Class,
    service_type: &'static str,
    endpoint: Class,
    manager: Class,
    manager_accelerator: Class,
    share_accelerator: Class,
    capacity: [&'static str; 3],
}

const BATCH: Family = Family {
    service: Class::ComputingService,
    service_type: "org.ogf.glue.computing.batch",
    endpoint: Class::ComputingEndpoint,
    manager: Class::ComputingManager,
    manager_accelerator: Class::ComputingManagerAccelerator,
    share_accelerator: Class::ComputingShareAccelerator,
    capacity: BATCH_CAPACITY,
};

const CLOUD: Family = Family {
    service: Class::CloudComputingService,
    service_type: "org.cloud.iaas",
    endpoint: Class::CloudComputingEndpoint,
    manager: Class::CloudComputingManager,
    manager_accelerator: Class::CloudComputingManagerAccelerator,
    share_accelerator: Class::CloudComputingShareAccelerator,
    capacity: CLOUD_CAPACITY,
};

fn sorted(map: &BTreeMap<String, String>) -> Vec<(String, String)> {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

impl<'a> Builder<'a> {
    fn push(
        &mut self,
        class: Class,
        id: String,
        parent: Option<usize>,
        attrs: Attrs<'a>,
        other_info: Vec<(String, String)>,
        associations: Vec<(Class, String)>,
    ) -> usize {
        let (attributes, other_info) = whole_physical_counts(attrs.0, other_info);
        self.out.push(Entity {
            class,
            id,
            parent,
            attributes,
            other_info,
            associations,
        });
        self.out.len() - 1
    }

    fn id_of(&self, index: usize) -> String {
        self.out[index].id.clone()
    }

    fn domain(&mut self, domain: &'a AdminDomain, totals: Vec<(String, String)>) -> usize {
        let mut other = sorted(&domain.other_info);
        if let Some(gocdb) = &domain.gocdb_id {
            other.push(("gocdb_id".into(), gocdb.to_string()));
        }
        other.extend(totals);
        other.sort();
        let attrs = Attrs::default()
            .text("Name", &domain.name)
            .opt_text("Description", domain.description.as_ref())
            .opt_text("WWW", domain.www.as_ref());
        // The AdminDomain ID is the site name itself, as BDIIs and cloud-info-api expect.
        let site = self.push(
            Class::AdminDomain,
            domain.name.to_string(),
            None,
            attrs,
            other,
            vec![],
        );
        let site_id = self.id_of(site);
        if let Some(location) = &domain.location {
            let mut attrs = Attrs::default()
                .opt_text("Place", location.place.as_ref())
                .opt_text("Country", location.country.as_ref());
            if let Some(latitude) = location.latitude {
                attrs = attrs.value("Latitude", Value::Float(latitude));
            }
            if let Some(longitude) = location.longitude {
                attrs = attrs.value("Longitude", Value::Float(longitude));
            }
            let id = self.ids.id(Kind::Location, &[domain.name.as_str()]);
            self.push(
                Class::Location,
                id,
                Some(site),
                attrs,
                vec![],
                vec![(Class::AdminDomain, site_id.clone())],
            );
        }
        for (index, contact) in domain.contacts.iter().enumerate() {
            let attrs = Attrs::default()
                .text("Detail", &contact.detail)
                .text("Type", &contact.kind);
            let id = self.ids.id(Kind::Contact, &[&index.to_string()]);
            self.push(
                Class::Contact,
                id,
                Some(site),
                attrs,
                vec![],
                vec![(Class::AdminDomain, site_id.clone())],
            );
        }
        site
    }

    fn endpoint(&mut self, class: Class, service: usize, svc: &str, endpoint: &'a Endpoint) {
        let id = self
            .ids
            .id(Kind::Endpoint, &[svc, endpoint.local_id.as_str()]);
        let attrs = Attrs::default()
            .text("URL", &endpoint.url)
            .list("Capability", &endpoint.capabilities)
            .text("Technology", &endpoint.technology)
            .text("InterfaceName", &endpoint.interface_name)
            .opt_text("InterfaceVersion", endpoint.interface_version.as_ref())
            .opt_text("ImplementationName", endpoint.implementation_name.as_ref())
            .opt_text(
                "ImplementationVersion",
                endpoint.implementation_version.as_ref(),
            )
            .text("QualityLevel", &endpoint.quality_level)
            .text("HealthState", &endpoint.health_state)
            .opt_text("HealthStateInfo", endpoint.health_state_info.as_ref())
            .text("ServingState", &endpoint.serving_state);
        let service_class = self.out[service].class;
        let service_id = self.id_of(service);
        let index = self.push(
            class,
            id,
            Some(service),
            attrs,
            vec![],
            vec![(service_class, service_id)],
        );
        if endpoint.access.is_empty() {
            return;
        }
        let endpoint_id = self.id_of(index);
        // A VO admitted through several shares (and once more with a role) is one rule and one
        // UserDomain: LDAP rejects an entry that repeats a value.
        let rules = unique(endpoint.access.iter().flat_map(VoAccess::rules));
        let attrs = Attrs::default()
            .text("Scheme", "org.glite.standard")
            .value("Rule", Value::List(rules));
        let mut associations = vec![(Class::ComputingEndpoint, endpoint_id)];
        if class == Class::CloudComputingEndpoint {
            associations[0].0 = Class::CloudComputingEndpoint;
        }
        associations.extend(
            unique(endpoint.access.iter().map(|a| a.vo.to_string()))
                .into_iter()
                .map(|vo| (Class::UserDomain, vo)),
        );
        let id = self
            .ids
            .id(Kind::AccessPolicy, &[svc, endpoint.local_id.as_str()]);
        self.push(
            Class::AccessPolicy,
            id,
            Some(index),
            attrs,
            vec![],
            associations,
        );
    }

    /// One MappingPolicy per VO of a share: cloud-info-api reads exactly one VO per policy.
    fn mapping_policies(
        &mut self,
        share: usize,
        share_class: Class,
        svc: &str,
        local: &str,
        access: &[VoAccess],
    ) {
        let share_id = self.id_of(share);
        for vo in access {
            let attrs = Attrs::default()
                .text("Scheme", "org.glite.standard")
                .value("Rule", Value::List(vo.rules()));
            let id = self
                .ids
                .id(Kind::MappingPolicy, &[svc, local, vo.vo.as_str()]);
            let associations = vec![
                (share_class, share_id.clone()),
                (Class::UserDomain, vo.vo.to_string()),
            ];
            self.push(
                Class::MappingPolicy,
                id,
                Some(share),
                attrs,
                vec![],
                associations,
            );
        }
    }

    /// The service entity of either family, under the site, and its endpoints; returns its index.
    fn service(
        &mut self,
        family: &Family,
        site: usize,
        svc: &str,
        attrs: Attrs<'a>,
        other_info: Vec<(String, String)>,
        endpoints: &'a [Endpoint],
    ) -> usize {
        let site_id = self.id_of(site);
        let id = self.ids.id(Kind::Service, &[svc]);
        let service_index = self.push(
            family.service,
            id,
            None,
            attrs,
            other_info,
            vec![(Class::AdminDomain, site_id)],
        );
        for endpoint in endpoints {
            self.endpoint(family.endpoint, service_index, svc, endpoint);
        }
        service_index
    }

    /// The manager entity of either family, under its service, and the manager's accelerators;
    /// returns its index.
    fn manager(
        &mut self,
        family: &Family,
        service: usize,
        svc: &str,
        attrs: Attrs<'a>,
        accelerators: &'a [AcceleratorCapacity],
    ) -> usize {
        let id = self.ids.id(Kind::Manager, &[svc]);
        let service_id = self.id_of(service);
        let manager_index = self.push(
            family.manager,
            id,
            Some(service),
            attrs,
            total_pairs(accelerators),
            vec![(family.service, service_id)],
        );
        for accelerator in accelerators {
            self.accelerator_capacity(
                family.manager_accelerator,
                Kind::ManagerAccelerator,
                manager_index,
                &[svc],
                family.capacity,
                accelerator,
            );
        }
        manager_index
    }

    /// A share's accelerators in either family; `path` is the service's and the share's local ids.
    fn share_accelerators(
        &mut self,
        family: &Family,
        share: usize,
        path: &[&str],
        accelerators: &'a [AcceleratorCapacity],
    ) {
        for accelerator in accelerators {
            self.accelerator_capacity(
                family.share_accelerator,
                Kind::ShareAccelerator,
                share,
                path,
                family.capacity,
                accelerator,
            );
        }
    }

    fn accelerator_capacity(
        &mut self,
        class: Class,
        kind: Kind,
        parent: usize,
        path: &[&str],
        names: [&'static str; 3],
        accelerator: &'a AcceleratorCapacity,
    ) {
        let parent_class = self.out[parent].class;
        let parent_id = self.id_of(parent);
        let mut parts = path.to_vec();
        parts.push(accelerator.local_id.as_str());
        let id = self.ids.id(kind, &parts);
        let mut attrs = Attrs::default()
            .gpu(&accelerator.gpu)
            .capacity(names, &accelerator.capacity)
            .capacity(PHYSICAL_CAPACITY, &accelerator.physical());
        if let Some(max) = accelerator.max_per_job {
            let key = if names == BATCH_CAPACITY {
                "MaxAcceleratorSlotsPerJob"
            } else {
                "MaxAccelerators"
            };
            attrs = attrs.value(key, Value::Count(max));
        }
        self.push(
            class,
            id,
            Some(parent),
            attrs,
            vec![],
            vec![(parent_class, parent_id)],
        );
    }

    fn computing(&mut self, site: usize, service: &'a ComputingService) {
        let svc = service.local_id.as_str();
        let attrs = Attrs::service(
            &BATCH,
            service.name.as_ref(),
            &service.quality_level,
            &service.capabilities,
        );
        let service_index = self.service(
            &BATCH,
            site,
            svc,
            attrs,
            with_totals(&service.other_info, &service.manager.accelerators),
            &service.endpoints,
        );
        let service_id = self.id_of(service_index);

        let manager = &service.manager;
        let logical_cpus: u64 = manager
            .environments
            .iter()
            .filter_map(|ee| {
                ee.logical_cpus
                    .map(|cpus| u64::from(cpus) * u64::from(ee.total_instances))
            })
            .sum();
        let attrs = Attrs::default()
            .text("ProductName", &manager.product_name)
            .opt_text("ProductVersion", manager.product_version.as_ref())
            .opt_int(
                "TotalLogicalCPUs",
                (logical_cpus > 0).then_some(logical_cpus),
            );
        let manager_index = self.manager(&BATCH, service_index, svc, attrs, &manager.accelerators);
        let share_ids: Vec<String> = service
            .shares
            .iter()
            .map(|share| self.ids.id(Kind::Share, &[svc, share.local_id.as_str()]))
            .collect();
        let shares_of = shares_by_environment(service);
        for environment in &manager.environments {
            let shares = shares_of
                .get(environment.local_id.as_str())
                .map_or(&[][..], Vec::as_slice);
            let share_ids = shares.iter().map(|&share| share_ids[share].clone());
            self.environment(manager_index, svc, environment, share_ids);
        }

        for (share, id) in service.shares.iter().zip(share_ids) {
            let attrs = Attrs::default()
                .opt_text("Name", share.name.as_ref())
                .opt_text("MappingQueue", share.mapping_queue.as_ref())
                .text("ServingState", &share.serving_state)
                .opt_int("MaxWallTime", share.max_wall_time_s)
                .opt_int("MaxSlotsPerJob", share.slots.max_per_job)
                .opt_int("FreeSlots", share.slots.free)
                .opt_int("UsedSlots", share.slots.used);
            let mut associations = vec![(Class::ComputingService, service_id.clone())];
            associations.extend(share.environments.iter().map(|ee| {
                (
                    Class::ExecutionEnvironment,
                    self.ids.id(Kind::ExecutionEnvironment, &[svc, ee.as_str()]),
                )
            }));
            let share_index = self.push(
                Class::ComputingShare,
                id,
                Some(service_index),
                attrs,
                vec![],
                associations,
            );
            self.mapping_policies(
                share_index,
                Class::ComputingShare,
                svc,
                share.local_id.as_str(),
                &share.access,
            );
            let path = [svc, share.local_id.as_str()];
            self.share_accelerators(&BATCH, share_index, &path, &share.accelerators);
        }
    }

    /// An execution environment and its accelerators; `shares` are the IDs of the shares that
    /// list it.
    fn environment(
        &mut self,
        manager: usize,
        svc: &str,
        ee: &'a ExecutionEnvironment,
        shares: impl Iterator<Item = String>,
    ) {
        let local = ee.local_id.as_str();
        let id = self.ids.id(Kind::ExecutionEnvironment, &[svc, local]);
        let attrs = Attrs::default()
            .opt_text("Name", ee.name.as_ref())
            .text("Platform", &ee.platform)
            .int("TotalInstances", ee.total_instances)
            .int("UsedInstances", ee.used_instances)
            .int("UnavailableInstances", ee.unavailable_instances)
            .opt_int("PhysicalCPUs", ee.physical_cpus)
            .opt_int("LogicalCPUs", ee.logical_cpus)
            .opt_int("MainMemorySize", ee.main_memory.map(|m| m.get()))
            .text("OSFamily", &ee.os_family)
            .opt_text("OSName", ee.os_name.as_ref())
            .opt_text("OSVersion", ee.os_version.as_ref());
        let mut associations = vec![(Class::ComputingManager, self.id_of(manager))];
        associations.extend(shares.map(|share| (Class::ComputingShare, share)));
        let ee_index = self.push(
            Class::ExecutionEnvironment,
            id,
            Some(manager),
            attrs,
            vec![],
            associations,
        );
        let ee_id = self.id_of(ee_index);
        for accelerator in &ee.accelerators {
            let id = self.ids.id(
                Kind::AcceleratorEnvironment,
                &[svc, local, accelerator.local_id.as_str()],
            );
            let attrs = Attrs::default()
                .value(
                    "PhysicalAccelerators",
                    Value::Count(accelerator.physical_per_instance),
                )
                .value(
                    "LogicalAccelerators",
                    Value::Count(accelerator.logical_per_instance),
                )
                .gpu(&accelerator.gpu)
                .capacity(BATCH_CAPACITY, &accelerator.capacity);
            self.push(
                Class::AcceleratorEnvironment,
                id,
                Some(ee_index),
                attrs,
                vec![],
                vec![(Class::ExecutionEnvironment, ee_id.clone())],
            );
        }
    }

    fn cloud(&mut self, site: usize, service: &'a CloudService) {
        let svc = service.local_id.as_str();
        let attrs = Attrs::service(
            &CLOUD,
            service.name.as_ref(),
            &service.quality_level,
            &service.capabilities,
        );
        let service_index = self.service(
            &CLOUD,
            site,
            svc,
            attrs,
            with_totals(&service.other_info, &service.manager.accelerators),
            &service.endpoints,
        );
        let service_id = self.id_of(service_index);

        let manager = &service.manager;
        let attrs = Attrs::default()
            .text("ProductName", &manager.product_name)
            .opt_text("ProductVersion", manager.product_version.as_ref())
            .opt_text("HypervisorName", manager.hypervisor_name.as_ref())
            .opt_int("TotalCPUs", manager.total_cpus)
            .opt_int("TotalRAM", manager.total_ram.map(|m| m.get()));
        let manager_index = self.manager(&CLOUD, service_index, svc, attrs, &manager.accelerators);

        let share_id = |ids: &Ids, local: &str| ids.id(Kind::Share, &[svc, local]);
        for share in &service.shares {
            let id = share_id(&self.ids, share.local_id.as_str());
            let attrs = Attrs::default()
                .opt_text("Name", share.name.as_ref())
                .opt_text("ProjectID", share.project_id.as_ref())
                .opt_int("MaxVM", share.max_vm)
                .opt_int("RunningVM", share.running_vm);
            let attrs = match share.max_gpus {
                Some(max) => attrs.value("MaxAccelerators", Value::Count(max)),
                None => attrs,
            };
            let share_index = self.push(
                Class::CloudComputingShare,
                id,
                Some(service_index),
                attrs,
                vec![],
                vec![(Class::CloudComputingService, service_id.clone())],
            );
            let access = std::slice::from_ref(&share.access);
            self.mapping_policies(
                share_index,
                Class::CloudComputingShare,
                svc,
                share.local_id.as_str(),
                access,
            );
            let path = [svc, share.local_id.as_str()];
            self.share_accelerators(&CLOUD, share_index, &path, &share.accelerators);
        }

        for flavor in &service.instance_types {
            let local = flavor.local_id.as_str();
            let id = self.ids.id(Kind::InstanceType, &[svc, local]);
            let mut attrs = Attrs::default()
                .text("Name", &flavor.name)
                .text("Platform", &flavor.platform)
                .int("CPU", flavor.cpu)
                .int("RAM", flavor.ram.get())
                .int("Disk", flavor.disk_gb);
            if let Some(family) = &flavor.os_family {
                attrs = attrs.text("OSFamily", family);
            }
            let mut associations = vec![(Class::CloudComputingManager, self.id_of(manager_index))];
            associations.extend(
                flavor
                    .shares
                    .iter()
                    .map(|s| (Class::CloudComputingShare, share_id(&self.ids, s.as_str()))),
            );
            let accelerator_id = self.ids.id(Kind::VirtualAccelerator, &[svc, local]);
            if flavor.accelerator.is_some() {
                associations.push((
                    Class::CloudComputingVirtualAccelerator,
                    accelerator_id.clone(),
                ));
            }
            let flavor_index = self.push(
                Class::CloudComputingInstanceType,
                id,
                Some(manager_index),
                attrs,
                sorted(&flavor.other_info),
                associations,
            );
            if let Some(accelerator) = &flavor.accelerator {
                let attrs = Attrs::default()
                    .value(
                        "Name",
                        Value::Text(Cow::Owned(format!(
                            "{} x {}",
                            accelerator.count, accelerator.gpu.model
                        ))),
                    )
                    .value("Number", Value::Count(accelerator.count))
                    .value(
                        "PhysicalAccelerators",
                        Value::Count(physical(accelerator.count, &accelerator.gpu.sharing)),
                    )
                    .gpu(&accelerator.gpu);
                let flavor_id = self.id_of(flavor_index);
                self.push(
                    Class::CloudComputingVirtualAccelerator,
                    accelerator_id,
                    Some(flavor_index),
                    attrs,
                    vec![],
                    vec![(Class::CloudComputingInstanceType, flavor_id)],
                );
            }
        }

        for image in &service.images {
            let id = self.ids.id(Kind::Image, &[svc, image.local_id.as_str()]);
            let attrs = Attrs::default()
                .text("Name", &image.name)
                .opt_text("MarketplaceURL", image.marketplace_url.as_ref())
                .opt_text("OSPlatform", image.os_platform.as_ref())
                .opt_text("OSName", image.os_name.as_ref())
                .opt_text("OSVersion", image.os_version.as_ref())
                .opt_text("Description", image.description.as_ref())
                .text("AccessInfo", "none");
            let mut other = Vec::new();
            if let Some(cuda) = &image.cuda_version {
                other.push(("cuda_version".to_owned(), cuda.to_string()));
            }
            if let Some(driver) = &image.gpu_driver_version {
                other.push(("gpu_driver_version".to_owned(), driver.to_string()));
            }
            let mut associations = vec![(Class::CloudComputingManager, self.id_of(manager_index))];
            associations.extend(
                image
                    .shares
                    .iter()
                    .map(|s| (Class::CloudComputingShare, share_id(&self.ids, s.as_str()))),
            );
            self.push(
                Class::CloudComputingImage,
                id,
                Some(manager_index),
                attrs,
                other,
                associations,
            );
        }
    }
}

/// For each environment (by local id), the indexes of the shares that list it, in share order.
///
/// Asking every share about every environment instead is shares x environments x listed
/// environments string comparisons: billions at a large site.
fn shares_by_environment(service: &ComputingService) -> HashMap<&str, Vec<usize>> {
    let mut shares_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (index, share) in service.shares.iter().enumerate() {
        for environment in &share.environments {
            let shares = shares_of.entry(environment.as_str()).or_default();
            // A share that lists an environment twice is still one association.
            if shares.last() != Some(&index) {
                shares.push(index);
            }
        }
    }
    shares_of
}

/// A service's OtherInfo and its physical GPUs per model (`TotalPhysicalAccelerators:<model>`,
/// its manager's), sorted.
fn with_totals(
    other_info: &BTreeMap<String, String>,
    accelerators: &[AcceleratorCapacity],
) -> Vec<(String, String)> {
    let mut other = sorted(other_info);
    other.extend(total_pairs(accelerators));
    other.sort();
    other
}

/// `items` without repeats, in the order they first appear.
fn unique(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}
