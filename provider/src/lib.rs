//! Providers: read a site's middleware into a [`SiteSnapshot`].
//!
//! Each middleware is a folder (`static_site/`; OpenStack, Kubernetes and Slurm follow) with a
//! `config.rs` (its part of the configuration file) and a pure mapping to the GLUE2 model. [`config`]
//! holds the whole configuration file; [`gather`] runs every configured provider and assembles the
//! site's snapshot.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod config;
mod gather;
pub mod kubernetes;
mod observe;
pub mod openstack;
pub mod slurm;
pub mod static_site;

pub use gather::{Gathered, ProviderFailure, gather};
pub use observe::{Observed, observe};
