//! The closed sets a usage record draws from: what kind of thing used the GPU, and which meter saw it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// APEL's AssociatedRecordType: what `AssociatedRecord` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordType {
    /// A VM (`AssociatedRecord` is its UUID) or a Kubernetes pod
    /// (`<cluster>/<namespace>/<pod uid>`): cloud-style usage, measured by presence.
    Cloud,
    /// A batch job, `<cluster>:<jobid>`.
    Job,
}

impl RecordType {
    /// The APEL spelling, also used in the record id.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cloud => "cloud",
            Self::Job => "job",
        }
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which meter produced a record. Not part of the record's identity: the same VM seen by a
/// different meter is still the same usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Openstack,
    Kubernetes,
    Slurm,
    /// Usage declared in the static site description (a dedicated node handed to one VO).
    Static,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Openstack => "openstack",
            Self::Kubernetes => "kubernetes",
            Self::Slurm => "slurm",
            Self::Static => "static",
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
