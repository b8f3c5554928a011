//! Providers: read a site's middleware into a [`SiteSnapshot`].
//!
//! Each middleware is a folder (`openstack/`, `slurm/`, `kubernetes/`, `static_site/`) with the same
//! files for the same roles: `config.rs` (its table of the configuration file), `client.rs` or
//! `client/` (the only IO), `inventory.rs` (what one read lists), `map.rs` (listing -> GLUE2),
//! `meter.rs` (usage observations) and `mod.rs` (the entry point, implementing the backend contract
//! of `backend.rs`). [`config`] holds the configuration file; [`gather`] and [`observe`] run every
//! configured backend through [`config::ProviderConfig`], one loop each; `json/` holds the fast
//! JSON readers the backends share.

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod backend;
mod backend_error;
pub mod config;
mod gather;
mod json;
pub mod kubernetes;
mod observe;
pub mod openstack;
pub mod slurm;
pub mod static_site;

pub use backend::Metering;
pub use backend_error::{BackendError, Retry};
pub use gather::{Gathered, ProviderFailure, gather};
pub use observe::{Observed, Uncounted, observe};
