//! Usage records and outcomes to and from their protobuf form.
//!
//! A received record goes through the unchecked form of [`UsageRecord`] (the same conversion the
//! spool's and the repository's JSON decoding use), so a bad value is refused with the record's id
//! and the APEL field at fault, one record at a time, never by failing the whole message.

use serde_json::Value;

use accelfed_schemas::excerpt::{excerpt, shorten_quotes};
use accelfed_schemas::gpu::Sharing;
use accelfed_schemas::names::Text;
use accelfed_schemas::usage::{RawBenchmark, RawRecord, UsageRecord};

use super::proto;
use super::{Outcome, Rejection, Submission};

/// The protobuf form of `record`.
pub fn record_to_proto(record: &UsageRecord) -> proto::UsageRecord {
    let benchmark = record.benchmark.as_ref();
    proto::UsageRecord {
        site: record.site.to_string(),
        record_type: record.record_type.as_str().to_owned(),
        associated_record: record.associated_record.to_string(),
        model: record.model.to_string(),
        year: record.month.year(),
        month: i32::try_from(record.month.month()).unwrap_or(0),
        accelerator_type: record.accelerator_type.as_str().to_owned(),
        count: record.count.get(),
        cores: record.cores,
        active_duration: record
            .active_duration
            .map(|d| i64::try_from(d).unwrap_or(i64::MAX)),
        available_duration: i64::try_from(record.available_duration).unwrap_or(i64::MAX),
        global_user_name: record.global_user_name.as_ref().map(ToString::to_string),
        fqan: record.fqan.as_ref().map(ToString::to_string),
        vo: record.vo.as_ref().map(ToString::to_string),
        benchmark_type: benchmark.map(|b| b.kind.to_string()),
        benchmark: benchmark.map(|b| b.value),
        source: record.source.as_str().to_owned(),
        first_seen: record
            .first_seen
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        last_seen: record
            .last_seen
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
        installed: record.installed.map(|gpus| gpus.get()),
        energy_wh: record.energy_wh,
        // Seconds within a month: far below i64::MAX.
        idle_duration: record.idle_duration.map(|idle| idle as i64),
        ..sharing_to_proto(&record.sharing)
    }
}

/// The sharing fields of a record's protobuf form (the others default); none for whole GPUs, so a
/// whole-GPU record encodes as it did before the fields existed.
fn sharing_to_proto(sharing: &Sharing) -> proto::UsageRecord {
    let (name, parts, of) = match sharing {
        Sharing::Whole => return proto::UsageRecord::default(),
        Sharing::Fraction => (None, None, None),
        Sharing::Mig {
            profile,
            slices,
            of,
        } => (Some(profile.to_string()), Some(*slices), Some(*of)),
        Sharing::TimeSlicing { replicas } | Sharing::Mps { replicas } => {
            (None, Some(*replicas), None)
        }
        Sharing::Vgpu { vgpu_type, per_gpu } => (Some(vgpu_type.to_string()), Some(*per_gpu), None),
    };
    proto::UsageRecord {
        sharing: Some(sharing.mode().to_owned()),
        sharing_name: name,
        sharing_parts: parts,
        sharing_of: of,
        ..Default::default()
    }
}

/// The sharing a received record names; absent is whole GPUs.
fn sharing_from_proto(r: &proto::UsageRecord) -> Result<Sharing, Rejection> {
    let fail = |what: &str| Rejection::BadField {
        detail: format!(
            "sharing {:?} of {}: {what}",
            excerpt(r.sharing.as_deref().unwrap_or("whole")),
            whose(r)
        ),
    };
    let name = || {
        r.sharing_name
            .as_deref()
            .ok_or_else(|| fail("sharing_name is missing"))
            .and_then(|name| Text::new(name).map_err(|err| fail(&err.to_string())))
    };
    let parts = || {
        r.sharing_parts
            .ok_or_else(|| fail("sharing_parts is missing"))
    };
    Ok(match r.sharing.as_deref() {
        None | Some("whole") => Sharing::Whole,
        Some("fraction") => Sharing::Fraction,
        Some("mig") => Sharing::Mig {
            profile: name()?,
            slices: parts()?,
            of: r.sharing_of.ok_or_else(|| fail("sharing_of is missing"))?,
        },
        Some("time-slicing") => Sharing::TimeSlicing { replicas: parts()? },
        Some("mps") => Sharing::Mps { replicas: parts()? },
        Some("vgpu") => Sharing::Vgpu {
            vgpu_type: name()?,
            per_gpu: parts()?,
        },
        Some(_) => {
            return Err(fail(
                "not one of whole, mig, time-slicing, mps, vgpu, fraction",
            ));
        }
    })
}

/// A received record, decoded and checked like any other submission: the protobuf fields fill the
/// record's unchecked form ([`RawRecord`]), whose conversion is the one every encoding goes through.
/// Values the unchecked form cannot hold (a month outside 1..12, a negative duration, a NaN count,
/// an unknown type, a time that is not RFC 3339) are refused here with the codes that
/// `From<UsageError> for Rejection` gives the same problems (`bad_month`, `bad_duration`,
/// `bad_count`, `bad_field`).
pub fn record_from_proto(record: proto::UsageRecord) -> Submission {
    match raw_from_proto(record) {
        Ok(raw) => match UsageRecord::try_from(raw) {
            Ok(record) => record.into(),
            Err(error) => Submission::Invalid(Rejection::from(error)),
        },
        Err(rejection) => Submission::Invalid(rejection),
    }
}

fn raw_from_proto(r: proto::UsageRecord) -> Result<RawRecord, Rejection> {
    if !(1..=12).contains(&r.month) {
        return Err(Rejection::BadMonth {
            detail: format!("MeasurementMonth must be 1..=12, got {}", r.month),
        });
    }
    let duration = |field: &str, n: i64| {
        u64::try_from(n).map_err(|_| Rejection::BadDuration {
            detail: format!("{field} must not be negative, got {n}"),
        })
    };
    let available_duration = duration("available_duration", r.available_duration)?;
    let active_duration = r
        .active_duration
        .map(|n| duration("active_duration", n))
        .transpose()?;
    let idle_duration = r
        .idle_duration
        .map(|n| duration("idle_duration", n))
        .transpose()?;
    if !(r.count.is_finite() && r.count > 0.0) {
        return Err(Rejection::BadCount {
            detail: format!("Count must be a finite number above zero, got {}", r.count),
        });
    }
    let time = |field: &str, text: &str| {
        chrono::DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&chrono::Utc))
            .map_err(|_| Rejection::BadField {
                detail: format!(
                    "{field} {:?} of {} is not an RFC 3339 time",
                    excerpt(text),
                    whose(&r)
                ),
            })
    };
    let first_seen = time("first_seen", &r.first_seen)?;
    let last_seen = time("last_seen", &r.last_seen)?;
    let sharing = sharing_from_proto(&r)?;
    let benchmark = match (r.benchmark_type, r.benchmark) {
        (None, None) => None,
        (Some(kind), Some(value)) => Some(RawBenchmark { kind, value }),
        (kind, value) => {
            return Err(Rejection::BadField {
                detail: format!(
                    "benchmark_type ({:?}) and benchmark ({value:?}) come together or not at all",
                    kind.as_deref().map(excerpt)
                ),
            });
        }
    };
    Ok(RawRecord {
        sharing,
        installed: r.installed,
        energy_wh: r.energy_wh,
        record_type: closed("record_type", &r.record_type)?,
        accelerator_type: closed("accelerator_type", &r.accelerator_type)?,
        source: closed("source", &r.source)?,
        site: r.site,
        associated_record: r.associated_record,
        model: r.model,
        year: r.year,
        month: r.month.unsigned_abs(),
        count: r.count,
        cores: r.cores,
        active_duration,
        available_duration,
        idle_duration,
        global_user_name: r.global_user_name,
        fqan: r.fqan,
        vo: r.vo,
        benchmark,
        first_seen,
        last_seen,
    })
}

/// A value of one of the record's closed sets, read by its serde spelling.
fn closed<'de, T: serde::Deserialize<'de>>(field: &str, text: &'de str) -> Result<T, Rejection> {
    let deserializer =
        serde::de::value::BorrowedStrDeserializer::<serde::de::value::Error>::new(text);
    T::deserialize(deserializer).map_err(|error| Rejection::BadField {
        // serde quotes the refused value whole: ``unknown variant `...` ``.
        detail: format!("{field}: {}", shorten_quotes(&error.to_string())),
    })
}

/// The record a reason is about, site and id, each cut to an excerpt: the values are the sender's
/// and may be megabytes long.
fn whose(r: &proto::UsageRecord) -> String {
    format!("{} {}", excerpt(&r.site), excerpt(&r.associated_record))
}

/// The protobuf form of one outcome.
pub fn outcome_to_proto(outcome: &Outcome) -> proto::RecordOutcome {
    let status = match outcome {
        Outcome::Stored => proto::Status::Stored,
        Outcome::Replaced => proto::Status::Replaced,
        Outcome::Unchanged => proto::Status::Unchanged,
        Outcome::Rejected { .. } => proto::Status::Rejected,
    };
    let (reason_kind, reason) = match outcome {
        Outcome::Rejected { reason } => (rejection_kind(reason), reason.to_string()),
        _ => (String::new(), String::new()),
    };
    proto::RecordOutcome {
        status: status as i32,
        reason_kind,
        reason,
    }
}

/// The snake_case kind of a rejection (`wrong_site`, `bad_month`, ...), as in its serde form.
pub fn rejection_kind(rejection: &Rejection) -> String {
    serde_json::to_value(rejection)
        .ok()
        .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "rejected".to_owned())
}

/// What the site learns from one outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Received {
    /// The repository holds this version (stored, replaced or unchanged).
    Acknowledged,
    /// Refused: kind and sentence.
    Rejected { kind: String, reason: String },
}

/// Reads one outcome; an unknown status is a rejection (the record stays in the spool).
pub fn outcome_from_proto(outcome: &proto::RecordOutcome) -> Received {
    match proto::Status::try_from(outcome.status) {
        Ok(proto::Status::Stored | proto::Status::Replaced | proto::Status::Unchanged) => {
            Received::Acknowledged
        }
        Ok(proto::Status::Rejected) => Received::Rejected {
            kind: outcome.reason_kind.clone(),
            reason: outcome.reason.clone(),
        },
        Ok(proto::Status::Unspecified) | Err(_) => Received::Rejected {
            kind: "unknown_status".to_owned(),
            reason: format!("the repository answered status {}", outcome.status),
        },
    }
}

#[cfg(test)]
mod tests;
