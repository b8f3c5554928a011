//! The test harness of the workspace: every test and benchmark takes from here what more than one
//! test file needs, and nothing of it is included by `#[path]`.
//!
//! * [`apel_record`]: APEL's accelerator record v0.1 rules, to hold exported messages against;
//! * [`pki`]: the test CA and server certificates (rcgen);
//! * [`central`]: the central service in-process on free ports, `accelfed serve` as a process where
//!   the process is the point, central.toml, site folders that meter and ship, the `accelfed` binary;
//! * [`postgres`]: a private PostgreSQL database per test (and the benchmarks' server);
//! * [`fake_kubernetes`] and [`fake_openstack`]: local servers that answer like those APIs from the
//!   recorded fixtures under `provider/tests/fixtures/`, on [`fake_http`]'s accept loop;
//! * real components: [`slapd`], [`slurm`], [`openstack`] (installed through [`apt`] off CI), each
//!   started as a process group of its own and stopped as one ([`owned`]), a panicking test included;
//! * with the `bench-support` feature, [`bench_records`]: the repository benchmarks' records.
//!
//! Crates use it as a dev-dependency only. Its helpers take and return plain data (paths, strings,
//! the schemas' types), never a type of the crate under test, which a test of that crate would see
//! as another crate's.

pub mod apel_record;
pub mod apt;
#[cfg(feature = "bench-support")]
pub mod bench_records;
pub mod central;
pub mod fake_http;
pub mod fake_kubernetes;
pub mod fake_openstack;
pub mod openstack;
pub mod owned;
pub mod pki;
pub mod postgres;
pub mod slapd;
pub mod slurm;

pub use slapd::{Found, LoadReport, Slapd, SlapdError};
pub use slurm::{HarnessError as SlurmHarnessError, Slurm};
