//! The central store layer: the one owner of the central service's database, used by the
//! accounting repository ([`crate::repository`]) and the registry's document store
//! (`accelfed_central::registry::store`).
//!
//! * [`postgres`]: where and how to connect ([`accelfed_net::postgres`]: TLS with libpq's
//!   `sslmode` and `sslrootcert`), single connections and the pool ([`PostgresPool`]), which
//!   replaces a closed connection with a new one when it is next taken, so a database restart
//!   costs the calls in flight, never a `serve` restart.
//! * [`migrate`]: the one versioned migration runner, for PostgreSQL and SQLite: each owner of
//!   tables (the repository, the registry) lists its migrations as a [`MigrationSet`], recorded in
//!   its own version table, and the runner applies the ones a database lacks, under a lock, in
//!   one transaction. Adding a migration is adding one entry at the end of its set's list.
//! * [`reachable`]: at start, a database that does not answer yet is waited for (up to a minute)
//!   rather than ending `serve`.
//! * [`start`]: `serve`'s opening of the repository, waiting, connecting and migrating as one
//!   step, retried within the wait when the database goes away meanwhile.
//! * [`wal`]: the switch of a SQLite file to WAL, retried where SQLite does not wait (the spool
//!   uses it too).

pub mod migrate;
pub mod postgres;
pub mod reachable;
pub mod start;
pub mod wal;

pub use migrate::MigrationSet;
pub use postgres::{ConnectError, PooledClient, PostgresPool};
