//! APEL interop: the spool's records as `APEL-accelerator-message` v0.1 messages for EGI's
//! accounting repository. Rendering (fields, ASCII, the 1,000-record and byte limits) is the pure
//! [`accelfed_schemas::render::apel`]; this module does the IO around it.
//!
//! * `config.rs`: `[accounting.apel]`, the export's settings in the site's file.
//! * [`dirq`]: an outgoing directory in the layout of python-dirq's `QueueSimple`, which is what a
//!   stock `ssmsend` reads (its `[messaging] path`).
//! * [`ams`]: ARGO AMS over its REST API (`POST .../topics/{topic}:publish`).
//! * [`safety`]: every record checked against what APEL's loader and MySQL database accept
//!   (pure; the meter calls it too), so one bad record is refused alone.
//! * [`sign`]: messages signed as SSM signs them (`openssl smime -sign -text`), for AMS.
//! * [`envelope`]: the message budget that keeps the signed, base64-encoded AMS request under
//!   AMS's limit.
//! * [`watermark`]: the last spool version exported, kept in a small file beside the spool.
//! * [`export`]: what changed in the spool since the watermark, rendered, delivered, and only then
//!   the watermark moved. A crash in between re-delivers some records on the next run; APEL keys
//!   accelerator records by (site, record type, record, model, year, month), so a re-sent record
//!   replaces the one it has instead of adding to it.

mod ams;
mod config;
mod dirq;
pub mod envelope;
mod error;
mod export;
pub mod safety;
mod sign;
mod watermark;

pub use ams::{AmsClient, AmsSettings};
pub use config::{AmsConfig, ApelCharset, ApelConfig, DirqConfig};
pub use dirq::DirqQueue;
pub use error::ApelError;
pub use export::{Destination, ExportOptions, ExportReport, Selection, export};
pub use sign::Signer;
pub use watermark::Watermark;
