//! GLUE 2.0 mode: only classes and attributes of the official GLUE20.schema, so the output loads
//! into a stock BDII.
//!
//! Cloud classes map the way EGI's cloud-info-provider published clouds in GLUE 2.0:
//!
//! | GLUE 2.1 | GLUE 2.0 entry | notes |
//! |---|---|---|
//! | CloudComputingService | GLUE2ComputingService | `GLUE2ServiceType: org.cloud.iaas` |
//! | CloudComputingEndpoint | GLUE2ComputingEndpoint | |
//! | CloudComputingManager | GLUE2ComputingManager | `TotalCPUs` -> `TotalLogicalCPUs`; hypervisor, RAM in OtherInfo |
//! | CloudComputingShare | GLUE2ComputingShare | `ServingState: production`; `MaxVM`/`RunningVM` -> `MaxRunningJobs`/`RunningJobs` (a VM is the cloud's job); its instance types as `GLUE2ShareResourceForeignKey` |
//! | CloudComputingInstanceType | GLUE2ExecutionEnvironment | `CPU` -> `LogicalCPUs`, `RAM` -> `MainMemorySize`, `VirtualMachine: TRUE`, `OSFamily` as the site configured it, else from the OS of its shares' images when they agree (`UNDEFINEDVALUE` otherwise); `Disk` in OtherInfo |
//! | CloudComputingImage | GLUE2ApplicationEnvironment | `Name` -> `AppName`, `MarketplaceURL` -> `Repository`; OS facts in OtherInfo |
//!
//! GPU facts are folded into OtherInfo of the parent entry ([`super::gpu_info`]); anything else
//! without a 2.0 attribute goes to OtherInfo under its GLUE 2.1 name ([`super::mapping`]).

use std::collections::HashMap;

use crate::glue::entity::{Class, Entity};

use super::classes20::{self, execution_environment};
use super::gpu_info;
use super::mapping::{Extra, Mapping, UNKNOWN_TEXT};

/// GPU facts for each parent, and each cloud share's instance types (the model links them from the
/// instance type; GLUE 2.0 only has the share -> resource key).
pub(super) fn extras<'e>(entities: &'e [Entity<'e>]) -> Vec<Extra<'e>> {
    let mut shares: HashMap<&str, usize> = HashMap::new();
    for (index, entity) in entities.iter().enumerate() {
        if entity.class == Class::CloudComputingShare {
            shares.entry(entity.id.as_str()).or_insert(index);
        }
    }
    let mut extras = vec![Extra::default(); entities.len()];
    for entity in entities {
        if gpu_info::is_accelerator(entity.class)
            && let Some(parent) = entity.parent.and_then(|parent| extras.get_mut(parent))
        {
            parent.folded.push(entity);
        }
        if entity.class == Class::CloudComputingInstanceType {
            for (class, target) in &entity.associations {
                if *class != Class::CloudComputingShare {
                    continue;
                }
                if let Some(share) = shares.get(target.as_str()).and_then(|&s| extras.get_mut(s)) {
                    share
                        .associations
                        .push((Class::CloudComputingInstanceType, entity.id.as_str()));
                }
            }
        }
    }
    for extra in &mut extras {
        extra.folded.sort_by(|a, b| gpu_info::by_key_prefix(a, b));
    }
    for (index, family) in instance_type_os_families(entities) {
        if let Some(extra) = extras.get_mut(index) {
            extra
                .values
                .push(("GLUE2ExecutionEnvironmentOSFamily", family));
        }
    }
    extras
}

/// The OS family (GLUE2's OSFamily_t) an image's OS name belongs to; `None` when unknown.
fn os_family(os_name: &str) -> Option<&'static str> {
    const LINUX: [&str; 14] = [
        "linux",
        "ubuntu",
        "debian",
        "centos",
        "rocky",
        "alma",
        "fedora",
        "red hat",
        "rhel",
        "suse",
        "scientific",
        "oracle",
        "arch",
        "alpine",
    ];
    let name = os_name.to_ascii_lowercase();
    if LINUX.iter().any(|word| name.contains(word)) {
        Some("linux")
    } else if name.contains("windows") {
        Some("windows")
    } else if name.contains("mac") {
        Some("macosx")
    } else {
        None
    }
}

/// The OS family of each cloud instance type (by entity index) that the images of its shares
/// agree on: an instance type has no OS of its own, the images a VO boots on it do. The EGI GLUE
/// 2.0 profile asks for `GLUE2ExecutionEnvironmentOSFamily`; where the images disagree, or one has
/// no known OS, the placeholder stays.
fn instance_type_os_families(entities: &[Entity]) -> Vec<(usize, &'static str)> {
    // Per share ID: the families of its images, `None` for an image whose family is unknown.
    let mut of_share: HashMap<&str, Vec<Option<&'static str>>> = HashMap::new();
    for entity in entities {
        if entity.class != Class::CloudComputingImage {
            continue;
        }
        let family = match entity.attribute("OSName") {
            Some(crate::glue::entity::Value::Text(name)) => os_family(name),
            _ => None,
        };
        for (class, share) in &entity.associations {
            if *class == Class::CloudComputingShare {
                of_share.entry(share.as_str()).or_default().push(family);
            }
        }
    }
    let mut out = Vec::new();
    for (index, entity) in entities.iter().enumerate() {
        if entity.class != Class::CloudComputingInstanceType {
            continue;
        }
        let families: Vec<Option<&'static str>> = entity
            .associations
            .iter()
            .filter(|(class, _)| *class == Class::CloudComputingShare)
            .filter_map(|(_, share)| of_share.get(share.as_str()))
            .flatten()
            .copied()
            .collect();
        if let Some(Some(first)) = families.first()
            && families.iter().all(|family| *family == Some(*first))
        {
            out.push((index, *first));
        }
    }
    out
}

/// The GLUE 2.0 mapping of a class; `None` for the accelerator classes (folded into OtherInfo).
pub(super) fn mapping(class: Class) -> Option<Mapping> {
    if let Some(mapping) = classes20::mapping(class) {
        return Some(mapping);
    }
    let mapping = match class {
        Class::CloudComputingService => classes20::service("GLUE2ComputingService"),
        Class::CloudComputingEndpoint => {
            classes20::endpoint("GLUE2ComputingEndpoint", Class::CloudComputingService)
        }
        Class::CloudComputingManager => {
            Mapping::new(&["GLUE2Manager", "GLUE2ComputingManager"], "GLUE2ManagerID")
                .attr("Name", "GLUE2EntityName")
                .attrs("GLUE2Manager", &["ProductName", "ProductVersion"])
                .attr("TotalCPUs", "GLUE2ComputingManagerTotalLogicalCPUs")
                .fk(
                    Class::CloudComputingService,
                    &[
                        "GLUE2ManagerServiceForeignKey",
                        "GLUE2ComputingManagerComputingServiceForeignKey",
                    ],
                )
        }
        // No FreeSlots/UsedSlots/MaxSlotsPerJob: GLUE2 slots are CPU cores, and a cloud share
        // knows VMs and GPUs, not cores (docs/formats-ldif.md).
        Class::CloudComputingShare => {
            Mapping::new(&["GLUE2Share", "GLUE2ComputingShare"], "GLUE2ShareID")
                .attr("Name", "GLUE2EntityName")
                .attr("MaxVM", "GLUE2ComputingShareMaxRunningJobs")
                .attr("RunningVM", "GLUE2ComputingShareRunningJobs")
                .placeholder("GLUE2ComputingShareServingState", "production")
                .fk(
                    Class::CloudComputingService,
                    &[
                        "GLUE2ShareServiceForeignKey",
                        "GLUE2ComputingShareComputingServiceForeignKey",
                    ],
                )
                .fk(
                    Class::CloudComputingInstanceType,
                    &[
                        "GLUE2ShareResourceForeignKey",
                        "GLUE2ComputingShareExecutionEnvironmentForeignKey",
                    ],
                )
        }
        Class::CloudComputingInstanceType => execution_environment()
            .attr("Platform", "GLUE2ExecutionEnvironmentPlatform")
            .attr("CPU", "GLUE2ExecutionEnvironmentLogicalCPUs")
            .attr("RAM", "GLUE2ExecutionEnvironmentMainMemorySize")
            // Configured: written as an attribute, so the images' guess and the placeholder
            // (written only where the entry has none) give way.
            .attr("OSFamily", "GLUE2ExecutionEnvironmentOSFamily")
            .placeholder("GLUE2ExecutionEnvironmentOSFamily", UNKNOWN_TEXT)
            .placeholder("GLUE2ExecutionEnvironmentVirtualMachine", "TRUE")
            .fk(
                Class::CloudComputingManager,
                &[
                    "GLUE2ResourceManagerForeignKey",
                    "GLUE2ExecutionEnvironmentComputingManagerForeignKey",
                ],
            )
            // The share entry carries this link; the accelerator is folded into this entry.
            .fk(Class::CloudComputingShare, &[])
            .fk(Class::CloudComputingVirtualAccelerator, &[]),
        Class::CloudComputingImage => Mapping::new(
            &["GLUE2ApplicationEnvironment"],
            "GLUE2ApplicationEnvironmentID",
        )
        .attr("Name", "GLUE2EntityName")
        .attr("Name", "GLUE2ApplicationEnvironmentAppName")
        .attr("Description", "GLUE2ApplicationEnvironmentDescription")
        .attr("MarketplaceURL", "GLUE2ApplicationEnvironmentRepository")
        .fk(
            Class::CloudComputingManager,
            &["GLUE2ApplicationEnvironmentComputingManagerForeignKey"],
        ),
        _ => return None,
    };
    Some(mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_names_map_to_glue_families() {
        assert_eq!(os_family("Ubuntu"), Some("linux"));
        assert_eq!(os_family("Rocky Linux 9"), Some("linux"));
        assert_eq!(os_family("Windows Server 2022"), Some("windows"));
        assert_eq!(os_family("Plan 9"), None);
    }
}
