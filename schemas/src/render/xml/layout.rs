//! Where each GLUE 2.1 class goes in the GLUE 2.0 XML rendering: its element, its `BaseType`, which
//! of its attributes become which child elements (in the order the GLUE 2.0 XML schema lists them),
//! which child entities nest where, and which associations have an element of their own.
//!
//! The tables follow the OGF GLUE 2.0 XML schema as ARC's information system writes and reads it:
//! entity elements carry `BaseType`, `CreationTime` and `Validity` attributes and start with `ID`,
//! `Name`, `OtherInfo`; associations are `<Associations><ComputingShareID>...</ComputingShareID>`.
//! Anything a table does not place goes to `OtherInfo` (see the parent module).

use crate::glue::entity::Class;

/// One child element filled from an entity attribute, or a fixed value where the model has none.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The GLUE 2.0 element name.
    pub element: &'static str,
    /// The GLUE 2.1 attribute it comes from (`None`: only `default` applies).
    pub source: Option<&'static str>,
    /// Written when the entity has no value for `source`.
    pub default: Option<&'static str>,
}

const fn attr(element: &'static str, source: &'static str) -> Field {
    Field {
        element,
        source: Some(source),
        default: None,
    }
}

const fn same(name: &'static str) -> Field {
    attr(name, name)
}

const fn fixed(element: &'static str, value: &'static str) -> Field {
    Field {
        element,
        source: None,
        default: Some(value),
    }
}

/// Child entities of some classes, optionally inside a wrapper element (`ExecutionEnvironments`).
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub wrapper: Option<&'static str>,
    pub classes: &'static [Class],
}

const fn group(classes: &'static [Class]) -> Group {
    Group {
        wrapper: None,
        classes,
    }
}

const fn wrapped(wrapper: &'static str, classes: &'static [Class]) -> Group {
    Group {
        wrapper: Some(wrapper),
        classes,
    }
}

/// How one class is written.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub element: &'static str,
    pub base_type: Option<&'static str>,
    /// Child entities written right after `OtherInfo`, before the fields (policies of a share).
    pub first: &'static [Group],
    pub fields: &'static [Field],
    /// Child entities written after the fields.
    pub last: &'static [Group],
    /// Association target class -> element inside `<Associations>`.
    pub associations: &'static [(Class, &'static str)],
}

const NONE: &[Group] = &[];

const ENDPOINT_FIELDS: &[Field] = &[
    same("URL"),
    same("Capability"),
    same("Technology"),
    same("InterfaceName"),
    same("InterfaceVersion"),
    same("ImplementationName"),
    same("ImplementationVersion"),
    same("QualityLevel"),
    same("HealthState"),
    same("HealthStateInfo"),
    same("ServingState"),
];

const SHARE: Layout = Layout {
    element: "ComputingShare",
    base_type: Some("Share"),
    first: &[group(&[Class::MappingPolicy])],
    fields: &[
        same("MappingQueue"),
        same("MaxWallTime"),
        // A VM is the cloud's job, as EGI's GLUE 2.0 cloud publication had it.
        attr("MaxRunningJobs", "MaxVM"),
        same("MaxSlotsPerJob"),
        Field {
            element: "ServingState",
            source: Some("ServingState"),
            default: Some("production"),
        },
        attr("RunningJobs", "RunningVM"),
        same("FreeSlots"),
        same("UsedSlots"),
    ],
    last: NONE,
    associations: &[
        (Class::ComputingEndpoint, "ComputingEndpointID"),
        (Class::ExecutionEnvironment, "ExecutionEnvironmentID"),
        (Class::CloudComputingInstanceType, "ExecutionEnvironmentID"),
    ],
};

const POLICY_FIELDS: &[Field] = &[same("Scheme"), same("Rule")];
const POLICY_ASSOCIATIONS: &[(Class, &str)] = &[(Class::UserDomain, "UserDomainID")];

const MANAGER_CHILDREN: &[Group] = &[
    wrapped(
        "ExecutionEnvironments",
        &[
            Class::ExecutionEnvironment,
            Class::CloudComputingInstanceType,
        ],
    ),
    wrapped("ApplicationEnvironments", &[Class::CloudComputingImage]),
];

const SERVICE: Layout = Layout {
    element: "ComputingService",
    base_type: Some("Service"),
    first: NONE,
    fields: &[same("Capability"), same("Type"), same("QualityLevel")],
    last: &[
        group(&[Class::ComputingEndpoint, Class::CloudComputingEndpoint]),
        group(&[Class::ComputingShare, Class::CloudComputingShare]),
        group(&[Class::ComputingManager, Class::CloudComputingManager]),
    ],
    associations: &[],
};

/// The shares an execution environment, an instance type or an endpoint serves: both families'
/// shares are `ComputingShareID` in XML.
const SHARE_ASSOCIATIONS: &[(Class, &str)] = &[
    (Class::ComputingShare, "ComputingShareID"),
    (Class::CloudComputingShare, "ComputingShareID"),
];

const ADMIN_DOMAIN: Layout = Layout {
    element: "AdminDomain",
    base_type: Some("Domain"),
    first: NONE,
    fields: &[same("Description"), same("WWW")],
    last: &[
        group(&[Class::Location]),
        group(&[Class::Contact]),
        wrapped(
            "Services",
            &[Class::ComputingService, Class::CloudComputingService],
        ),
    ],
    associations: &[],
};

const LOCATION: Layout = Layout {
    element: "Location",
    base_type: None,
    first: NONE,
    fields: &[
        same("Place"),
        same("Country"),
        same("Latitude"),
        same("Longitude"),
    ],
    last: NONE,
    associations: &[],
};

const CONTACT: Layout = Layout {
    element: "Contact",
    base_type: None,
    first: NONE,
    fields: &[same("Detail"), same("Type")],
    last: NONE,
    associations: &[],
};

const ENDPOINT: Layout = Layout {
    element: "ComputingEndpoint",
    base_type: Some("Endpoint"),
    first: NONE,
    fields: ENDPOINT_FIELDS,
    last: &[group(&[Class::AccessPolicy])],
    associations: SHARE_ASSOCIATIONS,
};

const ACCESS_POLICY: Layout = Layout {
    element: "AccessPolicy",
    base_type: Some("Policy"),
    first: NONE,
    fields: POLICY_FIELDS,
    last: NONE,
    associations: POLICY_ASSOCIATIONS,
};

const MAPPING_POLICY: Layout = Layout {
    element: "MappingPolicy",
    base_type: Some("Policy"),
    first: NONE,
    fields: POLICY_FIELDS,
    last: NONE,
    associations: POLICY_ASSOCIATIONS,
};

const COMPUTING_MANAGER: Layout = Layout {
    element: "ComputingManager",
    base_type: Some("Manager"),
    first: NONE,
    fields: &[
        same("ProductName"),
        same("ProductVersion"),
        same("TotalLogicalCPUs"),
    ],
    last: MANAGER_CHILDREN,
    associations: &[],
};

const CLOUD_COMPUTING_MANAGER: Layout = Layout {
    element: "ComputingManager",
    base_type: Some("Manager"),
    first: NONE,
    fields: &[
        same("ProductName"),
        same("ProductVersion"),
        attr("TotalLogicalCPUs", "TotalCPUs"),
    ],
    last: MANAGER_CHILDREN,
    associations: &[],
};

const EXECUTION_ENVIRONMENT: Layout = Layout {
    element: "ExecutionEnvironment",
    base_type: Some("Resource"),
    first: NONE,
    fields: &[
        same("Platform"),
        same("TotalInstances"),
        same("UsedInstances"),
        same("UnavailableInstances"),
        same("PhysicalCPUs"),
        same("LogicalCPUs"),
        same("MainMemorySize"),
        same("OSFamily"),
        same("OSName"),
        same("OSVersion"),
    ],
    last: NONE,
    associations: SHARE_ASSOCIATIONS,
};

const CLOUD_COMPUTING_INSTANCE_TYPE: Layout = Layout {
    element: "ExecutionEnvironment",
    base_type: Some("Resource"),
    first: NONE,
    fields: &[
        same("Platform"),
        fixed("VirtualMachine", "true"),
        attr("LogicalCPUs", "CPU"),
        attr("MainMemorySize", "RAM"),
    ],
    last: NONE,
    associations: SHARE_ASSOCIATIONS,
};

const CLOUD_COMPUTING_IMAGE: Layout = Layout {
    element: "ApplicationEnvironment",
    base_type: None,
    first: NONE,
    fields: &[
        attr("AppName", "Name"),
        attr("Repository", "MarketplaceURL"),
        same("Description"),
    ],
    last: NONE,
    associations: &[],
};

/// The layout of `class`; `None` for the accelerator classes, which GLUE 2.0 has no element for
/// (their facts go to the parent's `OtherInfo`).
pub fn layout(class: Class) -> Option<Layout> {
    let layout = match class {
        Class::AdminDomain => ADMIN_DOMAIN,
        Class::Location => LOCATION,
        Class::Contact => CONTACT,
        Class::ComputingEndpoint | Class::CloudComputingEndpoint => ENDPOINT,
        Class::AccessPolicy => ACCESS_POLICY,
        Class::MappingPolicy => MAPPING_POLICY,
        Class::ComputingManager => COMPUTING_MANAGER,
        Class::CloudComputingManager => CLOUD_COMPUTING_MANAGER,
        Class::ExecutionEnvironment => EXECUTION_ENVIRONMENT,
        Class::CloudComputingInstanceType => CLOUD_COMPUTING_INSTANCE_TYPE,
        Class::CloudComputingImage => CLOUD_COMPUTING_IMAGE,
        Class::ComputingService | Class::CloudComputingService => SERVICE,
        Class::ComputingShare | Class::CloudComputingShare => SHARE,
        Class::AcceleratorEnvironment
        | Class::ComputingManagerAccelerator
        | Class::ComputingShareAccelerator
        | Class::CloudComputingVirtualAccelerator
        | Class::CloudComputingManagerAccelerator
        | Class::CloudComputingShareAccelerator
        | Class::UserDomain => return None,
    };
    Some(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_but_the_accelerators_has_an_element() {
        for class in Class::ALL {
            let folded = crate::render::ldif::gpu_info::is_accelerator(class);
            assert_eq!(layout(class).is_none(), folded, "{class:?}");
        }
    }

    #[test]
    fn every_nested_class_has_a_place_in_its_parent() {
        let placed: Vec<Class> = Class::ALL
            .into_iter()
            .filter_map(layout)
            .flat_map(|l| l.first.iter().chain(l.last).copied())
            .flat_map(|g| g.classes.iter().copied())
            .collect();
        for class in Class::ALL {
            if class != Class::AdminDomain && layout(class).is_some() {
                assert!(placed.contains(&class), "{class:?} is never written");
            }
        }
    }
}
