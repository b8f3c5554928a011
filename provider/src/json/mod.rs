//! Fast JSON reading shared by the backends, one idiom per file. The middleware answers are the
//! largest inputs accelfed reads (100,000 servers, 150,000 pods, millions of Slurm jobs), so each
//! backend reads them with one of these rather than building `serde_json::Value`s:
//!
//! * [`scan`]: a forward-only cursor over bytes that finds a few keys and skips the rest by
//!   structure (OpenStack's server pages);
//! * [`frame`]: a window over a stream, each value parsed with `from_slice` (Slurm's job lists,
//!   whatever their size);
//! * [`text`]: strings borrowed from the page being read (Kubernetes' pod lists, deserialized
//!   item by item into lean borrowed types).
//!
//! What is specific to one middleware's format (Slurm's version-dependent number shapes,
//! Kubernetes' quantity strings) stays in that backend's folder.

pub mod frame;
pub mod scan;
pub mod text;

pub use frame::{AHEAD, FrameError, Framer};
pub use scan::{ScanError, Scanner};
pub use text::Str;
