//! The GLUE2 object view of a snapshot: a flat list of entities in tree order (parents before
//! children), each with its GLUE 2.1 class, ID, attributes and associations.
//!
//! Every rendering starts here, so IDs, attribute names and values are decided once. The list is built
//! by [`super::SiteSnapshot::entities`]; formats only choose spelling and layout.

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use crate::gpu::GpuCount;

/// GLUE 2.1 classes accelfed publishes, plus `UserDomain`, which only appears as an association target
/// (a VO name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    AdminDomain,
    Location,
    Contact,
    ComputingService,
    ComputingEndpoint,
    ComputingManager,
    ComputingShare,
    ExecutionEnvironment,
    AcceleratorEnvironment,
    ComputingManagerAccelerator,
    ComputingShareAccelerator,
    CloudComputingService,
    CloudComputingEndpoint,
    CloudComputingManager,
    CloudComputingShare,
    CloudComputingInstanceType,
    CloudComputingVirtualAccelerator,
    CloudComputingImage,
    CloudComputingManagerAccelerator,
    CloudComputingShareAccelerator,
    MappingPolicy,
    AccessPolicy,
    UserDomain,
}

impl Class {
    /// The class name as GLUE 2.1 spells it.
    pub fn name(self) -> &'static str {
        match self {
            Class::AdminDomain => "AdminDomain",
            Class::Location => "Location",
            Class::Contact => "Contact",
            Class::ComputingService => "ComputingService",
            Class::ComputingEndpoint => "ComputingEndpoint",
            Class::ComputingManager => "ComputingManager",
            Class::ComputingShare => "ComputingShare",
            Class::ExecutionEnvironment => "ExecutionEnvironment",
            Class::AcceleratorEnvironment => "AcceleratorEnvironment",
            Class::ComputingManagerAccelerator => "ComputingManagerAccelerator",
            Class::ComputingShareAccelerator => "ComputingShareAccelerator",
            Class::CloudComputingService => "CloudComputingService",
            Class::CloudComputingEndpoint => "CloudComputingEndpoint",
            Class::CloudComputingManager => "CloudComputingManager",
            Class::CloudComputingShare => "CloudComputingShare",
            Class::CloudComputingInstanceType => "CloudComputingInstanceType",
            Class::CloudComputingVirtualAccelerator => "CloudComputingVirtualAccelerator",
            Class::CloudComputingImage => "CloudComputingImage",
            Class::CloudComputingManagerAccelerator => "CloudComputingManagerAccelerator",
            Class::CloudComputingShareAccelerator => "CloudComputingShareAccelerator",
            Class::MappingPolicy => "MappingPolicy",
            Class::AccessPolicy => "AccessPolicy",
            Class::UserDomain => "UserDomain",
        }
    }

    /// The position of the class in [`Class::ALL`] (`UserDomain`, which is not there, comes last), so
    /// renderers can keep per-class tables in a plain array.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Every class an entity can have, in the order documents list them.
    pub const ALL: [Class; 22] = [
        Class::AdminDomain,
        Class::Location,
        Class::Contact,
        Class::ComputingService,
        Class::ComputingEndpoint,
        Class::ComputingManager,
        Class::ComputingShare,
        Class::ExecutionEnvironment,
        Class::AcceleratorEnvironment,
        Class::ComputingManagerAccelerator,
        Class::ComputingShareAccelerator,
        Class::CloudComputingService,
        Class::CloudComputingEndpoint,
        Class::CloudComputingManager,
        Class::CloudComputingShare,
        Class::CloudComputingInstanceType,
        Class::CloudComputingVirtualAccelerator,
        Class::CloudComputingImage,
        Class::CloudComputingManagerAccelerator,
        Class::CloudComputingShareAccelerator,
        Class::MappingPolicy,
        Class::AccessPolicy,
    ];
}

/// An attribute value. Text borrows from the snapshot where it can (`'a`).
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Text(Cow<'a, str>),
    Int(u64),
    /// A GPU count, possibly fractional.
    Count(GpuCount),
    Float(f64),
    /// A multi-valued attribute (Capability, Rule).
    List(Vec<String>),
    Time(DateTime<Utc>),
}

/// One GLUE2 entity.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity<'a> {
    pub class: Class,
    pub id: String,
    /// Index of the entity this one nests under in the LDAP DIT and in XML; `None` for the site and
    /// for the services (which sit in the `resource` group).
    pub parent: Option<usize>,
    /// Attributes with their GLUE 2.1 names (no class prefix), absent values left out, in the order
    /// the class defines them. `Name` comes first where present.
    pub attributes: Vec<(&'static str, Value<'a>)>,
    /// `OtherInfo` as sorted `key=value` pairs.
    pub other_info: Vec<(String, String)>,
    /// Associations (foreign keys): the target's class and ID.
    pub associations: Vec<(Class, String)>,
}

impl<'a> Entity<'a> {
    pub fn attribute(&self, name: &str) -> Option<&Value<'a>> {
        self.attributes
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (position, class) in Class::ALL.into_iter().enumerate() {
            assert_eq!(class.index(), position, "{class:?}");
        }
        assert_eq!(Class::UserDomain.index(), Class::ALL.len());
    }
}
