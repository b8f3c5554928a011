//! The SQLite backend: one file, nothing to set up. SQLite calls block, so they run on tokio's
//! blocking pool. SQLite has one writer at a time, so the writer is behind a mutex and batches
//! queue; reads take any free connection of a pool of readers (WAL mode: readers wait neither for
//! the writer nor for each other), so reports run side by side and while a batch is written.

mod contacts;
pub(crate) mod ingest;
mod read;
pub(crate) mod schema;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use deadpool::unmanaged::Pool;
use rusqlite::Connection;

use super::capacity::Installed;
use super::error::RepositoryError;
use super::period::Period;
use super::query::{SummaryQuery, SummaryRow};
use super::row::RecordRow;
use super::sync_count::SyncCount;
use crate::wire::Outcome;

/// A repository in one SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteRepository {
    path: PathBuf,
    writer: Arc<Mutex<Connection>>,
    readers: Pool<Connection>,
}

/// How many reader connections a repository opens: one per core the process may use, at least two
/// (a report never waits for a sync count) and at most eight (each keeps its own page cache, up to
/// 64 MiB: `schema::configure`).
fn reader_count() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

impl SqliteRepository {
    /// Opens (creating if needed) the file and brings its schema up to date.
    pub async fn open(path: &Path) -> Result<Self, RepositoryError> {
        let path = path.to_path_buf();
        let location = path.display().to_string();
        let task_path = path.clone();
        tokio::task::spawn_blocking(move || open_blocking(&task_path))
            .await
            .map_err(|e| RepositoryError::Worker {
                database: "SQLite",
                reason: e.to_string(),
            })?
            .map_err(|source| match source {
                OpenError::Access(message) => RepositoryError::Access {
                    path: location.clone(),
                    message,
                },
                OpenError::Sqlite(source) => match crate::access::explain(&path, &source) {
                    Some(cause) => RepositoryError::Access {
                        path: location.clone(),
                        message: format!("{source}: {cause}"),
                    },
                    None => RepositoryError::Sqlite {
                        path: location.clone(),
                        source,
                    },
                },
                OpenError::TooNew(found) => RepositoryError::SchemaTooNew {
                    location: location.clone(),
                    found,
                    known: schema::LATEST,
                },
            })
            .map(|(writer, readers)| Self {
                path,
                writer: Arc::new(Mutex::new(writer)),
                readers: Pool::from(readers),
            })
    }

    /// Opens an existing file read-only after checking it holds this schema (see
    /// [`super::Repository::open_read_only`]). Writes through it fail.
    pub async fn open_read_only(path: &Path) -> Result<Self, RepositoryError> {
        let path = path.to_path_buf();
        let task_path = path.clone();
        let (conn, found) = tokio::task::spawn_blocking(move || schema::open_existing(&task_path))
            .await
            .map_err(|e| RepositoryError::Worker {
                database: "SQLite",
                reason: e.to_string(),
            })??;
        if found < schema::LATEST {
            // An accelfed repository of an older schema: brought up to date as `serve` would,
            // since this program's queries read the newer columns.
            drop(conn);
            return Self::open(&path).await;
        }
        // One reader (`accelfed report` asks one question); the writer handle is a second
        // read-only connection, through which writes fail.
        let again = path.clone();
        let (writer, _) = tokio::task::spawn_blocking(move || schema::open_existing(&again))
            .await
            .map_err(|e| RepositoryError::Worker {
                database: "SQLite",
                reason: e.to_string(),
            })??;
        Ok(Self {
            path,
            writer: Arc::new(Mutex::new(writer)),
            readers: Pool::from(vec![conn]),
        })
    }

    /// Stores checked rows in one transaction; see [`super::plan`] for the replacement rule.
    pub(crate) async fn ingest_rows(
        &self,
        candidates: Vec<(usize, RecordRow)>,
    ) -> Result<Vec<(usize, Outcome)>, RepositoryError> {
        self.run(&self.writer, move |conn| ingest::ingest(conn, candidates))
            .await
    }

    /// The report generation (`repository/generation.rs`).
    pub async fn report_generation(&self) -> Result<i64, RepositoryError> {
        self.read(read::generation).await
    }

    /// Totals from the summary table.
    pub async fn summaries(&self, query: SummaryQuery) -> Result<Vec<SummaryRow>, RepositoryError> {
        self.read(move |conn| read::summaries(conn, &query)).await
    }

    /// Installed GPUs per (site, model, month), as records carry them.
    pub async fn installed(&self) -> Result<Vec<Installed>, RepositoryError> {
        self.read(read::installed).await
    }

    /// Records held per month for one site.
    pub async fn sync_counts(&self, site: String) -> Result<Vec<SyncCount>, RepositoryError> {
        self.read(move |conn| read::sync_counts(conn, &site)).await
    }

    /// The distinct users `site` reported in `period`.
    pub async fn users(
        &self,
        site: String,
        period: Period,
    ) -> Result<Vec<String>, RepositoryError> {
        self.read(move |conn| read::users(conn, &site, period))
            .await
    }

    /// One page of `site`'s records.
    pub(crate) async fn site_records(
        &self,
        site: String,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<super::row::RecordRow>, RepositoryError> {
        self.read(move |conn| read::site_records(conn, &site, limit, offset))
            .await
    }

    /// Runs `work` on the blocking pool with a reader connection, waiting for one to be free.
    async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, RepositoryError> {
        let worker = |reason: String| RepositoryError::Worker {
            database: "SQLite",
            reason,
        };
        // The pool is never closed and waits without a timeout: `get` fails only if it were.
        let mut conn = self
            .readers
            .get()
            .await
            .map_err(|e| worker(format!("no reader connection: {e}")))?;
        // The connection goes back to the pool when the work ends, even if the caller stopped
        // waiting for it.
        let result = tokio::task::spawn_blocking(move || work(&mut conn))
            .await
            .map_err(|e| worker(e.to_string()))?;
        result.map_err(|source| RepositoryError::Sqlite {
            path: self.path.display().to_string(),
            source,
        })
    }

    /// Runs `work` on the blocking pool with the connection locked.
    async fn run<T: Send + 'static>(
        &self,
        conn: &Arc<Mutex<Connection>>,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, RepositoryError> {
        let conn = Arc::clone(conn);
        let result = tokio::task::spawn_blocking(move || {
            // A panic while holding the lock leaves SQLite's own state consistent (the transaction
            // rolls back on drop), so a poisoned mutex is safe to reuse.
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            work(&mut guard)
        })
        .await
        .map_err(|e| RepositoryError::Worker {
            database: "SQLite",
            reason: e.to_string(),
        })?;
        result.map_err(|source| RepositoryError::Sqlite {
            path: self.path.display().to_string(),
            source,
        })
    }
}

enum OpenError {
    Access(String),
    Sqlite(rusqlite::Error),
    TooNew(i64),
}

fn open_blocking(path: &Path) -> Result<(Connection, Vec<Connection>), OpenError> {
    // Owner and mode first (`crate::access`): root opening the service user's database for
    // writing would leave it root's `-wal` and `-shm`, and a file `serve` cannot write fails
    // with SQLite's bare "unable to open database file" otherwise. A missing folder is named
    // here too (SQLite creates no folders).
    crate::access::check_writable(path).map_err(OpenError::Access)?;
    crate::private_file::create_with_mode(path, crate::private_file::REPOSITORY_MODE);
    let mut writer = Connection::open(path).map_err(OpenError::Sqlite)?;
    schema::configure(&writer).map_err(OpenError::Sqlite)?;
    match schema::migrate(&mut writer).map_err(OpenError::Sqlite)? {
        Ok(found) if found < schema::LATEST => {
            tracing::info!(path = %path.display(), from = found, to = schema::LATEST, "migrated repository schema");
        }
        Ok(_) => {}
        Err(found) => return Err(OpenError::TooNew(found)),
    }
    let readers = (0..reader_count())
        .map(|_| {
            let reader = Connection::open(path)?;
            schema::configure(&reader)?;
            Ok(reader)
        })
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(OpenError::Sqlite)?;
    Ok((writer, readers))
}
