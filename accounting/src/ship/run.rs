//! Shipping the spool: page, plan batches (pure, [`crate::spool::plan`]), send each batch with
//! retries, acknowledge what the repository holds. A batch is sent again until the repository
//! answers or the attempts run out; nothing later is sent before it, so records arrive in order.

use std::time::Duration;

use accelfed_schemas::usage::RecordId;

use super::backoff::{Backoff, delay, random_unit};
use super::client::{Client, describe, retryable};
use super::error::ShipError;
use crate::spool::{Ack, PendingRecord, ShipLimits, Spool, plan};
use crate::wire::convert::{Received, outcome_from_proto, record_to_proto};
use crate::wire::proto;

/// How to ship.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShipOptions {
    /// Records and bytes per batch.
    pub limits: ShipLimits,
    pub backoff: Backoff,
}

/// A record the repository refused; it stays in the spool (a later run sends it again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub id: RecordId,
    /// `site resource month` in words.
    pub identity: String,
    pub kind: String,
    pub reason: String,
}

/// What one run shipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShipReport {
    pub batches: usize,
    /// Records the repository acknowledged (stored, replaced or already had).
    pub acknowledged: usize,
    pub rejected: Vec<Rejected>,
    /// Records too large for any batch, left in the spool.
    pub oversized: Vec<RecordId>,
    /// Calls that failed and were tried again.
    pub retries: u32,
}

/// Ships every pending record, oldest first. Stops at the first batch that cannot be delivered
/// after all attempts (what was acknowledged before stays acknowledged).
pub async fn ship(
    spool: &mut Spool,
    client: &mut Client,
    options: &ShipOptions,
) -> Result<ShipReport, ShipError> {
    let mut report = ShipReport::default();
    let mut after = 0;
    let page_size = options.limits.max_records.max(1) * 4;
    loop {
        let page = spool.pending_after(after, page_size)?;
        let Some((last, _)) = page.last() else {
            break;
        };
        after = *last;
        let pending: Vec<PendingRecord> = page.into_iter().map(|(_, p)| p).collect();
        let packing = plan(&pending, options.limits);
        report
            .oversized
            .extend(packing.oversized.iter().map(|&i| pending[i].id.clone()));
        for batch in &packing.batches {
            let records: Vec<&PendingRecord> = batch.iter().map(|&i| &pending[i]).collect();
            let depth = spool.depth()?;
            let request = proto::SubmitRequest {
                records: records.iter().map(|p| record_to_proto(&p.record)).collect(),
                spool_depth: Some(depth),
            };
            let response = submit(client, request, &options.backoff, &mut report.retries).await?;
            if response.outcomes.len() != records.len() {
                return Err(ShipError::Protocol {
                    endpoint: client.endpoint.clone(),
                    message: format!(
                        "answered {} outcomes for a batch of {} records",
                        response.outcomes.len(),
                        records.len()
                    ),
                });
            }
            let mut acks: Vec<Ack> = Vec::with_capacity(records.len());
            for (pending, outcome) in records.iter().zip(&response.outcomes) {
                match outcome_from_proto(outcome) {
                    Received::Acknowledged => acks.push(pending.ack()),
                    Received::Rejected { kind, reason } => {
                        let rejected = Rejected {
                            id: pending.id.clone(),
                            identity: pending.record.identity().to_string(),
                            kind,
                            reason,
                        };
                        tracing::warn!(
                            record = %rejected.id,
                            identity = %rejected.identity,
                            kind = %rejected.kind,
                            "the repository refused the record: {}",
                            rejected.reason
                        );
                        report.rejected.push(rejected);
                    }
                }
            }
            report.acknowledged += acks.len();
            spool.acknowledge(&acks)?;
            report.batches += 1;
        }
    }
    Ok(report)
}

/// One batch, with retries on failures a retry can help.
async fn submit(
    client: &mut Client,
    request: proto::SubmitRequest,
    backoff: &Backoff,
    retries: &mut u32,
) -> Result<proto::SubmitResponse, ShipError> {
    let attempts = backoff.attempts.max(1);
    let mut failed = 0;
    loop {
        match client.inner.submit(request.clone()).await {
            Ok(response) => return Ok(response.into_inner()),
            Err(status) if !retryable(&status) => {
                return Err(refusal(client, &status));
            }
            Err(status) => {
                failed += 1;
                if failed >= attempts {
                    return Err(ShipError::Unreachable {
                        endpoint: client.endpoint.clone(),
                        attempts,
                        message: describe(&status),
                    });
                }
                let wait = delay(backoff, failed, random_unit());
                tracing::warn!(
                    endpoint = %client.endpoint,
                    attempt = failed,
                    "submit failed ({}); trying again in {:.1} s",
                    describe(&status),
                    wait.as_secs_f64()
                );
                *retries += 1;
                sleep(wait).await;
            }
        }
    }
}

pub(super) fn refusal(client: &Client, status: &tonic::Status) -> ShipError {
    match status.code() {
        tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => ShipError::Refused {
            endpoint: client.endpoint.clone(),
            message: describe(status),
        },
        _ => ShipError::Settings {
            endpoint: client.endpoint.clone(),
            message: describe(status),
        },
    }
}

async fn sleep(wait: Duration) {
    tokio::time::sleep(wait).await;
}
