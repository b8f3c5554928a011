//! The GPU vocabulary shared by providers, meters, renderers and the registry.

mod capacity;
pub mod catalog;
mod count;
mod memory;
mod mig;
mod model;
mod pci;
mod sharing;
mod spec;
pub mod vendors;
pub mod vgpu;

pub use capacity::{Capacity, CapacityError};
pub use count::{CountError, GpuCount};
pub use memory::{MemoryError, MemoryMb};
pub use mig::{MigBasis, mig_sharing};
pub use model::{GpuModel, Recognised};
pub use pci::PciId;
pub use sharing::Sharing;
pub use spec::{AcceleratorType, GpuSpec, Virtualization};
