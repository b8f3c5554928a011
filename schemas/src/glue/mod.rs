//! The GLUE2 entities a site publishes, as one tree rooted at the site ([`SiteSnapshot`]).
//!
//! Providers build the tree; [`crate::render`] turns it into documents. Identifiers are not stored
//! here: entities carry a [`LocalId`](crate::names::LocalId) and [`ids`] derives the globally unique
//! GLUE2 ID from the site, the entity kind and the local id, so every rendering agrees on them.

mod build;
mod capacity;
mod cloud;
mod computing;
pub mod entity;
pub mod from_json;
pub mod ids;
mod os_family;
pub mod physical;
#[cfg(any(test, feature = "test-support"))]
pub mod sample;
mod site;
pub mod validate;

pub use capacity::{
    AcceleratorCapacity, SITE_TOTAL_PREFIX, physical, physical_capacity, share, share_text,
};
pub use cloud::{CloudManager, CloudService, CloudShare, Image, InstanceType, VirtualAccelerator};
pub use computing::{
    AcceleratorEnvironment, ComputingManager, ComputingService, ComputingShare,
    ExecutionEnvironment, ShareSlots,
};
pub use os_family::{OsFamily, OsFamilyError};
pub use site::{AdminDomain, Contact, Endpoint, Location, Service, SiteSnapshot, VoAccess};
pub use validate::SnapshotError;
