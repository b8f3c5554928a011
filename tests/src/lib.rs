//! The harness that starts real components for end-to-end tests.

pub mod openstack;
pub mod slapd;
pub mod slurm;

pub use slapd::{Found, LoadReport, Slapd, SlapdError};
pub use slurm::{HarnessError as SlurmHarnessError, Slurm};
