//! The PostgreSQL backend, for federations that outgrow one machine: several `accelfed serve`
//! instances may share one database (per-site advisory locks keep their batches consistent), and
//! records are partitioned by month.
//!
//! tokio-postgres rather than sqlx: ingest needs binary `COPY` (a stream of bytes we build
//! ourselves, see `copy`), we write all SQL by hand anyway, and it brings fewer dependencies and no
//! compile-time database connection.

mod contacts;
pub(crate) mod copy;
pub(crate) mod deltas;
pub(crate) mod ingest;
mod read;
pub(crate) mod schema;

use std::collections::HashSet;
use std::sync::Arc;

use accelfed_net::postgres::PostgresTarget;
use tokio::runtime::Handle;
use tokio::sync::Mutex;
use tokio_postgres::Client;

use crate::database::postgres::{ConnectError, POOL_SIZE, PostgresPool, target};

use super::capacity::Installed;
use super::error::RepositoryError;
use super::period::Period;
use super::query::{SummaryQuery, SummaryRow};
use super::row::RecordRow;
use super::sync_count::SyncCount;
use crate::wire::Outcome;
/// The URL with every password replaced, safe for logs and error messages.
pub(crate) use accelfed_schemas::database_url::redact;

/// A repository in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresRepository {
    /// The URL without its password, for messages.
    location: String,
    /// Where the database is and how to reach it (TLS), for the writer's reconnects.
    target: Arc<PostgresTarget>,
    /// Ingest needs `&mut Client` for its transaction; batches on one instance queue here. A
    /// connection the server closed (a restart) is replaced when the next batch comes.
    writer: Arc<Mutex<ingest::Writer>>,
    /// The runtime of the writer connection's own thread (see [`writer_thread`]), where
    /// each batch's transaction runs; the thread ends when the last clone of the repository goes.
    writer_thread: Handle,
    _writer_thread_stop: Arc<tokio::sync::oneshot::Sender<()>>,
    /// Reports and sync counts take pooled connections, so they never wait for a batch.
    reader: PostgresPool,
    /// Months whose partition is known to exist (a cache: creation is idempotent).
    partitions: Arc<Mutex<HashSet<Period>>>,
    /// Sites whose last batch re-sent stored records: their next batch skips the all-new fast
    /// path, whose failed COPY would only be wasted work. A hint; losing it costs time, not data.
    resending: Arc<Mutex<HashSet<String>>>,
}

/// An error inside the backend, before the URL is attached.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PgFailure {
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    #[error("stored value out of range in {what}: {value}")]
    Corrupt { what: &'static str, value: String },
}

impl PostgresRepository {
    /// Connects (TLS as the URL's `sslmode` says, libpq's default `prefer` when it says none)
    /// and brings the schema up to date.
    pub async fn open(url: &str) -> Result<Self, RepositoryError> {
        let location = redact(url);
        let fail = |error| RepositoryError::Postgres {
            url: location.clone(),
            error,
        };
        let target = Arc::new(target(url).map_err(|e| connect_failure(&location, e))?);
        let (writer_thread, stop) = writer_thread();
        let mut writer = connect_on(&writer_thread, &target).await.map_err(fail)?;
        match schema::migrate(&mut writer).await.map_err(fail)? {
            Ok(found) if found < schema::LATEST => {
                tracing::info!(url = %location, from = found, to = schema::LATEST, "migrated repository schema");
            }
            Ok(_) => {}
            Err(found) => {
                return Err(RepositoryError::SchemaTooNew {
                    location,
                    found,
                    known: schema::LATEST,
                });
            }
        }
        let writer = ingest::Writer::new(writer).await.map_err(fail)?;
        let reader =
            PostgresPool::new(&target, POOL_SIZE).map_err(|e| connect_failure(&location, e))?;
        Ok(Self {
            location,
            target,
            writer: Arc::new(Mutex::new(writer)),
            writer_thread,
            _writer_thread_stop: Arc::new(stop),
            reader,
            partitions: Arc::default(),
            resending: Arc::default(),
        })
    }

    /// Stores checked rows of `site` in one transaction; see [`super::plan`] for the rule.
    pub(crate) async fn ingest_rows(
        &self,
        site: &str,
        candidates: Vec<(usize, RecordRow)>,
    ) -> Result<Vec<(usize, Outcome)>, RepositoryError> {
        // Prepared before the writer is taken, so batches are encoded while another is written.
        let try_fast_path = !self.resending.lock().await.contains(site);
        let wanted: HashSet<Period> = candidates.iter().map(|(_, r)| r.period).collect();
        let prepared = ingest::prepare(candidates, try_fast_path);
        let writer = Arc::clone(&self.writer);
        let partitions = Arc::clone(&self.partitions);
        let target = Arc::clone(&self.target);
        let owned_site = site.to_owned();
        let transaction = async move {
            let mut writer = writer.lock().await;
            if writer.client.is_closed() {
                // The server closed the last connection (a restart): this batch opens the next.
                tracing::info!("PostgreSQL writer connection was closed; reconnecting");
                *writer = ingest::Writer::new(connect(&target).await?).await?;
            }
            let missing: Vec<Period> = {
                let known = partitions.lock().await;
                let mut missing: Vec<Period> = wanted.difference(&known).copied().collect();
                missing.sort_unstable();
                missing
            };
            if !missing.is_empty() {
                schema::create_partitions(&mut writer.client, &missing).await?;
                partitions.lock().await.extend(missing);
            }
            ingest::ingest(&mut writer, &owned_site, prepared).await
        };
        // Every round trip of the transaction is answered on the writer's thread, which has
        // nothing else to do, instead of waiting for a busy worker of the service's runtime.
        let (outcomes, resent) = self
            .writer_thread
            .spawn(transaction)
            .await
            .map_err(|e| RepositoryError::Worker {
                database: "PostgreSQL",
                reason: e.to_string(),
            })?
            .map_err(|e| self.fail(e))?;
        let mut resending = self.resending.lock().await;
        if resent {
            resending.insert(site.to_owned());
        } else {
            resending.remove(site);
        }
        Ok(outcomes)
    }

    /// Totals from the summary table.
    pub async fn summaries(&self, query: SummaryQuery) -> Result<Vec<SummaryRow>, RepositoryError> {
        read::summaries(&**self.read_connection().await?, &query)
            .await
            .map_err(|e| self.fail(e))
    }

    /// The report generation (`repository/generation.rs`).
    pub async fn report_generation(&self) -> Result<i64, RepositoryError> {
        read::generation(&self.read_connection().await?)
            .await
            .map_err(|e| self.fail(e))
    }

    /// Installed GPUs per (site, model, month), as records carry them.
    pub async fn installed(&self) -> Result<Vec<Installed>, RepositoryError> {
        read::installed(&**self.read_connection().await?)
            .await
            .map_err(|e| self.fail(e))
    }

    /// Records held per month for one site.
    pub async fn sync_counts(&self, site: String) -> Result<Vec<SyncCount>, RepositoryError> {
        read::sync_counts(&**self.read_connection().await?, &site)
            .await
            .map_err(|e| self.fail(e))
    }

    /// The distinct users `site` reported in `period`.
    pub async fn users(
        &self,
        site: String,
        period: Period,
    ) -> Result<Vec<String>, RepositoryError> {
        read::users(&**self.read_connection().await?, &site, period)
            .await
            .map_err(|e| self.fail(e))
    }

    /// One page of `site`'s records.
    pub(crate) async fn site_records(
        &self,
        site: String,
        limit: i64,
        offset: i64,
    ) -> Result<Vec<super::row::RecordRow>, RepositoryError> {
        read::site_records(&**self.read_connection().await?, &site, limit, offset)
            .await
            .map_err(|e| self.fail(e))
    }

    /// A pooled connection for a read.
    async fn read_connection(&self) -> Result<deadpool_postgres::Object, RepositoryError> {
        self.reader
            .get()
            .await
            .map_err(|e| connect_failure(&self.location, e))
    }

    fn fail(&self, failure: PgFailure) -> RepositoryError {
        match failure {
            PgFailure::Postgres(error) => RepositoryError::Postgres {
                url: self.location.clone(),
                error,
            },
            PgFailure::Corrupt { what, value } => RepositoryError::Corrupt {
                location: self.location.clone(),
                what,
                value,
            },
        }
    }
}

/// The error of a connection that could not be had, with the URL (without its password).
fn connect_failure(location: &str, error: ConnectError) -> RepositoryError {
    match error {
        ConnectError::Postgres(error) => RepositoryError::Postgres {
            url: location.to_owned(),
            error,
        },
        ConnectError::Settings(reason) => RepositoryError::Settings {
            location: location.to_owned(),
            reason,
        },
        ConnectError::Pool(reason) => RepositoryError::Unavailable {
            location: location.to_owned(),
            reason,
        },
    }
}

/// One connection to the database `url` names, driven by the current runtime (the floor's bulk
/// loads).
pub(crate) async fn connect_url(url: &str) -> Result<Client, RepositoryError> {
    let location = redact(url);
    let target = target(url).map_err(|e| connect_failure(&location, e))?;
    connect(&target)
        .await
        .map_err(|error| RepositoryError::Postgres {
            url: location,
            error,
        })
}

async fn connect(target: &PostgresTarget) -> Result<Client, tokio_postgres::Error> {
    crate::database::postgres::connect(target).await
}

/// Connects on the writer's thread, so that its connection is driven there.
async fn connect_on(
    thread: &Handle,
    target: &Arc<PostgresTarget>,
) -> Result<Client, tokio_postgres::Error> {
    let target = Arc::clone(target);
    let on_thread = Arc::clone(&target);
    match thread.spawn(async move { connect(&on_thread).await }).await {
        Ok(result) => result,
        // The thread's runtime is gone: connect here, slower but correct.
        Err(_) => connect(&target).await,
    }
}

/// Starts the writer's thread; returns its runtime and the sender whose drop ends it.
///
/// A connection's socket work runs in the task that drives it, and a transaction's next statement
/// is sent by the task awaiting the last one. On the service's runtime both queue behind whatever
/// the workers are busy with, and decoding and checking a batch of 10,000 records keeps a worker
/// busy for tens of milliseconds without yielding: a `COPY` stopped whenever the socket buffer was
/// full, and the database backend sat waiting for the rest and for each next statement (sampled: a
/// fifth of its time during ingest). This thread does nothing else, so the kernel runs it as soon
/// as the socket is ready. It outlives any one connection (a database restart replaces the
/// writer's connection on it) and ends when the repository's last clone is dropped.
fn writer_thread() -> (Handle, tokio::sync::oneshot::Sender<()>) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (ready, handle) = std::sync::mpsc::channel();
    let started = std::thread::Builder::new()
        .name("pg-writer-io".into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => {
                    let _ = ready.send(Some(runtime.handle().clone()));
                    runtime.block_on(async move {
                        let _ = stopped.await;
                    });
                }
                Err(error) => {
                    tracing::error!(%error, "cannot start the PostgreSQL writer's thread");
                    let _ = ready.send(None);
                }
            }
        });
    if let Err(error) = started {
        tracing::error!(%error, "cannot start the PostgreSQL writer's thread");
    }
    // Without the thread, the caller's runtime drives the writer: slower, still correct.
    let handle = handle.recv().ok().flatten().unwrap_or_else(Handle::current);
    (handle, stop)
}
