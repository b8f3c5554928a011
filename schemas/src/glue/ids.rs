//! Globally unique, stable GLUE2 identifiers.
//!
//! An ID is `urn:accelfed:<site>:<kind>:<path>` where `<path>` is the entity's local id, prefixed by
//! its service's local id for entities that live inside a service (two services of one site may both
//! have a share called `atlas`). Local ids come from the middleware (flavor ids, partition names), so
//! the same object gets the same ID on every run. Characters outside the URN-safe set are
//! percent-encoded, which keeps IDs ASCII and unambiguous (`:` inside a local id becomes `%3A`).

use std::fmt::Write;

use crate::names::SiteName;

/// The kinds of entity, each with its own ID namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Site,
    Location,
    Contact,
    Service,
    Endpoint,
    Manager,
    Share,
    ExecutionEnvironment,
    AcceleratorEnvironment,
    ManagerAccelerator,
    ShareAccelerator,
    InstanceType,
    VirtualAccelerator,
    Image,
    MappingPolicy,
    AccessPolicy,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Site => "site",
            Kind::Location => "location",
            Kind::Contact => "contact",
            Kind::Service => "service",
            Kind::Endpoint => "endpoint",
            Kind::Manager => "manager",
            Kind::Share => "share",
            Kind::ExecutionEnvironment => "ee",
            Kind::AcceleratorEnvironment => "accelerator-env",
            Kind::ManagerAccelerator => "manager-accelerator",
            Kind::ShareAccelerator => "share-accelerator",
            Kind::InstanceType => "instance-type",
            Kind::VirtualAccelerator => "virtual-accelerator",
            Kind::Image => "image",
            Kind::MappingPolicy => "mapping-policy",
            Kind::AccessPolicy => "access-policy",
        }
    }
}

/// Makes the IDs of one site.
#[derive(Debug, Clone)]
pub struct Ids {
    prefix: String,
}

impl Ids {
    pub fn new(site: &SiteName) -> Self {
        let mut prefix = String::from("urn:accelfed:");
        encode_into(&mut prefix, site.as_str());
        prefix.push(':');
        Self { prefix }
    }

    /// What every ID of the site starts with: `urn:accelfed:<site>:`.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The ID of an entity known by `parts`, outermost first (service, then the entity's own local id).
    pub fn id(&self, kind: Kind, parts: &[&str]) -> String {
        let mut id = String::with_capacity(self.prefix.len() + 48);
        id.push_str(&self.prefix);
        id.push_str(kind.as_str());
        id.push(':');
        for (index, part) in parts.iter().enumerate() {
            if index > 0 {
                id.push('/');
            }
            encode_into(&mut id, part);
        }
        id
    }
}

/// Percent-encodes everything but RFC 8141's unreserved characters and a few safe sub-delimiters.
fn encode_into(out: &mut String, text: &str) {
    for byte in text.bytes() {
        let safe = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'@');
        if safe {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_namespaced_and_ascii() {
        let ids = Ids::new(&SiteName::new("CESNET-MCC").unwrap());
        assert_eq!(
            ids.id(Kind::Share, &["cloud", "atlas"]),
            "urn:accelfed:CESNET-MCC:share:cloud/atlas"
        );
        assert_eq!(ids.id(Kind::Site, &[]), "urn:accelfed:CESNET-MCC:site:");
        let odd = Ids::new(&SiteName::new("Ü site").unwrap()).id(Kind::Image, &["a:b/c"]);
        assert_eq!(odd, "urn:accelfed:%C3%9C%20site:image:a%3Ab%2Fc");
    }

    #[test]
    fn a_slash_inside_a_local_id_cannot_collide_with_the_service_separator() {
        let ids = Ids::new(&SiteName::new("S").unwrap());
        assert_ne!(
            ids.id(Kind::Share, &["a/b", "c"]),
            ids.id(Kind::Share, &["a", "b/c"])
        );
    }
}
