//! The GPU vocabulary shared by providers, meters, renderers and the registry.

mod capacity;
mod count;
mod memory;
mod model;
mod sharing;
mod spec;

pub use capacity::{Capacity, CapacityError};
pub use count::{CountError, GpuCount};
pub use memory::{MemoryError, MemoryMb};
pub use model::GpuModel;
pub use sharing::Sharing;
pub use spec::{AcceleratorType, GpuSpec, Virtualization};
