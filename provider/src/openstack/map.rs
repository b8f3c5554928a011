//! Pure assembly of a cloud's GLUE2 service from what the client listed once as admin: flavors,
//! servers and resource providers are partitioned per project here, so the cost of a run grows with
//! the size of each listing, never with projects x flavors.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use accelfed_schemas::glue::{
    AcceleratorCapacity, CloudManager, CloudService, CloudShare, Endpoint, Image, InstanceType,
    OsFamily, VirtualAccelerator, VoAccess,
};
use accelfed_schemas::gpu::{Capacity, GpuCount, MemoryMb};
use accelfed_schemas::names::{LocalId, Text, VoName};

use super::api::{Flavor, GlanceImage, Project};
use super::capacity::{KindCapacity, gpu_capacity, kind_id};
use super::config::OpenstackConfig;
use super::conventions::FlavorGpu;
use super::detect::Detector;
use super::holdings::{Holdings, holdings};
use super::inventory::CloudState;
use super::layout::layout;
use super::usage::VmUsage;
use super::vgpu::{Said, resolve};
use super::vo::project_vo;

/// A cloud's service, its VMs' GPU usage, and what was odd on the way.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub service: CloudService,
    pub usage: Vec<VmUsage>,
    pub warnings: Vec<String>,
    /// What was assumed (a vGPU type read from a trait's name), for the log at info level.
    pub notes: Vec<String>,
}

fn text(value: &str) -> Text {
    Text::new(value.trim()).unwrap_or_else(|_| Text::literal("unnamed"))
}

fn local_id(value: &str) -> LocalId {
    LocalId::new(value.trim()).unwrap_or_else(|_| LocalId::literal("unnamed"))
}

/// Builds the service and the usage observations.
pub fn map(config: &OpenstackConfig, state: &CloudState) -> Mapped {
    let detector = Detector::new(config);
    let devices = detector.devices();
    let mut said = Said::default();

    let vos = project_vos(config, state, &mut said.warnings);

    let layout = layout(&state.providers, devices, &mut said);
    let kinds = gpu_capacity(&state.providers, devices, &layout, &mut said);

    let mut flavor_gpus: BTreeMap<&str, FlavorGpu> = BTreeMap::new();
    for flavor in state.flavors.iter().filter(|f| !f.disabled) {
        let detection = detector.detect(
            &flavor.name,
            flavor.extra_specs.as_ref().unwrap_or(&BTreeMap::new()),
        );
        said.warnings.extend(detection.warnings);
        if let Some(mut gpu) = detection.gpu {
            resolve(&mut gpu, &layout.types, devices, &flavor.name, &mut said);
            flavor_gpus.insert(flavor.id.as_str(), gpu);
        }
    }

    let Holdings {
        usage,
        running,
        used,
    } = holdings(state, &detector, &vos, layout.types, &mut said);

    let shares = shares(state, &vos, &kinds, &flavor_gpus, &used, &running);
    let instance_types = instance_types(state, &vos, &flavor_gpus, config.os_family);
    for (id, gpu) in &flavor_gpus {
        if !kinds.contains_key(&kind_id(&gpu.spec)) && !state.providers.is_empty() {
            said.warnings.insert(format!(
                "flavor {id}: its GPU {} ({}) has no Placement inventory; capacity of that kind is not published",
                gpu.spec.model,
                gpu.spec.virtualization.as_str()
            ));
        }
    }
    let images = if config.images {
        images(state, &vos)
    } else {
        Vec::new()
    };

    let mut other_info = BTreeMap::new();
    if !state.project_errors.is_empty() {
        let failed: Vec<String> = state
            .project_errors
            .iter()
            .map(|(id, why)| format!("{id}: {why}"))
            .collect();
        other_info.insert("degraded_shares".to_owned(), failed.join("; "));
    }
    let all_vos: BTreeSet<&VoName> = vos.values().map(|vo| vo.as_ref()).collect();
    let service = CloudService {
        local_id: config.id.get_ref().clone(),
        name: config.name.clone(),
        quality_level: config.quality_level.clone(),
        capabilities: vec![
            text("executionmanagement.dynamicvmdeploy"),
            text("security.accounting"),
        ],
        endpoints: vec![endpoint(state, &all_vos)],
        manager: manager(state, &kinds),
        shares,
        instance_types,
        images,
        other_info,
    };
    Mapped {
        service,
        usage,
        warnings: said.warnings.into_iter().collect(),
        notes: said.notes.into_iter().collect(),
    }
}

/// What the meter makes of its listing: the VMs' GPU usage and the cloud's installed GPUs.
#[derive(Debug, Clone)]
pub struct MeterMapped {
    pub usage: Vec<VmUsage>,
    /// The manager's accelerators, as [`map`] publishes them (used and free left at none: the
    /// meter does not read Placement's usages).
    pub installed: Vec<AcceleratorCapacity>,
    pub warnings: Vec<String>,
    /// What was assumed (as [`Mapped::notes`]).
    pub notes: Vec<String>,
}

/// Only the VMs' GPU usage, as the meter needs it: the one pass over the servers of [`map`],
/// without the service (shares, instance types, images, capacity) it has no use for.
pub fn map_usage(config: &OpenstackConfig, state: &CloudState) -> (Vec<VmUsage>, Vec<String>) {
    let mapped = map_metering(config, state);
    (mapped.usage, mapped.warnings)
}

/// The meter's pass: [`map_usage`], and the installed GPUs counted from Placement by the code
/// [`map`] publishes them with (layout, capacity per kind, the manager).
pub fn map_metering(config: &OpenstackConfig, state: &CloudState) -> MeterMapped {
    let detector = Detector::new(config);
    let devices = detector.devices();
    let mut said = Said::default();
    let vos = project_vos(config, state, &mut said.warnings);
    let layout = layout(&state.providers, devices, &mut said);
    let kinds = gpu_capacity(&state.providers, devices, &layout, &mut said);
    let installed = manager(state, &kinds).accelerators;
    let pass = holdings(state, &detector, &vos, layout.types, &mut said);
    MeterMapped {
        usage: pass.usage,
        installed,
        warnings: said.warnings.into_iter().collect(),
        notes: said.notes.into_iter().collect(),
    }
}

/// The VO of each enabled project that maps to one, by project id.
fn project_vos<'a>(
    config: &OpenstackConfig,
    state: &'a CloudState,
    warnings: &mut BTreeSet<String>,
) -> BTreeMap<&'a str, Arc<VoName>> {
    let mut vos = BTreeMap::new();
    for project in state.projects.iter().filter(|p| p.enabled) {
        match project_vo(project, &config.vo_property, &config.vo_map) {
            Ok(Some(vo)) => {
                vos.insert(project.id.as_str(), Arc::new(vo));
            }
            Ok(None) => {}
            Err(why) => {
                warnings.insert(why);
            }
        }
    }
    vos
}

fn endpoint(state: &CloudState, vos: &BTreeSet<&VoName>) -> Endpoint {
    let (health, info) = if state.degraded.is_empty() {
        ("ok", None)
    } else {
        ("warning", Some(text(&state.degraded.join("; "))))
    };
    Endpoint {
        local_id: local_id("nova"),
        url: text(&state.compute_url),
        interface_name: text("org.openstack.nova"),
        interface_version: Some(text("2.1")),
        implementation_name: Some(text("OpenStack Nova")),
        implementation_version: state.compute_microversion.as_deref().map(text),
        technology: text("webservice"),
        quality_level: text("production"),
        serving_state: text("production"),
        health_state: text(health),
        health_state_info: info,
        capabilities: vec![text("executionmanagement.dynamicvmdeploy")],
        access: vos.iter().map(|vo| VoAccess::new((*vo).clone())).collect(),
    }
}

fn manager(state: &CloudState, kinds: &BTreeMap<LocalId, KindCapacity>) -> CloudManager {
    let roots = state
        .providers
        .iter()
        .filter(|(rp, _)| rp.parent_provider_uuid.is_none());
    let (mut cpus, mut ram_mib) = (0u64, 0u64);
    for (_, provider) in roots {
        cpus += provider.inventories.get("VCPU").map_or(0, |i| i.total);
        ram_mib += provider.inventories.get("MEMORY_MB").map_or(0, |i| i.total);
    }
    CloudManager {
        product_name: text("OpenStack"),
        product_version: None,
        hypervisor_name: None,
        total_cpus: u32::try_from(cpus).ok().filter(|c| *c > 0),
        total_ram: (ram_mib > 0).then(|| MemoryMb::from_mib(ram_mib)),
        accelerators: kinds
            .iter()
            .map(|(id, kind)| AcceleratorCapacity {
                local_id: id.clone(),
                gpu: kind.spec.clone(),
                capacity: kind.capacity,
                max_per_job: None,
            })
            .collect(),
    }
}

/// Whether project `project` may use flavor `flavor`.
fn can_use(state: &CloudState, flavor: &Flavor, project: &str) -> bool {
    flavor.is_public
        || state
            .flavor_access
            .get(&flavor.id)
            .is_some_and(|p| p.iter().any(|p| p == project))
}

fn shares(
    state: &CloudState,
    vos: &BTreeMap<&str, Arc<VoName>>,
    kinds: &BTreeMap<LocalId, KindCapacity>,
    flavor_gpus: &BTreeMap<&str, FlavorGpu>,
    used: &BTreeMap<&str, BTreeMap<LocalId, GpuCount>>,
    running: &BTreeMap<&str, u32>,
) -> Vec<CloudShare> {
    let projects: BTreeMap<&str, &Project> =
        state.projects.iter().map(|p| (p.id.as_str(), p)).collect();
    vos.iter()
        .map(|(&project_id, vo)| {
            let reachable: BTreeSet<LocalId> = state
                .flavors
                .iter()
                .filter(|f| !f.disabled && can_use(state, f, project_id))
                .filter_map(|f| flavor_gpus.get(f.id.as_str()))
                .map(|gpu| kind_id(&gpu.spec))
                .filter(|id| kinds.contains_key(id))
                .collect();
            let failed = state.project_errors.contains_key(project_id);
            let quota = state.quotas.get(project_id);
            CloudShare {
                local_id: local_id(project_id),
                name: projects.get(project_id).map(|p| text(&p.name)),
                access: VoAccess::new(VoName::clone(vo)),
                project_id: Some(text(project_id)),
                max_vm: quota
                    .and_then(|q| q.instances)
                    .and_then(|n| u32::try_from(n).ok()),
                running_vm: (!failed).then(|| running.get(project_id).copied().unwrap_or(0)),
                max_gpus: None,
                accelerators: reachable
                    .into_iter()
                    .map(|id| {
                        let kind = &kinds[&id];
                        let mine = used
                            .get(project_id)
                            .and_then(|held| held.get(&id))
                            .copied()
                            .unwrap_or_default();
                        AcceleratorCapacity {
                            local_id: id,
                            gpu: kind.spec.clone(),
                            capacity: Capacity {
                                total: kind.capacity.total,
                                used: mine,
                                free: kind.capacity.free,
                            },
                            max_per_job: None,
                        }
                    })
                    .collect(),
            }
        })
        .collect()
}

fn instance_types(
    state: &CloudState,
    vos: &BTreeMap<&str, Arc<VoName>>,
    flavor_gpus: &BTreeMap<&str, FlavorGpu>,
    os_family: Option<OsFamily>,
) -> Vec<InstanceType> {
    state
        .flavors
        .iter()
        .filter(|f| !f.disabled)
        .filter_map(|flavor| {
            let shares: Vec<LocalId> = vos
                .keys()
                .filter(|p| can_use(state, flavor, p))
                .map(|p| local_id(p))
                .collect();
            if shares.is_empty() {
                return None;
            }
            let gpu = flavor_gpus.get(flavor.id.as_str());
            let mut other_info = BTreeMap::new();
            if let Some(version) = gpu.and_then(|g| g.version.clone()) {
                other_info.insert("accelerator_version".to_owned(), version);
            }
            Some(InstanceType {
                local_id: local_id(&flavor.id),
                name: text(&flavor.name),
                platform: text("amd64"),
                cpu: flavor.vcpus,
                ram: MemoryMb::from_mib(flavor.ram),
                disk_gb: flavor.disk,
                os_family,
                accelerator: gpu.map(|g| VirtualAccelerator {
                    gpu: g.spec.clone(),
                    count: g.count,
                }),
                shares,
                other_info,
            })
        })
        .collect()
}

fn property(image: &GlanceImage, keys: &[&str]) -> Option<Text> {
    keys.iter()
        .find_map(|key| image.properties.get(*key).and_then(|v| v.as_str()))
        .and_then(|v| Text::new(v.trim()).ok())
}

fn images(state: &CloudState, vos: &BTreeMap<&str, Arc<VoName>>) -> Vec<Image> {
    state
        .images
        .iter()
        .filter(|image| image.status.as_deref().is_none_or(|s| s == "active"))
        .filter_map(|image| {
            let public = matches!(image.visibility.as_deref(), Some("public" | "community"));
            let shares: Vec<LocalId> = vos
                .keys()
                .filter(|p| public || image.owner.as_deref() == Some(**p))
                .map(|p| local_id(p))
                .collect();
            (!shares.is_empty()).then(|| Image {
                local_id: local_id(&image.id),
                name: text(image.name.as_deref().unwrap_or(&image.id)),
                os_platform: property(image, &["architecture"]),
                os_name: image.os_distro.as_deref().and_then(|v| Text::new(v).ok()),
                os_version: image.os_version.as_deref().and_then(|v| Text::new(v).ok()),
                marketplace_url: property(image, &["ad:appid", "marketplace_url"]),
                description: property(image, &["description"]),
                shares,
                gpu_driver_version: property(
                    image,
                    &["gpu_driver_version", "nvidia_driver_version", "gpu_driver"],
                ),
                cuda_version: property(image, &["cuda_version", "cuda"]),
            })
        })
        .collect()
}
