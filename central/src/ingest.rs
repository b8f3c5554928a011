//! The gRPC `Accounting` service: authenticates the site by its token, decodes each record on its
//! own (a bad one, even one whose bytes do not decode, is refused with its reason, the rest
//! stored; records past `max_batch` are refused undecoded), and stores the batch in the repository
//! in one transaction.

use std::sync::Arc;

use chrono::Utc;
use tonic::{Request, Response, Status};

use accelfed_accounting::repository::contacts::{
    Contact, HeldEntry, HeldReport, MAX_HELD_REPORTED,
};
use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::convert::{outcome_to_proto, rejection_kind};
use accelfed_accounting::wire::encoded::{EncodedSubmitRequest, decode_submission};
use accelfed_accounting::wire::proto::accounting_server::Accounting;
use accelfed_accounting::wire::{AUTHORIZATION, proto};
use accelfed_accounting::wire::{Outcome, Rejection, Submission};
use accelfed_schemas::cause;
use accelfed_schemas::names::SiteName;

use crate::auth::Tokens;
use crate::batch_limits::BatchLimits;
use crate::listen::requests::ConnectionInfo;
use crate::metrics::Metrics;

/// The service's state, shared by every call.
#[derive(Debug, Clone)]
pub struct IngestService {
    pub repository: Repository,
    pub tokens: Arc<Tokens>,
    pub metrics: Arc<Metrics>,
    /// Records past a site's limit in a call are refused with `batch_too_large`.
    pub batches: Arc<BatchLimits>,
}

/// The site a call's token belongs to, found by [`authenticator`] before the body was read.
#[derive(Debug, Clone)]
struct Authenticated(SiteName);

/// The site of `request`'s bearer token, or the refusal (counted and logged).
fn site_of<T>(
    request: &Request<T>,
    tokens: &Tokens,
    metrics: &Metrics,
) -> Result<SiteName, Status> {
    let header = request
        .metadata()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    tokens.authenticate(header).ok_or_else(|| {
        metrics.auth_failure();
        tracing::warn!(
            peer = ?request.remote_addr(),
            "refused a call with a missing or unknown token"
        );
        Status::unauthenticated("missing or unknown site token (authorization: Bearer <token>)")
    })
}

/// The interceptor `serve` puts in front of the service: it runs on the call's headers, before
/// tonic reads or decodes the message, so a call without a known token is refused at the cost of
/// one hash, whatever size of message it announced.
pub fn authenticator(
    tokens: Arc<Tokens>,
    metrics: Arc<Metrics>,
) -> impl FnMut(Request<()>) -> Result<Request<()>, Status> + Clone {
    move |mut request: Request<()>| {
        let site = site_of(&request, &tokens, &metrics)?;
        // A site's connection keeps its place when the port is full (listen::gate).
        if let Some(info) = request.extensions().get::<ConnectionInfo>() {
            info.standing.authenticated();
        }
        request.extensions_mut().insert(Authenticated(site));
        Ok(request)
    }
}

impl IngestService {
    /// The site the interceptor found, or (for a service called without it, as tests do) the
    /// header checked here.
    fn authenticate<T>(&self, request: &Request<T>) -> Result<SiteName, Status> {
        match request.extensions().get::<Authenticated>() {
            Some(Authenticated(site)) => Ok(site.clone()),
            None => site_of(request, &self.tokens, &self.metrics),
        }
    }
}

/// The most records a site's spool can hold: it is an SQLite table, whose rows are counted in a
/// signed 64-bit integer. A depth past it (2^64-1, a wrapped counter) is a sender's bug.
const MAX_SPOOL_DEPTH: u64 = i64::MAX as u64;

/// The spool depth a call reports, or `None` (the gauge keeps its last value) for one past
/// [`MAX_SPOOL_DEPTH`], which is refused with a warning rather than published: the records of the
/// call are stored all the same.
fn plausible_spool_depth(site: &SiteName, depth: Option<u64>) -> Option<u64> {
    match depth {
        Some(depth) if depth > MAX_SPOOL_DEPTH => {
            tracing::warn!(
                site = %site,
                "refused a spool depth of {depth}: more records than a spool can hold ({MAX_SPOOL_DEPTH}); the gauge keeps its last value"
            );
            None
        }
        other => other,
    }
}

/// The held records a call reports, or `None` when it reports none (a batch, an older sender).
/// A `since` that is not RFC 3339 reads as the epoch: the list is for people, the id and reason
/// are what matter; the count is capped at what a spool can hold, like the depth.
fn held_report(body: &EncodedSubmitRequest) -> Option<HeldReport> {
    let total = body.held_count?.min(MAX_SPOOL_DEPTH);
    let records = body
        .held
        .iter()
        .take(MAX_HELD_REPORTED)
        .map(|held| HeldEntry {
            record_id: bounded(&held.record_id),
            reason: bounded(&held.reason),
            since: chrono::DateTime::parse_from_rfc3339(&held.since)
                .map_or(chrono::DateTime::UNIX_EPOCH, |t| t.with_timezone(&Utc)),
        })
        .collect();
    Some(HeldReport { total, records })
}

/// A held record's text cut to 500 characters (a reason is a sentence, an id 64 hex digits, and
/// the repository keeps a hundred per site, so a sender cannot make it hold more), with control
/// characters as spaces: `report --check` prints it on an operator's terminal.
fn bounded(text: &str) -> String {
    text.chars()
        .take(500)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The entries of a call, as the repository screens them: the first `max_batch` decoded, each on
/// its own; those past it refused with `batch_too_large` without being decoded, so a sender cannot
/// make the service decode (and hold) more records than the limit.
fn decode_batch(entries: &[impl AsRef<[u8]>], max_batch: usize) -> Vec<Submission> {
    entries
        .iter()
        .enumerate()
        .map(|(position, bytes)| {
            if position < max_batch {
                decode_submission(bytes.as_ref())
            } else {
                Submission::Invalid(Rejection::BatchTooLarge { limit: max_batch })
            }
        })
        .collect()
}

impl IngestService {
    /// Decodes, screens and stores one batch of `site`; the answer, and the records the
    /// repository now holds of it (stored, replaced or unchanged; 0 when it failed).
    async fn store(
        &self,
        site: &SiteName,
        body: &EncodedSubmitRequest,
    ) -> (Result<Response<proto::SubmitResponse>, Status>, u64) {
        let max_batch = self.batches.of(site);
        let mut batch = decode_batch(&body.records, max_batch);
        let caps = self.batches.distinct_caps();
        if let Err(err) =
            crate::distinct_caps::screen(&self.repository, site, &mut batch, caps).await
        {
            let why = cause::chain(&err);
            tracing::error!(site = %site, "batch not stored: reading the site's VOs and models: {why}");
            let refusal = Status::unavailable(
                "the repository could not be read; nothing of the batch was stored, send it again",
            );
            return (Err(refusal), 0);
        }
        let submitted = batch.len();
        let options = IngestOptions {
            max_batch,
            now: Utc::now(),
        };
        let report = match self.repository.ingest(site, batch, options).await {
            Ok(report) => report,
            Err(err) => {
                self.metrics.batch_failed();
                let why = cause::chain(&err);
                tracing::error!(site = %site, records = submitted, "batch not stored: {why}");
                let refusal = Status::unavailable(
                    "the repository could not store the batch; nothing of it was stored, send it again",
                );
                return (Err(refusal), 0);
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
        self.metrics.rejected(site.as_str(), &rejected);
        let answer = Response::new(proto::SubmitResponse {
            outcomes: report.outcomes.iter().map(outcome_to_proto).collect(),
        });
        (Ok(answer), (stored + replaced + unchanged) as u64)
    }
}

#[tonic::async_trait]
impl Accounting for IngestService {
    async fn submit(
        &self,
        request: Request<EncodedSubmitRequest>,
    ) -> Result<Response<proto::SubmitResponse>, Status> {
        let site = self.authenticate(&request)?;
        let body = request.into_inner();
        let limit = self.batches.message_bytes_of(&site);
        let size: usize = body.records.iter().map(|record| record.len()).sum();
        if size > limit {
            tracing::warn!(site = %site, bytes = size, limit, "call refused: message too large");
            return Err(Status::resource_exhausted(format!(
                "the message's records hold {size} bytes, more than this site's limit of {limit} \
                 (sites.<NAME>.max_message_bytes or ingest.max_message_bytes): send smaller batches"
            )));
        }
        let spool_depth = plausible_spool_depth(&site, body.spool_depth);
        let contact = Contact {
            spool_depth,
            held: held_report(&body),
            received: 0,
        };
        if body.records.is_empty() {
            // A site with nothing to send calls all the same (a heartbeat): the contact, its
            // spool depth and held records are what it reports; no record is stored.
            tracing::debug!(site = %site, spool_depth, "heartbeat (an empty batch)");
            self.metrics
                .contact(site.as_str(), Utc::now(), contact)
                .await;
            return Ok(Response::new(proto::SubmitResponse::default()));
        }
        let (answer, received) = self.store(&site, &body).await;
        // Written once the batch is stored, with its count: one write per call.
        let contact = Contact {
            received,
            ..contact
        };
        self.metrics
            .contact(site.as_str(), Utc::now(), contact)
            .await;
        answer
    }

    async fn sync_counts(
        &self,
        request: Request<proto::SyncRequest>,
    ) -> Result<Response<proto::SyncResponse>, Status> {
        let site = self.authenticate(&request)?;
        self.metrics
            .contact(site.as_str(), Utc::now(), Contact::default())
            .await;
        let counts = self
            .repository
            .sync_counts(site.as_str())
            .await
            .map_err(|err| {
                let why = cause::chain(&err);
                tracing::error!(site = %site, "sync counts failed: {why}");
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

#[cfg(test)]
mod tests {
    use accelfed_accounting::wire::encoded::encode_record;
    use accelfed_schemas::usage::sample;

    use super::*;

    #[test]
    fn a_spool_depth_past_what_a_spool_holds_is_refused() {
        let site = SiteName::new("S").unwrap();
        assert_eq!(plausible_spool_depth(&site, Some(u64::MAX)), None);
        assert_eq!(plausible_spool_depth(&site, Some(1 << 63)), None);
        assert_eq!(
            plausible_spool_depth(&site, Some(MAX_SPOOL_DEPTH)),
            Some(MAX_SPOOL_DEPTH)
        );
        assert_eq!(plausible_spool_depth(&site, Some(42)), Some(42));
        assert_eq!(plausible_spool_depth(&site, None), None);
    }

    #[test]
    fn held_records_are_read_bounded_and_printable() {
        assert_eq!(held_report(&EncodedSubmitRequest::default()), None);
        let request = EncodedSubmitRequest {
            held_count: Some(u64::MAX),
            held: (0..150)
                .map(|n| proto::HeldRecord {
                    record_id: format!("r{n}"),
                    reason: format!("over\u{1b}[31m capacity {}", "x".repeat(600)),
                    since: if n == 0 {
                        "yesterday".to_owned()
                    } else {
                        "2026-05-02T10:00:00Z".to_owned()
                    },
                })
                .collect(),
            ..EncodedSubmitRequest::default()
        };
        let report = held_report(&request).unwrap();
        assert_eq!(report.total, MAX_SPOOL_DEPTH);
        assert_eq!(report.records.len(), MAX_HELD_REPORTED);
        assert_eq!(report.records[0].since, chrono::DateTime::UNIX_EPOCH);
        assert_eq!(
            report.records[1].since.to_rfc3339(),
            "2026-05-02T10:00:00+00:00"
        );
        let reason = &report.records[0].reason;
        assert_eq!(reason.chars().count(), 500);
        assert!(reason.starts_with("over [31m capacity"), "{reason}");
    }

    #[test]
    fn entries_past_the_limit_are_refused_without_being_decoded() {
        let good = encode_record(&sample::record("vm-1"));
        let garbage = vec![0xff, 0xff, 0xff];
        let batch = decode_batch(&[good.clone(), garbage.clone(), good, garbage], 2);
        let refusals: Vec<Option<&Rejection>> = batch
            .iter()
            .map(|submission| match submission {
                Submission::Invalid(reason) => Some(reason),
                _ => None,
            })
            .collect();
        assert!(refusals[0].is_none());
        // Within the limit the garbage is decoded and refused as such; past it nothing is
        // decoded, so a record and garbage are refused alike.
        assert!(matches!(refusals[1], Some(Rejection::Malformed { .. })));
        for past in &refusals[2..] {
            assert!(
                matches!(past, Some(Rejection::BatchTooLarge { limit: 2 })),
                "{past:?}"
            );
        }
    }
}
