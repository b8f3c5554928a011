//! Shipping the spool: page, plan batches (pure, [`crate::spool::plan`]), send each batch with
//! retries, acknowledge what the repository holds.
//!
//! Batches leave in spool order and up to [`ShipOptions::in_flight`] of them are on the wire at
//! once, so the spool work here (reading and encoding the next batch, recording the last one's
//! acknowledgements) overlaps with the repository storing the batches before it; answers are taken
//! in sending order, and their acknowledgements are marked in the spool by [`super::acker`]'s
//! thread. A batch is sent again until the repository answers or the attempts run out;
//! then the run stops, the batches behind it are abandoned (their records stay pending; had the
//! repository stored them, sending them again is answered "unchanged"), and what was acknowledged
//! before stays acknowledged.
//!
//! With several endpoints (instances of one central service on one database), a call that fails in
//! a way a retry may cure is sent at once to the next endpoint, and the backoff delay comes after
//! each round over all of them. A record acknowledged by one instance and sent again to another is
//! answered "unchanged" there (the repository keys records by id and version), so failing over
//! never counts a record twice.

use std::collections::{BTreeMap, VecDeque};

use accelfed_schemas::usage::RecordId;
use tokio::task::JoinHandle;

use super::acker::Acker;
use super::backoff::Backoff;
use super::client::Client;
use super::error::ShipError;
use super::retry::{Answer, submit_with_retries};
use crate::spool::{Ack, PendingRecord, ShipLimits, Spool, plan};
use crate::wire::convert::{Received, outcome_from_proto};
use crate::wire::encoded::EncodedSubmitRequest;
use crate::wire::proto;

/// Batches on the wire at once by default: enough for the repository to always have the next
/// batch in hand while it stores one, few enough that an outage abandons little work.
pub const DEFAULT_IN_FLIGHT: usize = 3;

/// How to ship.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShipOptions {
    /// Records and bytes per batch.
    pub limits: ShipLimits,
    pub backoff: Backoff,
    /// Batches sent before the first of them is answered (at least 1).
    pub in_flight: usize,
}

impl Default for ShipOptions {
    fn default() -> Self {
        Self {
            limits: ShipLimits::default(),
            backoff: Backoff::default(),
            in_flight: DEFAULT_IN_FLIGHT,
        }
    }
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
    /// Calls that failed and were tried again (at the same endpoint or the next).
    pub retries: u32,
    /// Per endpoint that answered, the records it acknowledged (an endpoint that took only the
    /// closing heartbeat is listed with 0).
    pub taken_by: BTreeMap<String, usize>,
    /// The run ended with an empty call (a heartbeat carrying the spool's depth and held
    /// records), the only one when there was nothing to send: the token, endpoint and CA are
    /// checked on every run.
    pub heartbeat: bool,
}

/// A batch on the wire: the call that answers for it, which hands the batch's records back with
/// the answer.
type InFlight = JoinHandle<(Vec<PendingRecord>, Result<Answer, ShipError>)>;

/// Reads the spool's pending records page by page, oldest first, and cuts them into batches.
struct Batches {
    after: i64,
    page_size: usize,
    limits: ShipLimits,
    planned: VecDeque<Vec<PendingRecord>>,
    exhausted: bool,
}

impl Batches {
    fn new(limits: ShipLimits) -> Self {
        Self {
            after: 0,
            page_size: limits.max_records.max(1) * 4,
            limits,
            planned: VecDeque::new(),
            exhausted: false,
        }
    }

    /// The next batch, reading a page when the planned ones ran out; `None` when the spool has
    /// nothing more pending (records refused in this run are behind the cursor, not read again).
    fn next(
        &mut self,
        spool: &Spool,
        oversized: &mut Vec<RecordId>,
    ) -> Result<Option<Vec<PendingRecord>>, ShipError> {
        while self.planned.is_empty() && !self.exhausted {
            let page = spool.pending_after(self.after, self.page_size)?;
            let Some(last) = page.last() else {
                self.exhausted = true;
                break;
            };
            self.after = last.enqueued;
            let pending = page;
            let packing = plan(&pending, self.limits);
            oversized.extend(packing.oversized.iter().map(|&i| pending[i].id.clone()));
            let mut slots: Vec<Option<PendingRecord>> = pending.into_iter().map(Some).collect();
            for batch in packing.batches {
                self.planned.push_back(
                    batch
                        .into_iter()
                        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
                        .collect(),
                );
            }
        }
        Ok(self.planned.pop_front())
    }
}

/// Ships every pending record, oldest first. Stops at the first batch that cannot be delivered
/// after all attempts (what was acknowledged before stays acknowledged).
pub async fn ship(
    spool: &mut Spool,
    client: &mut Client,
    options: &ShipOptions,
) -> Result<ShipReport, ShipError> {
    let mut report = ShipReport::default();
    // Counted once: the figure each batch reports is this minus what has been acknowledged since
    // (a meter writing meanwhile is counted by the next run).
    let mut depth = spool.depth()?;
    let acker = Acker::start(spool)?;
    let mut batches = Batches::new(options.limits);
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    let result = loop {
        while in_flight.len() < options.in_flight.max(1) {
            let records = match batches.next(spool, &mut report.oversized) {
                Ok(Some(records)) => records,
                Ok(None) => break,
                Err(err) => return finish(Err(err), in_flight, acker, spool, report),
            };
            tracing::debug!(
                records = records.len(),
                bytes = records.iter().map(PendingRecord::bytes).sum::<usize>(),
                spool_depth = depth,
                "sending a batch"
            );
            in_flight.push_back(tokio::spawn(submit(
                client.clone(),
                records,
                depth,
                options.backoff,
            )));
        }
        let Some(call) = in_flight.pop_front() else {
            break Ok(());
        };
        let (records, (response, retries, at)) = match call.await {
            Ok((records, Ok(answer))) => (records, answer),
            Ok((_, Err(err))) => break Err(err),
            Err(join) => {
                break Err(ShipError::Protocol {
                    endpoint: client.endpoint().to_owned(),
                    message: format!("the call's task ended without an answer: {join}"),
                });
            }
        };
        report.retries += retries;
        let acks = match receipts(client, &records, &response, &mut report) {
            Ok(acks) => acks,
            Err(err) => break Err(err),
        };
        tracing::debug!(
            records = records.len(),
            acknowledged = acks.len(),
            refused = records.len() - acks.len(),
            retries,
            "the repository answered a batch"
        );
        report.acknowledged += acks.len();
        *report
            .taken_by
            .entry(client.endpoint_at(at).to_owned())
            .or_default() += acks.len();
        depth = depth.saturating_sub(acks.len() as u64);
        report.batches += 1;
        if !acker.mark(acks) {
            // The marking thread stopped on an error; `finish` returns it.
            break Ok(());
        }
    };
    let mut report = finish(result, in_flight, acker, spool, report)?;
    heartbeat(spool, client, options.backoff, &mut report).await?;
    Ok(report)
}

/// Ends every successful run: an empty batch with the spool's depth as the run leaves it and the
/// records held back. With nothing to send it is the run's only call, so a wrong token, endpoint
/// or CA fails this run rather than the first one that has records; after batches it tells the
/// central the depth after them (each batch reports the depth before its own acknowledgement,
/// which the gauge would otherwise keep). An empty `Submit` is answered with no outcomes by every
/// repository version, old ones included (they ignore the held fields).
async fn heartbeat(
    spool: &Spool,
    client: &Client,
    backoff: Backoff,
    report: &mut ShipReport,
) -> Result<(), ShipError> {
    let depth = spool.depth()?;
    let held = spool.held()?;
    let held_count = spool.held_count()?;
    let step = if report.batches == 0 {
        "nothing to send; calling the repository with an empty batch"
    } else {
        "reporting the spool's depth after the run with an empty batch"
    };
    tracing::debug!(spool_depth = depth, held = held_count, "{step}");
    let request = EncodedSubmitRequest {
        records: Vec::new(),
        spool_depth: Some(depth),
        held_count: Some(held_count),
        held: held
            .into_iter()
            .take(crate::repository::contacts::MAX_HELD_REPORTED)
            .map(|held| proto::HeldRecord {
                record_id: held.record.id().to_string(),
                reason: held.reason,
                since: held.held_at,
            })
            .collect(),
    };
    let (response, retries, at) = submit_with_retries(client.clone(), request, backoff).await?;
    report.retries += retries;
    report
        .taken_by
        .entry(client.endpoint_at(at).to_owned())
        .or_default();
    if !response.outcomes.is_empty() {
        return Err(ShipError::Protocol {
            endpoint: client.endpoint_at(at).to_owned(),
            message: format!(
                "answered {} outcomes for an empty batch",
                response.outcomes.len()
            ),
        });
    }
    report.heartbeat = true;
    Ok(())
}

/// Abandons the calls still on the wire and waits until every acknowledgement received is marked
/// in the spool; a failure to mark comes before the run's own result (the records stay pending).
fn finish(
    result: Result<(), ShipError>,
    in_flight: VecDeque<InFlight>,
    acker: Acker,
    spool: &Spool,
    report: ShipReport,
) -> Result<ShipReport, ShipError> {
    for abandoned in in_flight {
        abandoned.abort();
    }
    acker.finish(spool)?;
    result.map(|()| report)
}

/// The request for a batch, from the records' stored encodings.
fn request(records: &[PendingRecord], spool_depth: u64) -> EncodedSubmitRequest {
    EncodedSubmitRequest {
        records: records.iter().map(|p| p.wire.clone()).collect(),
        spool_depth: Some(spool_depth),
        ..EncodedSubmitRequest::default()
    }
}

/// The acknowledgements in the repository's answer; refused records are logged and reported.
fn receipts(
    client: &Client,
    records: &[PendingRecord],
    response: &proto::SubmitResponse,
    report: &mut ShipReport,
) -> Result<Vec<Ack>, ShipError> {
    if response.outcomes.len() != records.len() {
        return Err(ShipError::Protocol {
            endpoint: client.endpoint().to_owned(),
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
                    identity: pending
                        .record()
                        .map_or_else(|| pending.id.to_string(), |r| r.identity().to_string()),
                    kind,
                    reason,
                };
                // One line per record only at -v: a token that names another site has every
                // record refused, and `accelfed ship` warns once per kind with a count.
                tracing::debug!(
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
    Ok(acks)
}

/// One batch, with retries on failures a retry can help. Hands the records back with the answer
/// (the records' acknowledgements are written by the caller, in sending order).
async fn submit(
    client: Client,
    records: Vec<PendingRecord>,
    spool_depth: u64,
    backoff: Backoff,
) -> (Vec<PendingRecord>, Result<Answer, ShipError>) {
    let answer = submit_with_retries(client, request(&records, spool_depth), backoff).await;
    (records, answer)
}
