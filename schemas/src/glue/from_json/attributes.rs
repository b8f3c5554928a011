//! The attributes and keys a document may hold, and how each value is read.

use super::*;

/// How an attribute's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Text,
    Int,
    Count,
    Float,
    List,
}

/// Every attribute name accelfed writes, and how its value is read. A name means the same in every
/// class that has it.
pub(super) const ATTRIBUTES: &[(&str, Kind)] = &[
    ("Name", Kind::Text),
    ("Description", Kind::Text),
    ("WWW", Kind::Text),
    ("Place", Kind::Text),
    ("Country", Kind::Text),
    ("Latitude", Kind::Float),
    ("Longitude", Kind::Float),
    ("Detail", Kind::Text),
    ("Type", Kind::Text),
    ("URL", Kind::Text),
    ("Capability", Kind::List),
    ("Technology", Kind::Text),
    ("InterfaceName", Kind::Text),
    ("InterfaceVersion", Kind::Text),
    ("ImplementationName", Kind::Text),
    ("ImplementationVersion", Kind::Text),
    ("QualityLevel", Kind::Text),
    ("HealthState", Kind::Text),
    ("HealthStateInfo", Kind::Text),
    ("ServingState", Kind::Text),
    ("Scheme", Kind::Text),
    ("Rule", Kind::List),
    ("Vendor", Kind::Text),
    ("Model", Kind::Text),
    ("Memory", Kind::Int),
    ("ComputeCapability", Kind::Text),
    ("ClockSpeed", Kind::Int),
    ("VirtualizationType", Kind::Text),
    ("MIGProfile", Kind::Text),
    ("DriverVersion", Kind::Text),
    ("CUDAVersion", Kind::Text),
    ("TotalAcceleratorSlots", Kind::Count),
    ("UsedAcceleratorSlots", Kind::Count),
    ("FreeAcceleratorSlots", Kind::Count),
    ("TotalAccelerators", Kind::Count),
    ("UsedAccelerators", Kind::Count),
    ("FreeAccelerators", Kind::Count),
    ("MaxAcceleratorSlotsPerJob", Kind::Count),
    ("MaxAccelerators", Kind::Count),
    ("TotalPhysicalAccelerators", Kind::Count),
    ("UsedPhysicalAccelerators", Kind::Count),
    ("FreePhysicalAccelerators", Kind::Count),
    ("SlotShare", Kind::Text),
    ("ProductName", Kind::Text),
    ("ProductVersion", Kind::Text),
    ("TotalLogicalCPUs", Kind::Int),
    ("MappingQueue", Kind::Text),
    ("MaxWallTime", Kind::Int),
    ("MaxSlotsPerJob", Kind::Int),
    ("FreeSlots", Kind::Int),
    ("UsedSlots", Kind::Int),
    ("Platform", Kind::Text),
    ("TotalInstances", Kind::Int),
    ("UsedInstances", Kind::Int),
    ("UnavailableInstances", Kind::Int),
    ("PhysicalCPUs", Kind::Int),
    ("LogicalCPUs", Kind::Int),
    ("MainMemorySize", Kind::Int),
    ("OSFamily", Kind::Text),
    ("OSName", Kind::Text),
    ("OSVersion", Kind::Text),
    ("PhysicalAccelerators", Kind::Count),
    ("LogicalAccelerators", Kind::Count),
    ("HypervisorName", Kind::Text),
    ("TotalCPUs", Kind::Int),
    ("TotalRAM", Kind::Int),
    ("ProjectID", Kind::Text),
    ("MaxVM", Kind::Int),
    ("RunningVM", Kind::Int),
    ("CPU", Kind::Int),
    ("RAM", Kind::Int),
    ("Disk", Kind::Int),
    ("Number", Kind::Count),
    ("MarketplaceURL", Kind::Text),
    ("OSPlatform", Kind::Text),
    ("AccessInfo", Kind::Text),
];

/// Attribute names earlier accelfed versions wrote, and the name they mean: documents pushed before
/// the spelling followed cloud-info-provider's stay readable.
pub(super) const FORMER_NAMES: &[(&str, &str)] = &[("MarketPlaceURL", "MarketplaceURL")];

/// The keys every entity has besides its attributes.
pub(super) const ENVELOPE: [&str; 5] = [
    "ID",
    "CreationTime",
    "Validity",
    "OtherInfo",
    "Associations",
];

/// The class listed under a document key (clouds' shares are keyed `Share`).
pub(super) fn class_of_key(key: &str) -> Option<Class> {
    if key == "Share" {
        return Some(Class::CloudComputingShare);
    }
    Class::ALL.into_iter().find(|class| class.name() == key)
}

/// The class an association key names when its target is not in the document (a VO, or a
/// reference the checks below refuse). Earlier accelfed versions wrote an instance type's
/// accelerator under the long key; it is still read.
pub(super) fn class_of_association(key: &str) -> Option<Class> {
    match key {
        "PolicyUserDomain" => Some(Class::UserDomain),
        "CloudComputingInstanceTypeCloudComputingVirtualAccelerator" => {
            Some(Class::CloudComputingVirtualAccelerator)
        }
        other => class_of_key(other),
    }
}

/// A UTC time as accelfed writes it (`2026-11-01T12:00:00Z`), or any RFC 3339 time, such as the
/// `2026-11-22T10:02:01.032130+00:00` cloud-info-provider writes.
pub(super) fn time(text: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%SZ")
        .ok()
        .map(|naive| naive.and_utc())
        .or_else(|| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|time| time.with_timezone(&Utc))
        })
}

pub(super) fn attribute(kind: Kind, value: &Json) -> Result<Value<'static>, &'static str> {
    match kind {
        Kind::Text => match value {
            Json::String(text) if !text.is_empty() => Ok(Value::Text(Cow::Owned(text.clone()))),
            _ => Err("must be a non-empty string"),
        },
        Kind::Int => value
            .as_u64()
            .map(Value::Int)
            .ok_or("must be a non-negative whole number"),
        Kind::Count => value
            .as_f64()
            .and_then(|number| GpuCount::new(number).ok())
            .map(Value::Count)
            .ok_or("must be a non-negative number of accelerators"),
        Kind::Float => value
            .as_f64()
            .filter(|number| number.is_finite())
            .map(Value::Float)
            .ok_or("must be a number"),
        Kind::List => match value {
            Json::Array(items) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Value::List)
                .ok_or("must be a list of strings"),
            _ => Err("must be a list of strings"),
        },
    }
}
