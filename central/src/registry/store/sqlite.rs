//! The SQLite store. Calls block, so they run on tokio's blocking pool, behind one mutex (pushes are
//! rare: one per site per provider run; queries never read the database).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use accelfed_accounting::database::{MigrationSet, migrate};
use rusqlite::{Connection, params};

use super::{HistoryEntry, Keep, PRUNE, StoreError, StoredDocument, from_millis, millis};

/// The registry's migrations, for the store layer's one runner. Adding one: one entry at the end
/// of the list.
const SET: MigrationSet = MigrationSet {
    owner: "registry store",
    table: "registry_schema_migrations",
    lock: 0,
    // `IF NOT EXISTS`: a file made before the registry had migrations holds these tables already
    // (and its documents), and adopts them as version 1.
    migrations: &[(1, SCHEMA)],
};

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS registry_latest (
        site        TEXT    PRIMARY KEY,
        received_at INTEGER NOT NULL,
        document    TEXT    NOT NULL
    );
    CREATE TABLE IF NOT EXISTS registry_history (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        site        TEXT    NOT NULL,
        received_at INTEGER NOT NULL,
        document    TEXT    NOT NULL
    );
    CREATE INDEX IF NOT EXISTS registry_history_by_site ON registry_history (site, id);";

#[derive(Debug, Clone)]
pub struct SqliteStore {
    path: PathBuf,
    conn: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let path = path.to_path_buf();
        let opened = path.clone();
        let (conn, found) = tokio::task::spawn_blocking(move || {
            accelfed_accounting::private_file::create_with_mode(
                &opened,
                accelfed_accounting::private_file::REPOSITORY_MODE,
            );
            let mut conn = Connection::open(&opened)?;
            let wait = std::time::Duration::from_secs(10);
            conn.busy_timeout(wait)?;
            // Outside the migration's transaction: the journal mode cannot change inside one.
            accelfed_accounting::database::wal::switch(&conn, wait)?;
            let found = migrate::sqlite(&mut conn, &SET)?;
            Ok::<_, rusqlite::Error>((conn, found))
        })
        .await
        .map_err(|e| StoreError::Worker(e.to_string()))?
        .map_err(|source| StoreError::Sqlite {
            path: path.display().to_string(),
            source,
        })?;
        let conn = match found {
            Ok(found) if found < SET.latest() => {
                tracing::info!(path = %path.display(), from = found, to = SET.latest(), "migrated registry schema");
                conn
            }
            Ok(_) => conn,
            Err(found) => {
                return Err(StoreError::SchemaTooNew {
                    location: path.display().to_string(),
                    found,
                    known: SET.latest(),
                });
            }
        };
        Ok(Self {
            path,
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    pub async fn put(&self, document: StoredDocument, keep: Keep) -> Result<(), StoreError> {
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let at = millis(document.received_at);
            tx.execute(
                "INSERT INTO registry_history (site, received_at, document) VALUES (?1, ?2, ?3)",
                params![document.site, at, document.document],
            )?;
            tx.execute(
                "INSERT INTO registry_latest (site, received_at, document) VALUES (?1, ?2, ?3)
                 ON CONFLICT (site) DO UPDATE SET received_at = excluded.received_at,
                                                  document = excluded.document",
                params![document.site, at, document.document],
            )?;
            tx.execute(
                PRUNE,
                params![
                    document.site,
                    i64::from(keep.documents.max(1)),
                    i64::try_from(keep.bytes).unwrap_or(i64::MAX)
                ],
            )?;
            tx.commit()
        })
        .await
    }

    pub async fn latest(&self) -> Result<Vec<StoredDocument>, StoreError> {
        self.documents("SELECT site, received_at, document FROM registry_latest ORDER BY site")
            .await
    }

    /// The documents `query` selects as (site, received_at, document).
    async fn documents(&self, query: &'static str) -> Result<Vec<StoredDocument>, StoreError> {
        self.run(move |conn| {
            let mut statement = conn.prepare(query)?;
            let rows = statement.query_map([], |row| {
                Ok(StoredDocument {
                    site: row.get(0)?,
                    received_at: from_millis(row.get(1)?),
                    document: row.get(2)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    pub async fn history(&self, site: String) -> Result<Vec<HistoryEntry>, StoreError> {
        self.run(move |conn| {
            // octet_length reads the size from the row's header, not the document itself (which
            // may be megabytes, times keep_history): the history is served to anyone who asks.
            let mut statement = conn.prepare(
                "SELECT received_at, octet_length(document) FROM registry_history
                 WHERE site = ?1 ORDER BY id DESC",
            )?;
            let rows = statement.query_map([site], |row| {
                Ok(HistoryEntry {
                    received_at: from_millis(row.get(0)?),
                    bytes: u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0),
                })
            })?;
            rows.collect()
        })
        .await
    }

    pub async fn history_documents(&self) -> Result<Vec<StoredDocument>, StoreError> {
        self.documents(super::HISTORY_DOCUMENTS).await
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            // A failed transaction rolls back on drop, so a poisoned lock is safe to reuse.
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut guard)
        })
        .await
        .map_err(|e| StoreError::Worker(e.to_string()))?
        .map_err(|source| StoreError::Sqlite {
            path: self.path.display().to_string(),
            source,
        })
    }
}
