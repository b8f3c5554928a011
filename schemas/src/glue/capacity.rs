//! GPU capacity of one accelerator kind within a manager or a share. The four GLUE 2.1 classes
//! ComputingManagerAccelerator, ComputingShareAccelerator, CloudComputingManagerAccelerator and
//! CloudComputingShareAccelerator carry the same facts, so they share one type.

use serde::Serialize;

use crate::gpu::{Capacity, GpuCount, GpuSpec};
use crate::names::LocalId;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceleratorCapacity {
    pub local_id: LocalId,
    pub gpu: GpuSpec,
    pub capacity: Capacity,
    /// The most one job or VM may get, where a share limits it.
    pub max_per_job: Option<GpuCount>,
}
