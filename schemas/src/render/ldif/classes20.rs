//! Mappings of the classes GLUE 2.0 already has (site, location, contact, batch computing,
//! policies). Both modes use them unchanged: a GLUE 2.1 reader of a BDII sees the same 2.0 entries
//! a 2.0 reader does.
//!
//! Every MUST of the official GLUE20.schema is covered, either from the model or with a placeholder
//! (see [`super::mapping`]): `GLUE2ExecutionEnvironmentMainMemorySize` (999999999 when unknown),
//! `GLUE2ExecutionEnvironmentConnectivityIn`/`Out` (`undefined`: the model does not know).

use crate::glue::entity::Class;

use super::mapping::{Mapping, UNKNOWN_BOOL, UNKNOWN_INT};

const ENDPOINT: &[&str] = &[
    "URL",
    "Capability",
    "Technology",
    "InterfaceName",
    "InterfaceVersion",
    "ImplementationName",
    "ImplementationVersion",
    "QualityLevel",
    "HealthState",
    "HealthStateInfo",
    "ServingState",
];

/// `GLUE2Service` + `GLUE2ComputingService`; a cloud service uses it too in GLUE 2.0 mode.
pub fn service(service_class: &'static str) -> Mapping {
    Mapping::new(&["GLUE2Service", service_class], "GLUE2ServiceID")
        .attr("Name", "GLUE2EntityName")
        .attr("Type", "GLUE2ServiceType")
        .attrs("GLUE2Service", &["QualityLevel", "Capability"])
        .fk(Class::AdminDomain, &["GLUE2ServiceAdminDomainForeignKey"])
}

/// `GLUE2Endpoint` (+ a subclass), linked to its service of class `service`.
pub fn endpoint(endpoint_class: &'static str, service: Class) -> Mapping {
    let mapping = Mapping::new(&["GLUE2Endpoint", endpoint_class], "GLUE2EndpointID")
        .attr("Name", "GLUE2EntityName")
        .attrs("GLUE2Endpoint", ENDPOINT);
    if endpoint_class == "GLUE2ComputingEndpoint" {
        mapping.fk(
            service,
            &[
                "GLUE2EndpointServiceForeignKey",
                "GLUE2ComputingEndpointComputingServiceForeignKey",
            ],
        )
    } else {
        mapping.fk(service, &["GLUE2EndpointServiceForeignKey"])
    }
}

/// The mapping of a class GLUE 2.0 has, or `None` for the accelerator and cloud classes.
pub fn mapping(class: Class) -> Option<Mapping> {
    let mapping = match class {
        Class::AdminDomain => Mapping::new(&["GLUE2Domain", "GLUE2AdminDomain"], "GLUE2DomainID")
            .attr("Name", "GLUE2EntityName")
            .attrs("GLUE2Domain", &["Description", "WWW"]),
        Class::Location => Mapping::new(&["GLUE2Location"], "GLUE2LocationID")
            .attr("Name", "GLUE2EntityName")
            .attrs(
                "GLUE2Location",
                &["Place", "Country", "Latitude", "Longitude"],
            )
            .fk(Class::AdminDomain, &["GLUE2LocationDomainForeignKey"]),
        Class::Contact => Mapping::new(&["GLUE2Contact"], "GLUE2ContactID")
            .attr("Name", "GLUE2EntityName")
            .attrs("GLUE2Contact", &["Detail", "Type"])
            .fk(Class::AdminDomain, &["GLUE2ContactDomainForeignKey"]),
        Class::ComputingService => service("GLUE2ComputingService"),
        Class::ComputingEndpoint => endpoint("GLUE2ComputingEndpoint", Class::ComputingService),
        Class::ComputingManager => {
            Mapping::new(&["GLUE2Manager", "GLUE2ComputingManager"], "GLUE2ManagerID")
                .attr("Name", "GLUE2EntityName")
                .attrs("GLUE2Manager", &["ProductName", "ProductVersion"])
                .attrs("GLUE2ComputingManager", &["TotalLogicalCPUs"])
                .fk(
                    Class::ComputingService,
                    &[
                        "GLUE2ManagerServiceForeignKey",
                        "GLUE2ComputingManagerComputingServiceForeignKey",
                    ],
                )
        }
        Class::ComputingShare => {
            Mapping::new(&["GLUE2Share", "GLUE2ComputingShare"], "GLUE2ShareID")
                .attr("Name", "GLUE2EntityName")
                .attrs(
                    "GLUE2ComputingShare",
                    &[
                        "MappingQueue",
                        "ServingState",
                        "MaxWallTime",
                        "MaxSlotsPerJob",
                        "FreeSlots",
                        "UsedSlots",
                    ],
                )
                .fk(
                    Class::ComputingService,
                    &[
                        "GLUE2ShareServiceForeignKey",
                        "GLUE2ComputingShareComputingServiceForeignKey",
                    ],
                )
                .fk(
                    Class::ExecutionEnvironment,
                    &[
                        "GLUE2ShareResourceForeignKey",
                        "GLUE2ComputingShareExecutionEnvironmentForeignKey",
                    ],
                )
        }
        Class::ExecutionEnvironment => execution_environment()
            .attrs(
                "GLUE2ExecutionEnvironment",
                &[
                    "Platform",
                    "TotalInstances",
                    "UsedInstances",
                    "UnavailableInstances",
                    "PhysicalCPUs",
                    "LogicalCPUs",
                    "MainMemorySize",
                    "OSFamily",
                    "OSName",
                    "OSVersion",
                ],
            )
            .fk(
                Class::ComputingManager,
                &[
                    "GLUE2ResourceManagerForeignKey",
                    "GLUE2ExecutionEnvironmentComputingManagerForeignKey",
                ],
            )
            // The share entry carries the share <-> environment link (GLUE2ShareResourceForeignKey).
            .fk(Class::ComputingShare, &[]),
        Class::MappingPolicy => policy("GLUE2MappingPolicy")
            .fk(
                Class::ComputingShare,
                &["GLUE2MappingPolicyShareForeignKey"],
            )
            .fk(
                Class::CloudComputingShare,
                &["GLUE2MappingPolicyShareForeignKey"],
            ),
        Class::AccessPolicy => policy("GLUE2AccessPolicy")
            .fk(
                Class::ComputingEndpoint,
                &["GLUE2AccessPolicyEndpointForeignKey"],
            )
            .fk(
                Class::CloudComputingEndpoint,
                &["GLUE2AccessPolicyEndpointForeignKey"],
            ),
        _ => return None,
    };
    Some(mapping)
}

/// `GLUE2Resource` + `GLUE2ExecutionEnvironment` with the placeholders for its MUSTs; the caller
/// adds the attribute and foreign-key mappings of its source class.
pub fn execution_environment() -> Mapping {
    Mapping::new(
        &["GLUE2Resource", "GLUE2ExecutionEnvironment"],
        "GLUE2ResourceID",
    )
    .attr("Name", "GLUE2EntityName")
    .placeholder("GLUE2ExecutionEnvironmentMainMemorySize", UNKNOWN_INT)
    .placeholder("GLUE2ExecutionEnvironmentConnectivityIn", UNKNOWN_BOOL)
    .placeholder("GLUE2ExecutionEnvironmentConnectivityOut", UNKNOWN_BOOL)
}

fn policy(class: &'static str) -> Mapping {
    Mapping::new(&["GLUE2Policy", class], "GLUE2PolicyID")
        .attr("Name", "GLUE2EntityName")
        .attrs("GLUE2Policy", &["Scheme", "Rule"])
        .fk(Class::UserDomain, &["GLUE2PolicyUserDomainForeignKey"])
}
