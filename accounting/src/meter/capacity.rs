//! Capacity bounds usage: per site, physical GPU model and month, the GPU-hours metered never exceed
//! the GPUs installed x the month's hours. Usage above it is not physically possible; it means
//! overlapping periods, a resource reported twice, or a share counted as a whole GPU.
//!
//! The installed figure comes from the site's own inventory: the managers' accelerators each
//! backend reports beside its usage ([`Installed::from_accelerators`]), the ones the snapshot
//! `accelfed provide` publishes holds ([`Installed::from_snapshot`]). It travels with each record
//! (`installed`), so the central repository can check the bound too (`accelfed report --check`).

use std::collections::BTreeMap;

use accelfed_schemas::glue::{AcceleratorCapacity, Service, SiteSnapshot};
use accelfed_schemas::gpu::{GpuModel, Sharing, Virtualization};
use accelfed_schemas::usage::{Month, UsageRecord};

/// Physical GPUs installed at one site, per model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Installed {
    per_model: BTreeMap<String, f64>,
    /// Models some of whose GPUs the inventory counts in slots, not physical GPUs.
    unknown: std::collections::BTreeSet<String>,
}

impl Installed {
    /// Adds `gpus` physical GPUs of `model`.
    pub fn add(&mut self, model: &GpuModel, gpus: f64) {
        *self.per_model.entry(model.as_str().to_owned()).or_default() += gpus;
    }

    /// The physical GPUs of `model`, or `None` where the inventory does not say.
    pub fn get(&self, model: &GpuModel) -> Option<f64> {
        if self.unknown.contains(model.as_str()) {
            return None;
        }
        self.per_model.get(model.as_str()).copied()
    }

    /// Every model the inventory names, with its physical GPUs (`None`: no bound, as [`Self::get`]).
    pub fn models(&self) -> impl Iterator<Item = (&str, Option<f64>)> {
        let mut names: std::collections::BTreeSet<&str> =
            self.per_model.keys().map(String::as_str).collect();
        names.extend(self.unknown.iter().map(String::as_str));
        names.into_iter().map(|name| {
            let gpus = match self.unknown.contains(name) {
                true => None,
                false => self.per_model.get(name).copied(),
            };
            (name, gpus)
        })
    }

    /// Leaves `model` unbounded: its installed GPUs are unknown this run (a backend that metered
    /// it could not list what it has installed), so no figure is better than too small a one.
    pub fn unbounded(&mut self, model: &GpuModel) {
        self.unknown.insert(model.as_str().to_owned());
    }

    /// The site's GPUs per model from its snapshot: the physical totals of every manager
    /// accelerator (batch systems, Kubernetes clusters and clouds), as [`Self::from_accelerators`]
    /// counts them.
    pub fn from_snapshot(snapshot: &SiteSnapshot) -> Self {
        Self::from_accelerators(snapshot.services.iter().flat_map(|service| {
            let accelerators: &[AcceleratorCapacity] = match service {
                Service::Computing(service) => &service.manager.accelerators,
                Service::Cloud(service) => &service.manager.accelerators,
            };
            accelerators
        }))
    }

    /// The GPUs per model of managers' accelerators (what the meter's backends report beside
    /// their usage, and what a snapshot publishes). Slots of a known sharing (a MIG profile's
    /// slices, replicas, vGPUs per GPU) count as the physical GPUs they are; a model published as
    /// shared whose share the provider did not state is left out (no bound), since its total
    /// counts what a scheduler hands out, not GPUs.
    pub fn from_accelerators<'a>(
        accelerators: impl IntoIterator<Item = &'a AcceleratorCapacity>,
    ) -> Self {
        let mut installed = Self::default();
        for accelerator in accelerators {
            let model = &accelerator.gpu.model;
            let shared = !matches!(
                accelerator.gpu.virtualization,
                Virtualization::None | Virtualization::Passthrough
            );
            if shared && accelerator.gpu.sharing == Sharing::Whole {
                installed.unknown.insert(model.as_str().to_owned());
            } else {
                installed.add(model, accelerator.physical().total.get());
            }
        }
        installed
    }
}

/// One (site, model, month) whose metered GPU-hours exceed what its installed GPUs can give.
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    pub site: String,
    pub model: String,
    pub month: Month,
    /// Physical GPUs installed (the largest figure the records carry).
    pub installed: f64,
    /// Metered GPU-hours.
    pub used_gpu_hours: f64,
    /// installed x the month's hours.
    pub bound_gpu_hours: f64,
    /// The resources (AssociatedRecord) that metered the model in the month, largest first.
    pub resources: Vec<String>,
}

impl std::fmt::Display for Overrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {:?}: {:.3} GPU-hours metered, at most {:.3} ({} GPUs installed x {} h); resources: {}",
            self.site,
            self.month,
            self.model,
            self.used_gpu_hours,
            self.bound_gpu_hours,
            self.installed,
            self.month.seconds() / 3600,
            self.resources.join(", ")
        )
    }
}

/// Slack for floating-point sums: a thousandth of a GPU-second per hour of the bound.
const SLACK_GPU_HOURS: f64 = 1e-6;

/// Every (site, model, month) of `records` whose GPU-hours exceed its installed GPUs x the month's
/// hours, in (site, model, month) order. Groups whose records carry no installed figure are not
/// checked.
pub fn check_capacity(records: &[UsageRecord]) -> Vec<Overrun> {
    struct Group<'a> {
        installed: Option<f64>,
        gpu_seconds: f64,
        resources: BTreeMap<&'a str, f64>,
    }
    let mut groups: BTreeMap<(&str, &str, Month), Group<'_>> = BTreeMap::new();
    for record in records {
        let group = groups
            .entry((record.site.as_str(), record.model.as_str(), record.month))
            .or_insert(Group {
                installed: None,
                gpu_seconds: 0.0,
                resources: BTreeMap::new(),
            });
        if let Some(installed) = record.installed {
            group.installed = Some(group.installed.unwrap_or(0.0).max(installed.get()));
        }
        group.gpu_seconds += record.gpu_seconds();
        *group
            .resources
            .entry(record.associated_record.as_str())
            .or_default() += record.gpu_seconds();
    }
    let mut overruns = Vec::new();
    for ((site, model, month), group) in groups {
        let Some(installed) = group.installed else {
            continue;
        };
        let used = group.gpu_seconds / 3600.0;
        let bound = installed * month.seconds() as f64 / 3600.0;
        if used > bound * (1.0 + SLACK_GPU_HOURS) {
            let mut resources: Vec<(&str, f64)> = group.resources.into_iter().collect();
            resources.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            overruns.push(Overrun {
                site: site.to_owned(),
                model: model.to_owned(),
                month,
                installed,
                used_gpu_hours: used,
                bound_gpu_hours: bound,
                resources: resources.into_iter().map(|(r, _)| r.to_owned()).collect(),
            });
        }
    }
    overruns
}

#[cfg(test)]
mod tests {
    use accelfed_schemas::glue::sample;

    use super::*;

    #[test]
    fn installed_gpus_come_from_the_managers_and_shares_of_unstated_size_stay_unbounded() {
        let mut snapshot = sample::snapshot("SITE-A");
        let a100 = |s: &SiteSnapshot| match &s.services[0] {
            Service::Computing(service) => service.manager.accelerators[0].gpu.model.clone(),
            Service::Cloud(service) => service.manager.accelerators[0].gpu.model.clone(),
        };
        let model = a100(&snapshot);
        // The sample: 16 A100s in the batch cluster's manager, 8 in the cloud's.
        assert_eq!(Installed::from_snapshot(&snapshot).get(&model), Some(24.0));
        let Service::Computing(batch) = &mut snapshot.services[0] else {
            panic!("the sample's first service is the batch cluster")
        };
        let mut slices = batch.manager.accelerators[0].clone();
        slices.gpu.virtualization = Virtualization::Mig;
        batch.manager.accelerators.push(slices);
        assert_eq!(
            Installed::from_snapshot(&snapshot).get(&model),
            None,
            "a total of MIG slices of unstated share is no count of physical GPUs"
        );
        // Once the provider says what a slot is, the slices count as the GPUs they are.
        let Service::Computing(batch) = &mut snapshot.services[0] else {
            panic!("the sample's first service is the batch cluster")
        };
        let slices = batch.manager.accelerators.last_mut().unwrap();
        slices.gpu.sharing = Sharing::Mig {
            profile: accelfed_schemas::names::Text::new("1g.10gb").unwrap(),
            slices: 1,
            of: 8,
        };
        let slots = slices.capacity.total.get();
        assert_eq!(
            Installed::from_snapshot(&snapshot).get(&model),
            Some(24.0 + slots / 8.0)
        );
    }
}
