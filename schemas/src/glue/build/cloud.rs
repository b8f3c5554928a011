//! A cloud service: its manager, instance types, shares and images.

use super::*;

impl<'a> Builder<'a> {
    pub(super) fn cloud(&mut self, site: usize, service: &'a CloudService) {
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
