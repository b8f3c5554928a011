//! The repository over either backend. A closed set, so an enum: callers hold one `Repository`
//! whichever database the configuration names.

use std::path::Path;

use accelfed_schemas::database_url::DatabaseUrl;

use accelfed_schemas::names::SiteName;
use chrono::{DateTime, Utc};

use super::error::RepositoryError;
use super::postgres::PostgresRepository;
use crate::wire::{IngestReport, Outcome};
use std::collections::BTreeMap;

use accelfed_schemas::gpu::GpuModel;

use super::capacity::{CapacityCheck, check};
use super::query::{Dimension, GroupKey, SummaryFilter, SummaryQuery, SummaryRow};
use super::row::RecordRow;
use super::screen::screen;
use super::sqlite::SqliteRepository;
use super::sync_count::SyncCount;
use super::totals::Totals;
use crate::wire::Submission;

/// The most records one batch may hold. Larger batches ingest faster (fewer commits), but one
/// batch is one transaction held in memory; 50,000 records are about 15 MB.
pub const DEFAULT_MAX_BATCH: usize = 50_000;

/// How a batch is checked.
#[derive(Debug, Clone, Copy)]
pub struct IngestOptions {
    /// Records past this position are refused with [`super::Rejection::BatchTooLarge`].
    pub max_batch: usize,
    /// The present, for "not in the future" checks.
    pub now: DateTime<Utc>,
}

impl IngestOptions {
    /// The default limit, and the clock's time.
    pub fn now() -> Self {
        Self {
            max_batch: DEFAULT_MAX_BATCH,
            now: Utc::now(),
        }
    }
}

/// The central repository, on SQLite or PostgreSQL. Cloning is cheap and shares the connections.
#[derive(Debug, Clone)]
pub enum Repository {
    Sqlite(SqliteRepository),
    Postgres(PostgresRepository),
}

impl Repository {
    /// Opens the repository `location` names: a `postgres://` (or `postgresql://`) URL, or else the
    /// path of an SQLite file (created if missing). Migrations run on open.
    pub async fn open(location: &str) -> Result<Self, RepositoryError> {
        let url = DatabaseUrl::new(location);
        if url.is_postgres() {
            Ok(Self::Postgres(
                PostgresRepository::open(url.expose()).await?,
            ))
        } else if location.is_empty() || location.contains("://") {
            Err(RepositoryError::Url(url.redacted()))
        } else {
            Ok(Self::Sqlite(
                SqliteRepository::open(Path::new(location)).await?,
            ))
        }
    }

    /// Opens an existing repository for reading only (`accelfed report`): an SQLite file is opened
    /// read-only and refused unless it holds accelfed's repository schema, so a mistyped path (the
    /// registry's database, a site spool, an empty file) is neither changed nor reported as an
    /// empty repository. PostgreSQL is opened as by [`Self::open`].
    pub async fn open_read_only(location: &str) -> Result<Self, RepositoryError> {
        if DatabaseUrl::new(location).is_postgres()
            || location.is_empty()
            || location.contains("://")
        {
            return Self::open(location).await;
        }
        Ok(Self::Sqlite(
            SqliteRepository::open_read_only(Path::new(location)).await?,
        ))
    }

    /// Stores a batch sent by `site` (as authenticated by the caller: the gRPC service maps the
    /// bearer token to the site). Returns one outcome per submitted record, in order: records of
    /// other sites and invalid records are refused individually and the rest is stored, in one
    /// transaction. A re-sent record replaces the stored one, and the summaries move with it.
    ///
    /// An `Err` means nothing of the batch was stored; the whole batch may be sent again.
    pub async fn ingest(
        &self,
        site: &SiteName,
        batch: Vec<Submission>,
        options: IngestOptions,
    ) -> Result<IngestReport, RepositoryError> {
        let screened = screen(site, batch, options.now, options.max_batch);
        let mut outcomes = screened.outcomes;
        for (position, outcome) in self.ingest_rows(site.as_str(), screened.candidates).await? {
            outcomes[position] = Some(outcome);
        }
        Ok(IngestReport {
            outcomes: outcomes
                .into_iter()
                .map(|o| {
                    // Every checked record gets an outcome from the backend; should one not, the
                    // site must keep and re-send it (re-sending is harmless), never drop it.
                    o.unwrap_or(Outcome::Rejected {
                        reason: crate::wire::Rejection::Internal {
                            detail: "no outcome recorded; re-send".to_owned(),
                        },
                    })
                })
                .collect(),
        })
    }

    /// Totals from the summary table, grouped and filtered as `query` says; a grouping by user
    /// reads the user rollup, the same totals split by user.
    ///
    /// The model filter matches by words, as `accelfed query --model` does ([`GpuModel::matches`]):
    /// `A100` selects `NVIDIA A100-SXM4-40GB` and `NVIDIA A100-SXM4-80GB` alike. The stored models
    /// the filter names are found first (one grouped query), then each is summed.
    pub async fn summaries(
        &self,
        mut query: SummaryQuery,
    ) -> Result<Vec<SummaryRow>, RepositoryError> {
        let Some(wanted) = query.filter.model.take() else {
            return self.exact_summaries(query).await;
        };
        let models = self
            .exact_summaries(SummaryQuery {
                group_by: vec![Dimension::Model],
                filter: query.filter.clone(),
            })
            .await?;
        let mut merged: BTreeMap<GroupKey, Totals> = BTreeMap::new();
        for model in models.into_iter().filter_map(|row| row.key.model) {
            let matches =
                model == wanted || GpuModel::new(model.as_str()).is_ok_and(|m| m.matches(&wanted));
            if !matches {
                continue;
            }
            let mut one = query.clone();
            one.filter.model = Some(model);
            for row in self.exact_summaries(one).await? {
                *merged.entry(row.key).or_default() += row.totals;
            }
        }
        // GroupKey orders by VO, site, model, month: the order the SQL sorts any grouping in.
        Ok(merged
            .into_iter()
            .map(|(key, totals)| SummaryRow { key, totals })
            .collect())
    }

    /// [`Self::summaries`] with the model filter as an exact name.
    async fn exact_summaries(
        &self,
        query: SummaryQuery,
    ) -> Result<Vec<SummaryRow>, RepositoryError> {
        match self {
            Self::Sqlite(r) => r.summaries(query).await,
            Self::Postgres(r) => r.summaries(query).await,
        }
    }

    /// A number that grows with every commit that changes what reports read, on this instance or
    /// any other on the same database: an answer computed after reading generation `g` stays
    /// right while the generation is still `g` (see `generation.rs`). Read it before the report.
    pub async fn report_generation(&self) -> Result<i64, RepositoryError> {
        match self {
            Self::Sqlite(r) => r.report_generation().await,
            Self::Postgres(r) => r.report_generation().await,
        }
    }

    /// Every (site, model, month) under `filter` whose GPU-hours exceed the GPUs its site reported
    /// installed x the month's hours (see [`super::capacity`]).
    pub async fn capacity_check(
        &self,
        filter: SummaryFilter,
    ) -> Result<CapacityCheck, RepositoryError> {
        let rows = self
            .summaries(SummaryQuery {
                group_by: vec![Dimension::Site, Dimension::Model, Dimension::Month],
                filter,
            })
            .await?;
        let installed = match self {
            Self::Sqlite(r) => r.installed().await?,
            Self::Postgres(r) => r.installed().await?,
        };
        Ok(check(&rows, &installed))
    }

    /// How many records the repository holds for `site`, per month, for the site to compare with
    /// its own counts and re-send the months that differ.
    pub async fn sync_counts(&self, site: &str) -> Result<Vec<SyncCount>, RepositoryError> {
        match self {
            Self::Sqlite(r) => r.sync_counts(site.to_owned()).await,
            Self::Postgres(r) => r.sync_counts(site.to_owned()).await,
        }
    }

    /// The distinct users (GlobalUserName) `site` reported in `period`, for central's per-site
    /// cap on them.
    pub async fn users(
        &self,
        site: &str,
        period: super::period::Period,
    ) -> Result<Vec<String>, RepositoryError> {
        match self {
            Self::Sqlite(r) => r.users(site.to_owned(), period).await,
            Self::Postgres(r) => r.users(site.to_owned(), period).await,
        }
    }

    /// Page `page` (from 1) of `site`'s records, `per_page` (1..=[`super::listing::MAX_PER_PAGE`])
    /// a page, in month and record-id order.
    pub async fn site_records(
        &self,
        site: &str,
        page: u32,
        per_page: u32,
    ) -> Result<super::listing::RecordPage, RepositoryError> {
        let per_page = per_page.clamp(1, super::listing::MAX_PER_PAGE);
        let offset = i64::from(page.max(1) - 1) * i64::from(per_page);
        // One more than a page: whether more follow, without counting the site's records.
        let limit = i64::from(per_page) + 1;
        let mut rows = match self {
            Self::Sqlite(r) => r.site_records(site.to_owned(), limit, offset).await?,
            Self::Postgres(r) => r.site_records(site.to_owned(), limit, offset).await?,
        };
        let more = rows.len() > per_page as usize;
        rows.truncate(per_page as usize);
        Ok(super::listing::RecordPage {
            records: rows
                .into_iter()
                .map(super::listing::ListedRecord::of)
                .collect(),
            more,
        })
    }

    /// Stores checked rows, all of `site`, with unique ids.
    async fn ingest_rows(
        &self,
        site: &str,
        candidates: Vec<(usize, RecordRow)>,
    ) -> Result<Vec<(usize, Outcome)>, RepositoryError> {
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        match self {
            Self::Sqlite(r) => r.ingest_rows(candidates).await,
            Self::Postgres(r) => r.ingest_rows(site, candidates).await,
        }
    }
}
