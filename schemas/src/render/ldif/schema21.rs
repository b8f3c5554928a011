//! accelfed's LDAP schema for the GLUE 2.1 classes GLUE 2.0 lacks, as data.
//!
//! One table ([`CLASSES`]) drives both the GLUE 2.1 LDIF mapping ([`ClassDef::mapping`]) and the
//! schema file `schemas/ldap/accelfed-glue21.schema` ([`super::schema_file`]; a golden test keeps
//! the file equal to it), so an attribute the renderer writes is always one the schema defines.
//!
//! Naming: the entity attribute `Model` of class `AcceleratorEnvironment` is the LDAP attribute
//! `GLUE2AcceleratorEnvironmentModel`; an association to class `X` is
//! `GLUE2<Class><X>ForeignKey`; every class has `GLUE2<Class>ID`, the RDN of its entries (a cloud
//! service also carries the `GLUE2ServiceID` of its GLUE 2.0 parent class).
//!
//! OIDs: the arc is `2.25.<UUID 1bab038a-79ae-47d2-852b-4be5841e847a as a decimal>` (ITU-T X.667:
//! UUID-based OIDs need no registration). Attribute types are `<arc>.1.<class>.<attribute>`, object
//! classes `<arc>.2.<class>`, with the fixed numbers below: never renumber, only add.

use crate::glue::entity::Class;

use super::classes20;
use super::mapping::Mapping;

/// `2.25.` followed by UUID 1bab038a-79ae-47d2-852b-4be5841e847a as one decimal integer.
pub const OID_ARC: &str = "2.25.36777110467375800468799450146777498746";

/// How an attribute compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Directory string, case-insensitive equality and substrings (`Model=*A100*`).
    Text,
    /// Integer with ordering, so `>=` filters work. Counts are written here only when whole.
    Integer,
}

/// The GLUE 2.0 class a GLUE 2.1 class extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sup {
    /// A new kind of entity with an ID attribute of its own.
    Entity,
    Service,
    Endpoint,
    Manager,
    Share,
}

/// One class of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassDef {
    pub class: Class,
    /// Its OID number under the arc; never reused.
    pub number: u32,
    pub sup: Sup,
    pub attributes: &'static [(&'static str, Syntax)],
    /// Associations stored as foreign keys of this class; for [`Sup::Entity`] classes the first is
    /// the parent in the DIT and is required.
    pub foreign_keys: &'static [Class],
}

use Syntax::{Integer, Text};

const GPU: [(&str, Syntax); 11] = [
    ("Type", Text),
    ("Vendor", Text),
    ("Model", Text),
    ("Memory", Integer),
    ("ComputeCapability", Text),
    ("ClockSpeed", Integer),
    ("VirtualizationType", Text),
    ("MIGProfile", Text),
    ("DriverVersion", Text),
    ("CUDAVersion", Text),
    ("SlotShare", Text),
];

macro_rules! with_gpu {
    ($($before:expr),* ; $($after:expr),*) => {
        &[$($before,)* GPU[0], GPU[1], GPU[2], GPU[3], GPU[4], GPU[5], GPU[6], GPU[7], GPU[8], GPU[9], GPU[10], $($after),*]
    };
}

/// Every class accelfed adds, in schema-file order.
pub const CLASSES: [ClassDef; 12] = [
    ClassDef {
        class: Class::AcceleratorEnvironment,
        number: 1,
        sup: Sup::Entity,
        attributes: with_gpu!(("PhysicalAccelerators", Integer), ("LogicalAccelerators", Integer);
            ("TotalAcceleratorSlots", Integer), ("UsedAcceleratorSlots", Integer), ("FreeAcceleratorSlots", Integer)),
        foreign_keys: &[Class::ExecutionEnvironment],
    },
    ClassDef {
        class: Class::ComputingManagerAccelerator,
        number: 2,
        sup: Sup::Entity,
        attributes: with_gpu!(; ("TotalAcceleratorSlots", Integer), ("UsedAcceleratorSlots", Integer),
            ("FreeAcceleratorSlots", Integer), ("MaxAcceleratorSlotsPerJob", Integer),
            ("TotalPhysicalAccelerators", Integer), ("UsedPhysicalAccelerators", Integer),
            ("FreePhysicalAccelerators", Integer)),
        foreign_keys: &[Class::ComputingManager],
    },
    ClassDef {
        class: Class::ComputingShareAccelerator,
        number: 3,
        sup: Sup::Entity,
        attributes: with_gpu!(; ("TotalAcceleratorSlots", Integer), ("UsedAcceleratorSlots", Integer),
            ("FreeAcceleratorSlots", Integer), ("MaxAcceleratorSlotsPerJob", Integer),
            ("TotalPhysicalAccelerators", Integer), ("UsedPhysicalAccelerators", Integer),
            ("FreePhysicalAccelerators", Integer)),
        foreign_keys: &[Class::ComputingShare],
    },
    ClassDef {
        class: Class::CloudComputingService,
        number: 4,
        sup: Sup::Service,
        attributes: &[],
        foreign_keys: &[],
    },
    ClassDef {
        class: Class::CloudComputingEndpoint,
        number: 5,
        sup: Sup::Endpoint,
        attributes: &[],
        foreign_keys: &[],
    },
    ClassDef {
        class: Class::CloudComputingManager,
        number: 6,
        sup: Sup::Manager,
        attributes: &[
            ("HypervisorName", Text),
            ("TotalCPUs", Integer),
            ("TotalRAM", Integer),
        ],
        foreign_keys: &[],
    },
    ClassDef {
        class: Class::CloudComputingShare,
        number: 7,
        sup: Sup::Share,
        attributes: &[
            ("ProjectID", Text),
            ("MaxVM", Integer),
            ("RunningVM", Integer),
            ("MaxAccelerators", Integer),
        ],
        foreign_keys: &[],
    },
    ClassDef {
        class: Class::CloudComputingInstanceType,
        number: 8,
        sup: Sup::Entity,
        attributes: &[
            ("Platform", Text),
            ("CPU", Integer),
            ("RAM", Integer),
            ("Disk", Integer),
        ],
        foreign_keys: &[
            Class::CloudComputingManager,
            Class::CloudComputingShare,
            Class::CloudComputingVirtualAccelerator,
        ],
    },
    ClassDef {
        class: Class::CloudComputingVirtualAccelerator,
        number: 9,
        sup: Sup::Entity,
        attributes: with_gpu!(("Number", Integer), ("PhysicalAccelerators", Integer);),
        foreign_keys: &[Class::CloudComputingInstanceType],
    },
    ClassDef {
        class: Class::CloudComputingImage,
        number: 10,
        sup: Sup::Entity,
        attributes: &[
            ("MarketplaceURL", Text),
            ("OSPlatform", Text),
            ("OSName", Text),
            ("OSVersion", Text),
            ("Description", Text),
            ("AccessInfo", Text),
        ],
        foreign_keys: &[Class::CloudComputingManager, Class::CloudComputingShare],
    },
    ClassDef {
        class: Class::CloudComputingManagerAccelerator,
        number: 11,
        sup: Sup::Entity,
        attributes: with_gpu!(; ("TotalAccelerators", Integer), ("UsedAccelerators", Integer),
            ("FreeAccelerators", Integer), ("MaxAccelerators", Integer),
            ("TotalPhysicalAccelerators", Integer), ("UsedPhysicalAccelerators", Integer),
            ("FreePhysicalAccelerators", Integer)),
        foreign_keys: &[Class::CloudComputingManager],
    },
    ClassDef {
        class: Class::CloudComputingShareAccelerator,
        number: 12,
        sup: Sup::Entity,
        attributes: with_gpu!(; ("TotalAccelerators", Integer), ("UsedAccelerators", Integer),
            ("FreeAccelerators", Integer), ("MaxAccelerators", Integer),
            ("TotalPhysicalAccelerators", Integer), ("UsedPhysicalAccelerators", Integer),
            ("FreePhysicalAccelerators", Integer)),
        foreign_keys: &[Class::CloudComputingShare],
    },
];

/// Fixed OID numbers of attribute suffixes (`<arc>.1.<class>.<number>`). Foreign keys are
/// `100 + ` the number of their target class ([`class_number`]).
const ATTRIBUTE_NUMBERS: [(&str, u32); 43] = [
    ("ID", 1),
    ("Type", 2),
    ("Vendor", 3),
    ("Model", 4),
    ("Memory", 5),
    ("ComputeCapability", 6),
    ("ClockSpeed", 7),
    ("VirtualizationType", 8),
    ("MIGProfile", 9),
    ("DriverVersion", 10),
    ("CUDAVersion", 11),
    ("PhysicalAccelerators", 12),
    ("LogicalAccelerators", 13),
    ("TotalAcceleratorSlots", 14),
    ("UsedAcceleratorSlots", 15),
    ("FreeAcceleratorSlots", 16),
    ("MaxAcceleratorSlotsPerJob", 17),
    ("TotalAccelerators", 18),
    ("UsedAccelerators", 19),
    ("FreeAccelerators", 20),
    ("MaxAccelerators", 21),
    ("Number", 22),
    ("HypervisorName", 23),
    ("TotalCPUs", 24),
    ("TotalRAM", 25),
    ("ProjectID", 26),
    ("MaxVM", 27),
    ("RunningVM", 28),
    ("Platform", 29),
    ("CPU", 30),
    ("RAM", 31),
    ("Disk", 32),
    ("MarketplaceURL", 33),
    ("OSPlatform", 34),
    ("OSName", 35),
    ("OSVersion", 36),
    ("Description", 37),
    ("AccessInfo", 38),
    ("Name", 39),
    ("TotalPhysicalAccelerators", 40),
    ("UsedPhysicalAccelerators", 41),
    ("FreePhysicalAccelerators", 42),
    ("SlotShare", 43),
];

/// The OID number of a class: its [`ClassDef::number`], or 50+ for GLUE 2.0 classes (only used as
/// foreign-key targets).
pub fn class_number(class: Class) -> u32 {
    if let Some(def) = CLASSES.iter().find(|def| def.class == class) {
        return def.number;
    }
    match class {
        Class::ExecutionEnvironment => 50,
        Class::ComputingManager => 51,
        Class::ComputingShare => 52,
        _ => 99,
    }
}

pub(super) fn attribute_number(suffix: &str) -> u32 {
    ATTRIBUTE_NUMBERS
        .iter()
        .find(|(name, _)| *name == suffix)
        .map_or(0, |(_, number)| *number)
}

/// The definition of `class`, if it is one accelfed adds.
pub fn def(class: Class) -> Option<&'static ClassDef> {
    CLASSES.iter().find(|def| def.class == class)
}

impl ClassDef {
    /// `GLUE2<Class>`, the object class.
    pub fn ldap_name(&self) -> &'static str {
        object_class(self.class)
    }

    /// `GLUE2<Class><Attribute>`.
    pub fn attribute(&self, name: &str) -> String {
        format!("GLUE2{}{}", self.class.name(), name)
    }

    /// `GLUE2<Class><Target>ForeignKey`.
    pub fn foreign_key(&self, target: Class) -> String {
        format!("GLUE2{}{}ForeignKey", self.class.name(), target.name())
    }

    /// How entities of this class become entries in GLUE 2.1 mode.
    pub fn mapping(&self) -> Mapping {
        let ldap_class = self.ldap_name();
        let service = Class::CloudComputingService;
        let mut mapping = match self.sup {
            Sup::Entity => {
                Mapping::new(&[ldap_class], self.attribute("ID")).attr("Name", "GLUE2EntityName")
            }
            Sup::Service => classes20::service(ldap_class),
            Sup::Endpoint => classes20::endpoint(ldap_class, service),
            Sup::Manager => Mapping::new(&["GLUE2Manager", ldap_class], "GLUE2ManagerID")
                .attr("Name", "GLUE2EntityName")
                .attrs("GLUE2Manager", &["ProductName", "ProductVersion"])
                .fk(service, &["GLUE2ManagerServiceForeignKey"]),
            Sup::Share => Mapping::new(&["GLUE2Share", ldap_class], "GLUE2ShareID")
                .attr("Name", "GLUE2EntityName")
                .fk(service, &["GLUE2ShareServiceForeignKey"]),
        };
        if self.sup != Sup::Entity {
            // Keyed by an ID attribute of its own, so its DN differs from the GLUE 2.0 mode entry
            // of the same entity (a GLUE2ComputingService there): slapd never lets an update
            // change an entry's structural class, and a BDII switched between the modes would
            // refuse every such entry (objectClassModsProhibited, 69).
            mapping = mapping.keyed_by(self.attribute("ID"));
        }
        for (attribute, _) in self.attributes {
            mapping = mapping.attr(attribute, self.attribute(attribute));
        }
        for target in self.foreign_keys {
            mapping = mapping.fk(*target, &[&self.foreign_key(*target)]);
        }
        mapping
    }
}

/// `GLUE2<Class>`, spelled out so entries can hold it as a `&'static str`.
fn object_class(class: Class) -> &'static str {
    match class {
        Class::AcceleratorEnvironment => "GLUE2AcceleratorEnvironment",
        Class::ComputingManagerAccelerator => "GLUE2ComputingManagerAccelerator",
        Class::ComputingShareAccelerator => "GLUE2ComputingShareAccelerator",
        Class::CloudComputingService => "GLUE2CloudComputingService",
        Class::CloudComputingEndpoint => "GLUE2CloudComputingEndpoint",
        Class::CloudComputingManager => "GLUE2CloudComputingManager",
        Class::CloudComputingShare => "GLUE2CloudComputingShare",
        Class::CloudComputingInstanceType => "GLUE2CloudComputingInstanceType",
        Class::CloudComputingVirtualAccelerator => "GLUE2CloudComputingVirtualAccelerator",
        Class::CloudComputingImage => "GLUE2CloudComputingImage",
        Class::CloudComputingManagerAccelerator => "GLUE2CloudComputingManagerAccelerator",
        Class::CloudComputingShareAccelerator => "GLUE2CloudComputingShareAccelerator",
        _ => "GLUE2Entity",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attribute_suffix_has_a_fixed_number_and_numbers_are_unique() {
        let mut numbers: Vec<u32> = ATTRIBUTE_NUMBERS.iter().map(|(_, n)| *n).collect();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), ATTRIBUTE_NUMBERS.len());
        for def in &CLASSES {
            for (attribute, _) in def.attributes {
                assert_ne!(
                    attribute_number(attribute),
                    0,
                    "{attribute} has no OID number"
                );
            }
        }
    }
}
