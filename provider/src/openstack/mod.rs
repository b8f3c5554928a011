//! The OpenStack provider and meter: reads a cloud's flavors, Placement resource providers, projects,
//! servers and images through its APIs, and yields the cloud's GLUE2 service and per-VM GPU usage.
//!
//! `config.rs` is `[[openstack]]`; `auth.rs` resolves credentials from `clouds.yaml` and `OS_*`;
//! `client/` is the only IO; `api.rs` declares the API objects (`server.rs` and `server_specs.rs`
//! read servers compactly); the rest is pure: `conventions.rs`
//! and `detect.rs` read GPUs from flavor extra specs, `capacity.rs` reads them from Placement,
//! `vo.rs` maps projects to VOs, `server_pass.rs` reads each server's GPUs and usage once, `map.rs`
//! assembles the service, `vgpu.rs` reads how many vGPUs
//! one physical GPU holds, `usage.rs` turns servers into GPU usage intervals and `meter.rs` those into usage observations.

pub mod api;
pub mod auth;
pub mod capacity;
pub mod client;
pub mod config;
pub mod conventions;
pub mod detect;
mod error;
mod json_scan;
pub mod map;
mod meter;
mod pci_ids;
mod provide;
mod server;
mod server_pass;
mod server_specs;
pub mod usage;
mod vgpu;
pub mod vo;

pub use capacity::{KindCapacity, ProviderState};
pub use client::Listing;
pub use config::{Convention, DeviceConfig, OpenstackConfig};
pub use conventions::FlavorGpu;
pub use detect::{Detection, Detector};
pub use error::OpenstackError;
pub use map::{CloudState, Mapped, map, map_usage};
pub use meter::{observations, observe};
pub use provide::{Provided, Used, provide, usage};
pub use usage::VmUsage;
