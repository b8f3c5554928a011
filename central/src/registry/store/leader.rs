//! Which instance does a job that must run on one at a time (the LDAP sync, which would otherwise
//! have two instances plan deletions against each other): a PostgreSQL session advisory lock
//! (`pg_try_advisory_lock`), held by a connection of its own for as long as the job runs. The
//! connection is closed, never returned to the pool, when the job ends, so the lock ends with it,
//! and with the process if it dies (the server ends the session). On SQLite this instance is the
//! only one.

use accelfed_accounting::database::PooledClient;
use accelfed_accounting::database::postgres::close;

/// The lock key of the LDAP sync (fixed; the store's other keys are 7166001 and the repository's).
pub const LDAP_SYNC: i64 = 7_166_002;

/// The right to run a job until dropped.
#[derive(Debug)]
pub enum Leadership {
    /// SQLite: no other instance shares the store.
    Alone,
    /// The session holding the PostgreSQL lock.
    Locked(Option<Box<PooledClient>>),
}

impl Drop for Leadership {
    fn drop(&mut self) {
        if let Self::Locked(client) = self
            && let Some(client) = client.take()
        {
            close(*client);
        }
    }
}
