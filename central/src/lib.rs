//! `accelfed serve`: the central services of a federation.
//!
//! The gRPC ingest of usage records (`ingest.rs`) over TLS with per-site bearer tokens
//! (`auth.rs`), the `/metrics` endpoint (`metrics/`), the configuration file (`config/`), and the
//! federation registry (`registry/`: pushes, the query API, LDAP sync, the web page), the accept
//! loop every port shares (`listen/`), and the composition root (`run.rs`). Daemons take their
//! listener and a shutdown future as arguments so tests can bind port 0.

#![cfg_attr(test, allow(clippy::unwrap_used))]

// The front door (issue #29): what the binary and the test harness need, and nothing that would
// let a test or a benchmark assemble part of the service without `run`'s listeners, limits and
// authentication: tests and benchmarks outside the crate start the whole service through `run`
// (the harness's `accelfed_tests::central::Server`). Tests that check a part alone live in the
// crate (`src/tests`, and the `tests` module beside each part).
pub use auth::{TokenHash, new_token};
pub use config::{CentralConfig, CentralConfigError, ListenConfig, LoadedCentral};
pub use descriptors::ensure as ensure_descriptors;
// The push checks, as `PUT /registry/v1/document` and `accelfed validate --document` run them
// (the fuzz targets hold them to their properties).
pub use registry::check::{Checker, Rejection as PushRejection};
pub use registry::config::RegistryConfig;
pub use registry::duplicate_keys::{DuplicateKey, first_duplicate as first_duplicate_key};
pub use registry::ldap::query::{DEFAULT_BASE as DEFAULT_LDAP_BASE, query as ldap_query};
pub use registry::paging::{MAX_PAGE, MAX_PER_PAGE};
pub use run::{Addresses, Listeners, RunError, check, run, run_checked};

mod access;
mod auth;
mod batch_limits;
pub mod build_info;
mod certificate;
mod config;
mod descriptors;
mod distinct_caps;
mod ingest;
mod listen;
mod metrics;
mod registry;
mod reload;
mod report_api;
mod run;
mod serve;
#[cfg(test)]
mod tests;
