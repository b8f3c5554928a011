//! `accelfed serve`: the central services of a federation.
//!
//! The gRPC ingest of usage records (`ingest.rs`) over TLS with per-site bearer tokens
//! (`auth.rs`), the `/metrics` endpoint (`metrics.rs`), the configuration file (`config/`), and the
//! federation registry (`registry/`: pushes, the query API, LDAP sync, the web page), the accept
//! loop every port shares (`listen/`), and the composition root (`run.rs`). Daemons take their
//! listener and a shutdown future as arguments so tests can bind port 0.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod auth;
pub mod batch_limits;
mod certificate;
pub mod config;
pub mod descriptors;
pub mod distinct_caps;
pub mod ingest;
pub mod listen;
pub mod metrics;
pub mod registry;
pub mod run;
pub mod serve;

pub use config::{CentralConfig, CentralConfigError, LoadedCentral};
pub use run::{Addresses, Listeners, RunError, run};
pub use serve::{ServeError, ServeSettings, serve};
