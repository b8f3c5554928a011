//! The PostgreSQL backend, for federations that outgrow one machine: several `accelfed serve`
//! instances may share one database (per-site advisory locks keep their batches consistent), and
//! records are partitioned by month.
//!
//! tokio-postgres rather than sqlx: ingest needs binary `COPY` (a stream of bytes we build
//! ourselves, see `copy`), we write all SQL by hand anyway, and it brings fewer dependencies and no
//! compile-time database connection.

pub(crate) mod copy;
pub(crate) mod ingest;
mod read;
pub(crate) mod schema;

use std::collections::HashSet;
use std::sync::Arc;

use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use super::error::RepositoryError;
use super::outcome::Outcome;
use super::period::Period;
use super::query::{SummaryQuery, SummaryRow};
use super::row::RecordRow;
use super::sync::SyncCount;

/// A repository in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresRepository {
    /// The URL without its password, for messages.
    location: String,
    /// Ingest needs `&mut Client` for its transaction; batches on one instance queue here.
    writer: Arc<Mutex<ingest::Writer>>,
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
        let fail = |source| RepositoryError::Postgres {
            url: location.clone(),
            source,
        };
        let mut writer = connect(url).await.map_err(fail)?;
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
        let mut writer = self.writer.lock().await;
        let missing: Vec<Period> = {
            let known = self.partitions.lock().await;
            let mut missing: Vec<Period> = wanted.difference(&known).copied().collect();
            missing.sort_unstable();
            missing
        };
        if !missing.is_empty() {
            schema::create_partitions(&mut writer.client, &missing)
                .await
                .map_err(|e| self.fail(PgFailure::Postgres(e)))?;
            self.partitions.lock().await.extend(missing);
        }
        let (outcomes, resent) = ingest::ingest(&mut writer, site, prepared)
            .await
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

    /// Records held per month for one site.
    pub async fn sync_counts(&self, site: String) -> Result<Vec<SyncCount>, RepositoryError> {
        read::sync_counts(self.reader.as_ref(), &site)
            .await
            .map_err(|e| self.fail(e))
    }

    fn fail(&self, failure: PgFailure) -> RepositoryError {
        match failure {
            PgFailure::Postgres(source) => RepositoryError::Postgres {
                url: self.location.clone(),
                source,
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
            tracing::warn!(%error, "PostgreSQL connection closed");
        }
    });
    Ok(client)
}

/// The URL with any password replaced, safe for logs and error messages.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn redacts_passwords() {
        assert_eq!(
            super::redact("postgres://acct:secret@db:5432/acc"),
            "postgres://acct:***@db:5432/acc"
        );
        assert_eq!(
            super::redact("postgres://postgres@127.0.0.1/x"),
            "postgres://postgres@127.0.0.1/x"
        );
    }
}
