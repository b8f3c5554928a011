//! The central accounting repository: usage records from every site, on SQLite (the embedded
//! default) or PostgreSQL, with summaries per (site, VO, model, month), and per user beside them,
//! kept up to date on ingest so reports never scan raw records.

mod backend;
mod bulk;
mod capacity;
pub mod contacts;
mod error;
pub mod floor;
mod generation;
pub mod listing;
mod period;
mod plan;
mod postgres;
/// The advisory lock the PostgreSQL repository's migrations hold (tests hold it to stop them).
#[cfg(test)]
pub(crate) use postgres::schema::MIGRATION_LOCK as POSTGRES_MIGRATION_LOCK;
pub mod postgres_message;
mod query;
mod row;
mod screen;
mod sqlite;
mod sync_count;
mod totals;

pub use backend::{DEFAULT_MAX_BATCH, IngestOptions, Repository};
pub use capacity::{CapacityBreach, CapacityCheck, Installed};
pub use error::RepositoryError;
pub use listing::{ListedRecord, RecordPage};
pub use period::{Period, PeriodError};
pub use postgres::PostgresRepository;
pub use query::{Dimension, GroupKey, SummaryFilter, SummaryQuery, SummaryRow};
pub use sqlite::SqliteRepository;
pub use sync_count::SyncCount;
pub use totals::{SummaryKey, Totals, UserKey};
