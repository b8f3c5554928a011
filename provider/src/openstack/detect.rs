//! Which GPUs a flavor gives, from its extra specs: every configured convention is read, the first
//! in the configured order that yields a GPU wins, and the rest are checked against it. A convention
//! that is present but unreadable, or one that disagrees with the winner, becomes a warning naming
//! the flavor; nothing here fails or guesses a count.

use accelfed_schemas::gpu::Sharing;

use super::config::{Convention, OpenstackConfig};
use super::conventions::{self, Devices, FlavorGpu, Read, Specs};

/// Reads flavor extra specs with the site's conventions and device descriptions.
#[derive(Debug, Clone)]
pub struct Detector {
    order: Vec<Convention>,
    devices: Devices,
}

/// The GPUs of one flavor and what was odd about its extra specs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detection {
    pub gpu: Option<FlavorGpu>,
    /// Each names the flavor.
    pub warnings: Vec<String>,
}

impl Detector {
    pub fn new(config: &OpenstackConfig) -> Self {
        Self {
            order: config.conventions.get_ref().clone(),
            devices: Devices {
                pci_alias: config.pci_alias.clone(),
                vgpu_type: config.vgpu_type.clone(),
                resource_class: config.resource_class.clone(),
                vgpu_profile: config
                    .vgpu_profile
                    .iter()
                    .map(|(key, name)| (key.clone(), name.get_ref().clone()))
                    .collect(),
            },
        }
    }

    /// The device descriptions, for naming Placement's resource classes the same way.
    pub fn devices(&self) -> &Devices {
        &self.devices
    }

    fn read(&self, convention: Convention, specs: &Specs) -> Read {
        match convention {
            Convention::Egi => conventions::egi(specs),
            Convention::Legacy => conventions::legacy(specs),
            Convention::PciAlias => conventions::pci_alias(specs, &self.devices),
            Convention::Vgpu => conventions::vgpu(specs, &self.devices),
            Convention::ResourceClass => conventions::resource_class(specs, &self.devices),
        }
    }

    /// The GPUs of flavor `flavor` (its name, for messages) with extra specs `specs`.
    pub fn detect(&self, flavor: &str, specs: &Specs) -> Detection {
        let mut detection = Detection::default();
        for &convention in &self.order {
            match self.read(convention, specs) {
                None => {}
                Some(Err(why)) => detection.warnings.push(format!(
                    "flavor {flavor:?}: {} convention unreadable, not counted: {why}",
                    convention.as_str()
                )),
                Some(Ok(found)) => match &mut detection.gpu {
                    None => detection.gpu = Some(found),
                    Some(winner) => {
                        if let Some(conflict) = disagreement(winner, &found) {
                            detection.warnings.push(format!(
                                "flavor {flavor:?}: {} and {} conventions disagree ({conflict}); using {}",
                                winner.convention.as_str(),
                                convention.as_str(),
                                winner.convention.as_str()
                            ));
                        } else {
                            // Same GPU said twice (EGI keys for publishing, a resources: key for
                            // scheduling): keep the Placement class to meet capacity by, and
                            // the vGPU type the request names, which says what share of a
                            // physical GPU one unit is.
                            if winner.resource_class.is_none() {
                                winner.resource_class = found.resource_class;
                            }
                            if winner.spec.sharing == Sharing::Whole
                                && matches!(found.spec.sharing, Sharing::Vgpu { .. })
                            {
                                winner.spec.sharing = found.spec.sharing;
                            }
                        }
                    }
                },
            }
        }
        if detection
            .gpu
            .as_ref()
            .is_some_and(|gpu| gpu.count.get() == 0.0)
        {
            detection.gpu = None;
        }
        detection
    }
}

/// Why two readings of one flavor are not the same GPUs, if they are not.
fn disagreement(a: &FlavorGpu, b: &FlavorGpu) -> Option<String> {
    if (a.count.get() - b.count.get()).abs() > 1e-9 {
        return Some(format!("{} vs {} GPUs", a.count, b.count));
    }
    let same_model = match (a.spec.model.family(), b.spec.model.family()) {
        (Some(x), Some(y)) => x == y,
        _ => {
            a.spec.model.matches(b.spec.model.as_str())
                || b.spec.model.matches(a.spec.model.as_str())
        }
    };
    (!same_model).then(|| format!("{} vs {}", a.spec.model, b.spec.model))
}

#[cfg(test)]
mod tests;
