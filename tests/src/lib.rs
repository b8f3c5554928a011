//! The end-to-end harness of the workspace, on the dependency-light kit (`accelfed-testkit`, whose
//! modules are re-exported here so an end-to-end test takes everything from one place):
//!
//! * [`browser`]: headless Chromium on the service's web page, and the service it reads;
//! * [`central`]: the central service in-process on free ports, `accelfed serve` as a process where
//!   the process is the point, central.toml, site folders that meter and ship, the `accelfed` binary;
//! * the kit: [`pki`], [`postgres`], [`fake_kubernetes`], [`fake_openstack`], [`slapd`], [`slurm`],
//!   [`openstack`], [`owned`], [`apel_record`], [`tls_client`] and, with `bench-support`,
//!   [`bench_records`].
//!
//! Crates use it as a dev-dependency only, and only where a test needs the whole service; a test
//! of one crate that needs a fake API, a certificate or a database takes `accelfed-testkit`.

pub mod browser;
pub mod central;

#[cfg(feature = "bench-support")]
pub use accelfed_testkit::bench_records;
pub use accelfed_testkit::{
    Found, LoadReport, Slapd, SlapdError, Slurm, SlurmHarnessError, apel_record, apt, fake_http,
    fake_kubernetes, fake_openstack, openstack, owned, pki, postgres, slapd, slurm, tls_client,
};
