//! The gRPC `Accounting` service: authenticates the site by its token, decodes each record on its
//! own (a bad one is refused with its reason, the rest stored), and stores the batch in the
//! repository in one transaction.

use std::sync::Arc;

use chrono::Utc;
use tonic::{Request, Response, Status};

use accelfed_accounting::repository::{IngestOptions, Outcome, Repository, Submission};
use accelfed_accounting::wire::convert::{outcome_to_proto, record_from_proto, rejection_kind};
use accelfed_accounting::wire::proto::accounting_server::Accounting;
use accelfed_accounting::wire::{AUTHORIZATION, proto};
use accelfed_schemas::names::SiteName;

use crate::auth::Tokens;
use crate::metrics::Metrics;

/// The service's state, shared by every call.
#[derive(Debug, Clone)]
pub struct IngestService {
    pub repository: Repository,
    pub tokens: Arc<Tokens>,
    pub metrics: Arc<Metrics>,
    /// Records past this position of a batch are refused with `batch_too_large`.
    pub max_batch: usize,
}

impl IngestService {
    fn authenticate<T>(&self, request: &Request<T>) -> Result<SiteName, Status> {
        let header = request
            .metadata()
            .get(AUTHORIZATION)
            .and_then(|value| value.to_str().ok());
        match self.tokens.authenticate(header) {
            Some(site) => Ok(site),
            None => {
                self.metrics.auth_failure();
                tracing::warn!(
                    peer = ?request.remote_addr(),
                    "refused a call with a missing or unknown token"
                );
                Err(Status::unauthenticated(
                    "missing or unknown site token (authorization: Bearer <token>)",
                ))
            }
        }
    }
}

#[tonic::async_trait]
impl Accounting for IngestService {
    async fn submit(
        &self,
        request: Request<proto::SubmitRequest>,
    ) -> Result<Response<proto::SubmitResponse>, Status> {
        let site = self.authenticate(&request)?;
        let body = request.into_inner();
        self.metrics
            .contact(site.as_str(), Utc::now(), body.spool_depth);
        let batch: Vec<Submission> = body.records.into_iter().map(record_from_proto).collect();
        let submitted = batch.len();
        let options = IngestOptions {
            max_batch: self.max_batch,
            now: Utc::now(),
        };
        let report = match self.repository.ingest(&site, batch, options).await {
            Ok(report) => report,
            Err(err) => {
                self.metrics.batch_failed();
                tracing::error!(site = %site, records = submitted, "batch not stored: {err}");
                return Err(Status::unavailable(
                    "the repository could not store the batch; nothing of it was stored, send it again",
                ));
            }
        };
        let mut rejected = Vec::new();
        for outcome in &report.outcomes {
            if let Outcome::Rejected { reason } = outcome {
                rejected.push(rejection_kind(reason));
            }
        }
        let (stored, replaced, unchanged, refused) = report.counts();
        tracing::info!(
            site = %site,
            stored,
            replaced,
            unchanged,
            rejected = refused,
            "batch ingested"
        );
        self.metrics.ingested(
            site.as_str(),
            (stored + replaced + unchanged) as u64,
            &rejected,
        );
        Ok(Response::new(proto::SubmitResponse {
            outcomes: report.outcomes.iter().map(outcome_to_proto).collect(),
        }))
    }

    async fn sync_counts(
        &self,
        request: Request<proto::SyncRequest>,
    ) -> Result<Response<proto::SyncResponse>, Status> {
        let site = self.authenticate(&request)?;
        self.metrics.contact(site.as_str(), Utc::now(), None);
        let counts = self
            .repository
            .sync_counts(site.as_str())
            .await
            .map_err(|err| {
                tracing::error!(site = %site, "sync counts failed: {err}");
                Status::unavailable("the repository could not count records; try again")
            })?;
        Ok(Response::new(proto::SyncResponse {
            months: counts
                .iter()
                .map(|count| proto::MonthCount {
                    year: count.period.year(),
                    month: i32::try_from(count.period.month()).unwrap_or(0),
                    records: count.records,
                })
                .collect(),
        }))
    }
}
