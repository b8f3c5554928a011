//! The workspace's dependency-light test kit: what more than one crate's tests need, without any
//! crate of the service under test, so a provider or accounting test does not compile the central
//! service. The end-to-end harness (the central service in-process or as a process, site folders
//! that meter and ship) is `accelfed-tests`, built on this.
//!
//! * [`apel_record`]: APEL's accelerator record v0.1 rules, to hold exported messages against;
//! * [`pki`]: the test CA and server certificates (rcgen);
//! * [`postgres`]: a private PostgreSQL database per test (and the benchmarks' server);
//! * [`fake_kubernetes`] and [`fake_openstack`]: local servers that answer like those APIs from the
//!   recorded fixtures under `provider/tests/fixtures/`, on [`fake_http`]'s accept loop;
//! * real components: [`slapd`], [`slurm`], [`openstack`] (installed through [`apt`] off CI), each
//!   started as a process group of its own and stopped as one ([`owned`]), a panicking test included,
//!   on ports held for them until they listen ([`port`]);
//! * [`nvml_stub`]: a stub `libnvidia-ml.so.1` (C, built with `cc` at test time) for the node agent;
//! * [`tls_client`]: a raw TLS client trusting the test CA, and HTTP/2 frames to send by hand;
//! * with the `bench-support` feature, [`bench_records`]: the repository benchmarks' records.
//!
//! Crates use it as a dev-dependency only. Its helpers take and return plain data (paths, strings,
//! the schemas' types), never a type of the crate under test, which a test of that crate would see
//! as another crate's.

pub mod apel_record;
pub mod apt;
#[cfg(feature = "bench-support")]
pub mod bench_records;
pub mod fake_http;
pub mod fake_kubernetes;
pub mod fake_openstack;
pub mod nvml_stub;
pub mod openstack;
pub mod owned;
pub mod pki;
pub mod port;
pub mod postgres;
pub mod slapd;
pub mod slurm;
pub mod tls_client;

pub use slapd::{Found, LoadReport, Slapd, SlapdError};
pub use slurm::{HarnessError as SlurmHarnessError, Slurm};
