//! Switching a SQLite file to write-ahead logging, for every SQLite file the project keeps: the
//! site's spool, the central repository and the registry's store.
//!
//! `PRAGMA journal_mode = WAL` on a new file takes a lock that SQLite does not wait for through
//! the busy handler: of several connections switching the same new file at once (two processes
//! started together, a repository's writer and reader, two instances opening one file), the
//! loser is answered "database is locked" at once, whatever `busy_timeout` says. [`switch`]
//! retries that answer until its deadline, as the busy handler would.

use std::time::{Duration, Instant};

use rusqlite::Connection;

/// Between two tries: short, as the winner's switch takes a few milliseconds.
const PAUSE: Duration = Duration::from_millis(5);

/// `PRAGMA journal_mode = WAL` on `conn`, retried while the file is busy for at most `wait`;
/// the journal mode SQLite answers (`wal`, or `memory` for an in-memory database). Not inside a
/// transaction: SQLite cannot change the journal mode within one.
pub fn switch(conn: &Connection, wait: Duration) -> rusqlite::Result<String> {
    let deadline = Instant::now() + wait;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)) {
            Err(rusqlite::Error::SqliteFailure(failure, _))
                if failure.code == rusqlite::ErrorCode::DatabaseBusy
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(PAUSE);
            }
            answered => return answered,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_switching_a_new_file_at_once_all_get_wal() {
        for round in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("new.sqlite");
            let switchers: Vec<_> = (0..6)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || {
                        let conn = Connection::open(&path)?;
                        switch(&conn, Duration::from_secs(10))
                    })
                })
                .collect();
            for switcher in switchers {
                let mode = switcher.join().unwrap();
                assert_eq!(
                    mode.as_deref().map(str::to_ascii_lowercase).ok(),
                    Some("wal".to_owned()),
                    "round {round}: {mode:?}"
                );
            }
        }
    }
}
