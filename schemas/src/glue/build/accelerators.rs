//! The accelerator entities of managers and shares: capacity in slots beside physical GPUs,
//! each model's rounded shares adding up to the whole the manager states ([`super::apportion`]).

use super::*;

impl<'a> Builder<'a> {
    /// The manager entity of either family, under its service, and the manager's accelerators;
    /// returns its index.
    pub(super) fn manager(
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
        let parts: Vec<Part> = accelerators
            .iter()
            .map(|accelerator| {
                let index = self.accelerator_capacity(
                    family.manager_accelerator,
                    Kind::ManagerAccelerator,
                    manager_index,
                    &[svc],
                    family.capacity,
                    accelerator,
                );
                physical_part(index, accelerator)
            })
            .collect();
        // The manager states the sum per model: its accelerators' rounded shares add up to it.
        apportion(&mut self.out, "TotalPhysicalAccelerators", &parts);
        manager_index
    }

    /// A share's accelerators in either family; `path` is the service's and the share's local ids.
    pub(super) fn share_accelerators(
        &mut self,
        family: &Family,
        share: usize,
        path: &[&str],
        accelerators: &'a [AcceleratorCapacity],
    ) {
        let parts: Vec<Part> = accelerators
            .iter()
            .map(|accelerator| {
                let index = self.accelerator_capacity(
                    family.share_accelerator,
                    Kind::ShareAccelerator,
                    share,
                    path,
                    family.capacity,
                    accelerator,
                );
                physical_part(index, accelerator)
            })
            .collect();
        apportion(&mut self.out, "TotalPhysicalAccelerators", &parts);
    }

    fn accelerator_capacity(
        &mut self,
        class: Class,
        kind: Kind,
        parent: usize,
        path: &[&str],
        names: [&'static str; 3],
        accelerator: &'a AcceleratorCapacity,
    ) -> usize {
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
        )
    }
}

/// The accelerator entity at `index` as one part of its model's physical total.
fn physical_part(index: usize, accelerator: &AcceleratorCapacity) -> Part<'_> {
    Part {
        index,
        model: accelerator.gpu.model.as_str(),
        exact: accelerator.physical().total.get(),
    }
}
