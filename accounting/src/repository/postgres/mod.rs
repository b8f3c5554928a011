//! The PostgreSQL backend, for federations that outgrow one machine: several `accelfed serve`
//! instances may share one database (per-site advisory locks keep their batches consistent), and
//! records are partitioned by month.
//!
//! tokio-postgres rather than sqlx: ingest needs binary `COPY` (a stream of bytes we build
//! ourselves, see `copy`), we write all SQL by hand anyway, and it brings fewer dependencies and no
//! compile-time database connection.

mod contacts;
pub(crate) mod copy;
pub(crate) mod ingest;
mod read;
pub(crate) mod schema;

use std::collections::HashSet;
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

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
    /// Ingest needs `&mut Client` for its transaction; batches on one instance queue here.
    writer: Arc<Mutex<ingest::Writer>>,
    /// The runtime of the writer connection's own thread (see [`connect_on_own_thread`]), where
    /// each batch's transaction runs.
    writer_thread: Handle,
    /// Reports and sync counts use their own connection, so they never wait for a batch.
    reader: Arc<Client>,
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
    /// Connects (without TLS: the database is expected on localhost or a private network) and
    /// brings the schema up to date.
    pub async fn open(url: &str) -> Result<Self, RepositoryError> {
        let location = redact(url);
        let fail = |error| RepositoryError::Postgres {
            url: location.clone(),
            error,
        };
        let (mut writer, writer_thread) = connect_on_own_thread(url).await.map_err(fail)?;
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
        let reader = connect(url).await.map_err(fail)?;
        Ok(Self {
            location,
            writer: Arc::new(Mutex::new(writer)),
            writer_thread,
            reader: Arc::new(reader),
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
        let owned_site = site.to_owned();
        let transaction = async move {
            let mut writer = writer.lock().await;
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
        read::summaries(self.reader.as_ref(), &query)
            .await
            .map_err(|e| self.fail(e))
    }

    /// Installed GPUs per (site, model, month), as records carry them.
    pub async fn installed(&self) -> Result<Vec<Installed>, RepositoryError> {
        read::installed(self.reader.as_ref())
            .await
            .map_err(|e| self.fail(e))
    }

    /// Records held per month for one site.
    pub async fn sync_counts(&self, site: String) -> Result<Vec<SyncCount>, RepositoryError> {
        read::sync_counts(self.reader.as_ref(), &site)
            .await
            .map_err(|e| self.fail(e))
    }

    /// The distinct users `site` reported in `period`.
    pub async fn users(
        &self,
        site: String,
        period: Period,
    ) -> Result<Vec<String>, RepositoryError> {
        read::users(self.reader.as_ref(), &site, period)
            .await
            .map_err(|e| self.fail(e))
    }

    /// Totals grouped by user, from the records.
    pub async fn user_summaries(
        &self,
        query: SummaryQuery,
    ) -> Result<Vec<SummaryRow>, RepositoryError> {
        read::user_summaries(self.reader.as_ref(), &query)
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
        read::site_records(self.reader.as_ref(), &site, limit, offset)
            .await
            .map_err(|e| self.fail(e))
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

pub(crate) async fn connect(url: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            let why = super::postgres_message::describe(&error);
            tracing::warn!("PostgreSQL connection closed: {why}");
        }
    });
    Ok(client)
}

/// Connects the writer, its connection driven by a thread of its own; also returns that thread's
/// runtime, where ingest runs each batch's transaction.
///
/// A connection's socket work runs in the task that drives it, and a transaction's next statement
/// is sent by the task awaiting the last one. On the service's runtime both queue behind whatever
/// the workers are busy with, and decoding and checking a batch of 10,000 records keeps a worker
/// busy for tens of milliseconds without yielding: a `COPY` stopped whenever the socket buffer was
/// full, and the database backend sat waiting for the rest and for each next statement (sampled: a
/// fifth of its time during ingest). This thread does nothing else, so the kernel runs it as soon
/// as the socket is ready. The `Client` works from any runtime; the thread ends when the connection
/// does (when the `Client` is dropped).
async fn connect_on_own_thread(url: &str) -> Result<(Client, Handle), tokio_postgres::Error> {
    let owned = url.to_owned();
    let (ready, connected) = tokio::sync::oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("pg-writer-io".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    tracing::error!(%error, "cannot start the PostgreSQL writer's thread");
                    return;
                }
            };
            runtime.block_on(async move {
                match tokio_postgres::connect(&owned, NoTls).await {
                    Ok((client, connection)) => {
                        if ready.send(Ok((client, Handle::current()))).is_ok()
                            && let Err(error) = connection.await
                        {
                            let why = super::postgres_message::describe(&error);
                            tracing::warn!("PostgreSQL connection closed: {why}");
                        }
                    }
                    Err(error) => {
                        let _ = ready.send(Err(error));
                    }
                }
            });
        });
    if let Err(error) = thread {
        tracing::error!(%error, "cannot start the PostgreSQL writer's thread");
        // Fall back to a connection driven by the caller's runtime: slower, still correct.
        return Ok((connect(url).await?, Handle::current()));
    }
    match connected.await {
        Ok(result) => result,
        // The thread ended without answering (its runtime could not start): as above.
        Err(_) => Ok((connect(url).await?, Handle::current())),
    }
}
