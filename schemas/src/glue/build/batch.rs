//! A computing (batch) service: its manager, shares and execution environments.

use super::*;

impl<'a> Builder<'a> {
    pub(super) fn computing(&mut self, site: usize, service: &'a ComputingService) {
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
    pub(super) fn environment(
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
        let mut parts = Vec::with_capacity(ee.accelerators.len());
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
            let index = self.push(
                Class::AcceleratorEnvironment,
                id,
                Some(ee_index),
                attrs,
                vec![],
                vec![(Class::ExecutionEnvironment, ee_id.clone())],
            );
            parts.push(Part {
                index,
                model: accelerator.gpu.model.as_str(),
                exact: accelerator.physical_per_instance.get(),
            });
        }
        // A node's cards per model, shared among its slices: the slices' rounded shares add up
        // to the cards.
        apportion(&mut self.out, "PhysicalAccelerators", &parts);
    }
}
