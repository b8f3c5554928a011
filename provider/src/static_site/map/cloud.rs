//! A cloud of the static description as a GLUE2 cloud service: its GPU pools, flavors and shares.

use super::*;

fn pool_capacity(pool: &GpuConfig) -> Capacity {
    Capacity::from_usage(
        count(&pool.total),
        count(&pool.used),
        count(&pool.unavailable),
    )
    .unwrap_or_else(|_| unreachable!("validated: used GPUs fit"))
}

/// Every project, or the listed ones.
fn share_ids(cloud: &CloudConfig, listed: &Option<Vec<toml::Spanned<LocalId>>>) -> Vec<LocalId> {
    match listed {
        Some(ids) => ids.iter().map(|id| id.get_ref().clone()).collect(),
        None => cloud
            .projects
            .iter()
            .map(|p| p.id.get_ref().clone())
            .collect(),
    }
}

pub(super) fn cloud_service(cloud: &CloudConfig) -> CloudService {
    let pools: BTreeMap<&LocalId, &GpuConfig> = cloud
        .gpu_pools
        .iter()
        .map(|p| (p.id.get_ref(), p))
        .collect();
    let shares: Vec<CloudShare> = cloud
        .projects
        .iter()
        .map(|project| {
            let used_by_project: GpuCount = project.used_gpus.values().copied().sum();
            let quota_left = project.max_gpus.map(|max| max - used_by_project);
            // The pools this project reaches through the flavors it may use.
            let mut reachable: Vec<&GpuConfig> = cloud
                .flavors
                .iter()
                .filter(|f| share_ids(cloud, &f.projects).contains(project.id.get_ref()))
                .filter_map(|f| {
                    f.gpu_pool
                        .as_ref()
                        .and_then(|id| pools.get(id.get_ref()).copied())
                })
                .collect();
            reachable.sort_by(|a, b| a.id.get_ref().cmp(b.id.get_ref()));
            reachable.dedup_by(|a, b| a.id.get_ref() == b.id.get_ref());
            let accelerators = reachable
                .into_iter()
                .map(|pool| {
                    let whole = pool_capacity(pool);
                    let used = project
                        .used_gpus
                        .get(pool.id.get_ref().as_str())
                        .copied()
                        .unwrap_or_default();
                    let cap = |value: GpuCount| match project.max_gpus {
                        Some(max) if max < value => max,
                        _ => value,
                    };
                    let free = match quota_left {
                        Some(left) if left < whole.free => left,
                        _ => whole.free,
                    };
                    AcceleratorCapacity {
                        local_id: pool.id.get_ref().clone(),
                        gpu: spec(pool),
                        capacity: Capacity {
                            total: cap(whole.total),
                            used,
                            free,
                        },
                        max_per_job: None,
                    }
                })
                .collect();
            CloudShare {
                local_id: project.id.get_ref().clone(),
                name: Text::new(project.id.get_ref().as_str()).ok(),
                access: VoAccess {
                    vo: project.vo.clone(),
                    fqan: project.fqan.clone(),
                },
                project_id: project.project_id.clone(),
                max_vm: project.max_vm,
                running_vm: project.running_vm,
                max_gpus: project.max_gpus,
                accelerators,
            }
        })
        .collect();
    let all_vos = sorted_unique(shares.iter().map(|s| s.access.clone()).collect());
    let instance_types = cloud
        .flavors
        .iter()
        .map(|flavor| InstanceType {
            local_id: flavor.id.get_ref().clone(),
            name: flavor.name.clone(),
            platform: flavor.platform.clone(),
            cpu: flavor.cpus,
            ram: flavor.ram,
            disk_gb: flavor.disk,
            os_family: flavor.os_family,
            accelerator: match (&flavor.gpu_pool, &flavor.gpus) {
                (Some(pool), Some(gpus)) => {
                    pools.get(pool.get_ref()).map(|pool| VirtualAccelerator {
                        gpu: spec(pool),
                        count: *gpus.get_ref(),
                    })
                }
                _ => None,
            },
            shares: share_ids(cloud, &flavor.projects),
            other_info: BTreeMap::new(),
        })
        .collect();
    let images = cloud
        .images
        .iter()
        .map(|image| Image {
            local_id: image.id.get_ref().clone(),
            name: image.name.clone(),
            os_platform: Some(image.platform.clone()),
            os_name: image.os_name.clone(),
            os_version: image.os_version.clone(),
            marketplace_url: image.marketplace_url.clone(),
            description: image.description.clone(),
            shares: share_ids(cloud, &image.projects),
            gpu_driver_version: image.gpu_driver_version.clone(),
            cuda_version: image.cuda_version.clone(),
        })
        .collect();
    CloudService {
        local_id: cloud.id.get_ref().clone(),
        name: cloud.name.clone(),
        quality_level: cloud.quality_level.clone(),
        capabilities: vec![Text::literal("executionmanagement.dynamicvmdeploy")],
        endpoints: endpoints(&cloud.endpoints, &all_vos),
        manager: CloudManager {
            product_name: cloud.manager.clone(),
            product_version: cloud.manager_version.clone(),
            hypervisor_name: cloud.hypervisor.clone(),
            total_cpus: cloud.total_cpus,
            total_ram: cloud.total_ram,
            accelerators: cloud
                .gpu_pools
                .iter()
                .map(|pool| AcceleratorCapacity {
                    local_id: pool.id.get_ref().clone(),
                    gpu: spec(pool),
                    capacity: pool_capacity(pool),
                    max_per_job: None,
                })
                .collect(),
        },
        shares,
        instance_types,
        images,
        other_info: BTreeMap::new(),
    }
}
