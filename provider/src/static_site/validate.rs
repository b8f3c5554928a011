//! Checks a static description hangs together before anything is built from it: ids unique,
//! references resolve, counts add up. Each problem names the field path and points at the value.

use std::collections::HashSet;

use toml::Spanned;

use accelfed_schemas::gpu::{Capacity, GpuCount, Sharing, Virtualization};
use accelfed_schemas::names::LocalId;

use super::config::{BatchConfig, CloudConfig, GpuConfig, ProjectConfig, StaticConfig};
use crate::config::Problem;

type Checked = Result<(), Problem>;

impl StaticConfig {
    /// Checks ids, references and counts.
    pub fn validate(&self) -> Checked {
        let mut services = Unique::default();
        for (index, batch) in self.batch.iter().enumerate() {
            let field = format!("batch[{index}]");
            services.insert(&batch.id, &format!("{field}.id"), "service")?;
            validate_batch(batch, &field)?;
        }
        for (index, cloud) in self.cloud.iter().enumerate() {
            let field = format!("cloud[{index}]");
            services.insert(&cloud.id, &format!("{field}.id"), "service")?;
            validate_cloud(cloud, &field)?;
        }
        Ok(())
    }
}

/// Remembers ids to find repeats.
#[derive(Default)]
struct Unique(HashSet<String>);

impl Unique {
    fn insert(&mut self, id: &Spanned<LocalId>, field: &str, what: &str) -> Checked {
        if self.0.insert(id.get_ref().to_string()) {
            Ok(())
        } else {
            Err(Problem::new(
                id,
                field,
                format!("{what} id {:?} is used twice", id.get_ref().as_str()),
            ))
        }
    }

    fn contains(&self, id: &LocalId) -> bool {
        self.0.contains(id.as_str())
    }
}

fn validate_batch(batch: &BatchConfig, field: &str) -> Checked {
    let mut node_types = Unique::default();
    for (index, node) in batch.node_types.iter().enumerate() {
        let field = format!("{field}.node_type[{index}]");
        node_types.insert(&node.id, &format!("{field}.id"), "node type")?;
        if node.busy + node.unavailable > node.count {
            return Err(Problem::new(
                &node.id,
                format!("{field}.busy"),
                format!(
                    "{} busy plus {} unavailable nodes exceed the {} nodes of node type {:?}",
                    node.busy,
                    node.unavailable,
                    node.count,
                    node.id.get_ref().as_str()
                ),
            ));
        }
        let mut gpus = Unique::default();
        for (gpu_index, gpu) in node.gpus.iter().enumerate() {
            let field = format!("{field}.gpu[{gpu_index}]");
            gpus.insert(&gpu.id, &format!("{field}.id"), "GPU")?;
            validate_gpu_spec(gpu, &field)?;
            let per_node = gpu.count.as_ref().ok_or_else(|| {
                Problem::new(
                    &gpu.id,
                    format!("{field}.count"),
                    "node GPUs need `count`, the devices per node",
                )
            })?;
            for (name, value) in [("total", &gpu.total), ("unavailable", &gpu.unavailable)] {
                if let Some(value) = value {
                    return Err(Problem::new(
                        value,
                        format!("{field}.{name}"),
                        format!(
                            "`{name}` belongs to cloud GPU pools; node GPUs use `count` and the node type's `unavailable`"
                        ),
                    ));
                }
            }
            let slices = gpu
                .slices
                .as_ref()
                .map_or(*per_node.get_ref(), |s| *s.get_ref());
            if gpu.slices.is_some() {
                check_cards_fit_slices(gpu, per_node, slices, &field)?;
            }
            let total = slices * node.count;
            let unavailable = slices * node.unavailable;
            let used = gpu.used.as_ref().map_or(GpuCount::ZERO, |u| *u.get_ref());
            if let Err(err) = Capacity::from_usage(total, used, unavailable) {
                let at = gpu
                    .used
                    .as_ref()
                    .map_or(Problem::new(&gpu.id, "", ""), |u| Problem::new(u, "", ""));
                return Err(Problem {
                    field: format!("{field}.used"),
                    message: err.to_string(),
                    ..at
                });
            }
        }
    }
    let mut shares = Unique::default();
    for (index, share) in batch.shares.iter().enumerate() {
        let field = format!("{field}.share[{index}]");
        shares.insert(&share.id, &format!("{field}.id"), "share")?;
        if share.vos.is_empty() {
            return Err(Problem::new(
                &share.id,
                format!("{field}.vos"),
                "a share needs at least one VO",
            ));
        }
        for (node_index, node) in share.node_types.iter().enumerate() {
            if !node_types.contains(node.get_ref()) {
                return Err(Problem::new(
                    node,
                    format!("{field}.node_types[{node_index}]"),
                    format!(
                        "node type {:?} is not defined in this service",
                        node.get_ref().as_str()
                    ),
                ));
            }
        }
    }
    validate_endpoints(&batch.endpoints, &batch.id, field)
}

/// A node's physical GPUs are the cards its slots need (the document checker's rule for an
/// execution environment): `slices` of one sharing unit each fill `slices x share` cards, so
/// `count` is at least that (no more slots than cards can hold) and at most that rounded up (a
/// partly carved card); found by the site_config fuzz target (8 cards, 28 slices of 1/7).
fn check_cards_fit_slices(
    gpu: &GpuConfig,
    per_node: &Spanned<GpuCount>,
    slices: GpuCount,
    field: &str,
) -> Checked {
    let Some(sharing) = &gpu.sharing else {
        return Ok(());
    };
    let needed = slices.get() * sharing.physical_share();
    let cards = per_node.get_ref().get();
    // Thousandths, as counts are rendered: 56 slices of 1/7 are 8 cards, not 8.000000001.
    let needed_rounded = (needed * 1000.0).round() / 1000.0;
    if cards + 1e-9 < needed_rounded || cards > needed_rounded.ceil() + 1e-9 {
        return Err(Problem::new(
            per_node,
            format!("{field}.count"),
            format!(
                "{cards} physical GPUs per node, but {slices} slots of {} GPU each fill \
                 {needed_rounded}: count is the cards the slots are carved from (at least that, \
                 at most that rounded up)",
                (sharing.physical_share() * 1000.0).round() / 1000.0
            ),
        ));
    }
    Ok(())
}

fn validate_endpoints(
    endpoints: &[super::config::EndpointConfig],
    service: &Spanned<LocalId>,
    field: &str,
) -> Checked {
    let mut seen = HashSet::new();
    for (index, endpoint) in endpoints.iter().enumerate() {
        if !seen.insert(endpoint.id.as_str()) {
            return Err(Problem::new(
                service,
                format!("{field}.endpoint[{index}].id"),
                format!("endpoint id {:?} is used twice", endpoint.id.as_str()),
            ));
        }
    }
    Ok(())
}

fn validate_gpu_spec(gpu: &GpuConfig, field: &str) -> Checked {
    if gpu.mig_profile.is_some() && gpu.virtualization != Virtualization::Mig {
        return Err(Problem::new(
            &gpu.id,
            format!("{field}.mig_profile"),
            "a MIG profile needs `virtualization = \"mig\"`",
        ));
    }
    if let Some(sharing) = &gpu.sharing {
        // A zero would make a slot infinitely many GPUs, or more than one.
        let bad = match sharing {
            Sharing::Mig { slices, of, .. } => *slices == 0 || *of == 0 || slices > of,
            Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => *replicas == 0,
            Sharing::Vgpu { per_gpu, .. } => *per_gpu == 0,
            Sharing::Whole | Sharing::Fraction => false,
        };
        if bad {
            return Err(Problem::new(
                &gpu.id,
                format!("{field}.sharing"),
                "replicas, per_gpu, slices and of must be at least 1, and slices at most of",
            ));
        }
    }
    Ok(())
}

/// A project's GPUs in use are among its pools' used GPUs and within its quota: its share
/// publishes them beside a total capped by the quota and a free count from the pool, and used
/// plus free above that total is a document the registry refuses.
fn validate_project_usage(cloud: &CloudConfig, project: &ProjectConfig, field: &str) -> Checked {
    let problem =
        |message: String| Problem::new(&project.id, format!("{field}.used_gpus"), message);
    for (pool_id, used) in &project.used_gpus {
        let pool_used = cloud
            .gpu_pools
            .iter()
            .find(|pool| pool.id.get_ref().as_str() == pool_id)
            .and_then(|pool| pool.used.as_ref())
            .map_or(GpuCount::ZERO, |used| *used.get_ref());
        if *used > pool_used {
            return Err(problem(format!(
                "{} GPUs of pool {pool_id:?} in use exceed the {} the pool has in use",
                used.get(),
                pool_used.get()
            )));
        }
    }
    let in_use: GpuCount = project.used_gpus.values().copied().sum();
    match project.max_gpus {
        Some(max) if in_use > max => Err(problem(format!(
            "{} GPUs in use exceed the project's max_gpus, {}",
            in_use.get(),
            max.get()
        ))),
        _ => Ok(()),
    }
}

fn validate_cloud(cloud: &CloudConfig, field: &str) -> Checked {
    let mut pools = Unique::default();
    for (index, pool) in cloud.gpu_pools.iter().enumerate() {
        let field = format!("{field}.gpu_pool[{index}]");
        pools.insert(&pool.id, &format!("{field}.id"), "GPU pool")?;
        validate_gpu_spec(pool, &field)?;
        let total = pool.total.as_ref().ok_or_else(|| {
            Problem::new(
                &pool.id,
                format!("{field}.total"),
                "GPU pools need `total`, the devices that exist",
            )
        })?;
        for (name, value) in [("count", &pool.count), ("slices", &pool.slices)] {
            if let Some(value) = value {
                return Err(Problem::new(
                    value,
                    format!("{field}.{name}"),
                    format!(
                        "`{name}` belongs to node GPUs; GPU pools use `total`, `used` and `unavailable`"
                    ),
                ));
            }
        }
        let used = pool.used.as_ref().map_or(GpuCount::ZERO, |u| *u.get_ref());
        let unavailable = pool
            .unavailable
            .as_ref()
            .map_or(GpuCount::ZERO, |u| *u.get_ref());
        if let Err(err) = Capacity::from_usage(*total.get_ref(), used, unavailable) {
            return Err(Problem::new(
                total,
                format!("{field}.used"),
                err.to_string(),
            ));
        }
    }
    let mut projects = Unique::default();
    for (index, project) in cloud.projects.iter().enumerate() {
        let field = format!("{field}.project[{index}]");
        projects.insert(&project.id, &format!("{field}.id"), "project")?;
        for pool in project.used_gpus.keys() {
            if !pools.0.contains(pool) {
                return Err(Problem::new(
                    &project.id,
                    format!("{field}.used_gpus"),
                    format!("GPU pool {pool:?} is not defined in this cloud"),
                ));
            }
        }
        validate_project_usage(cloud, project, &field)?;
    }
    let mut flavors = Unique::default();
    for (index, flavor) in cloud.flavors.iter().enumerate() {
        let field = format!("{field}.flavor[{index}]");
        flavors.insert(&flavor.id, &format!("{field}.id"), "flavor")?;
        match (&flavor.gpu_pool, &flavor.gpus) {
            (Some(pool), Some(_)) if !pools.contains(pool.get_ref()) => {
                return Err(Problem::new(
                    pool,
                    format!("{field}.gpu_pool"),
                    format!(
                        "GPU pool {:?} is not defined in this cloud",
                        pool.get_ref().as_str()
                    ),
                ));
            }
            (Some(pool), None) => {
                return Err(Problem::new(
                    pool,
                    format!("{field}.gpus"),
                    "a flavor with a `gpu_pool` needs `gpus`",
                ));
            }
            (None, Some(gpus)) => {
                return Err(Problem::new(
                    gpus,
                    format!("{field}.gpu_pool"),
                    "a flavor with `gpus` needs a `gpu_pool`",
                ));
            }
            _ => {}
        }
        check_refs(
            flavor.projects.as_deref(),
            &projects,
            &format!("{field}.projects"),
        )?;
    }
    let mut images = Unique::default();
    for (index, image) in cloud.images.iter().enumerate() {
        let field = format!("{field}.image[{index}]");
        images.insert(&image.id, &format!("{field}.id"), "image")?;
        check_refs(
            image.projects.as_deref(),
            &projects,
            &format!("{field}.projects"),
        )?;
    }
    validate_endpoints(&cloud.endpoints, &cloud.id, field)
}

fn check_refs(refs: Option<&[Spanned<LocalId>]>, projects: &Unique, field: &str) -> Checked {
    for (index, project) in refs.unwrap_or_default().iter().enumerate() {
        if !projects.contains(project.get_ref()) {
            return Err(Problem::new(
                project,
                format!("{field}[{index}]"),
                format!(
                    "project {:?} is not defined in this cloud",
                    project.get_ref().as_str()
                ),
            ));
        }
    }
    Ok(())
}
