//! Usage records and outcomes to and from their protobuf form.
//!
//! A received record goes through the JSON serde form of [`UsageRecord`] (the same path as the
//! spool's and the repository's decoding), so a bad value is refused with the record's id and the
//! APEL field at fault, one record at a time, never by failing the whole message.

use serde_json::{Map, Value};

use accelfed_schemas::usage::UsageRecord;

use super::proto;
use crate::repository::{Outcome, Rejection, Submission};

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
    }
}

/// A received record, decoded and checked like any other submission.
pub fn record_from_proto(record: proto::UsageRecord) -> Submission {
    for (field, text) in [
        ("first_seen", &record.first_seen),
        ("last_seen", &record.last_seen),
    ] {
        if chrono::DateTime::parse_from_rfc3339(text).is_err() {
            return Submission::Invalid(Rejection::BadField {
                detail: format!(
                    "{field} {text:?} of {} {} is not an RFC 3339 time",
                    record.site, record.associated_record
                ),
            });
        }
    }
    Submission::from_value(record_to_value(record))
}

fn record_to_value(r: proto::UsageRecord) -> Value {
    let mut map = Map::new();
    map.insert("site".into(), r.site.into());
    map.insert("record_type".into(), r.record_type.into());
    map.insert("associated_record".into(), r.associated_record.into());
    map.insert("model".into(), r.model.into());
    map.insert("year".into(), r.year.into());
    map.insert("month".into(), r.month.into());
    map.insert("accelerator_type".into(), r.accelerator_type.into());
    // A NaN or infinite count has no JSON number: keep it as text so the check names it.
    map.insert(
        "count".into(),
        serde_json::Number::from_f64(r.count)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(r.count.to_string())),
    );
    if let Some(cores) = r.cores {
        map.insert("cores".into(), cores.into());
    }
    if let Some(active) = r.active_duration {
        map.insert("active_duration".into(), active.into());
    }
    map.insert("available_duration".into(), r.available_duration.into());
    for (key, value) in [
        ("global_user_name", r.global_user_name),
        ("fqan", r.fqan),
        ("vo", r.vo),
    ] {
        if let Some(value) = value {
            map.insert(key.into(), value.into());
        }
    }
    match (r.benchmark_type, r.benchmark) {
        (None, None) => {}
        (kind, value) => {
            let mut benchmark = Map::new();
            benchmark.insert("type".into(), kind.unwrap_or_default().into());
            benchmark.insert(
                "value".into(),
                value
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
            );
            map.insert("benchmark".into(), Value::Object(benchmark));
        }
    }
    map.insert("source".into(), r.source.into());
    map.insert("first_seen".into(), r.first_seen.into());
    map.insert("last_seen".into(), r.last_seen.into());
    Value::Object(map)
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
mod tests {
    use accelfed_schemas::usage::sample;

    use super::*;

    fn kind(submission: &Submission) -> String {
        match submission {
            Submission::Invalid(reason) => rejection_kind(reason),
            Submission::Record(_) => "record".to_owned(),
        }
    }

    #[test]
    fn a_record_survives_the_round_trip() {
        let record = sample::record("vm-1");
        let back = record_from_proto(record_to_proto(&record));
        assert_eq!(back, Submission::from(record));
    }

    #[test]
    fn bad_values_are_refused_with_their_field() {
        let mut proto = record_to_proto(&sample::record("vm-1"));
        proto.month = 13;
        assert_eq!(kind(&record_from_proto(proto.clone())), "bad_month");
        proto.month = 1;
        proto.available_duration = -5;
        assert_eq!(kind(&record_from_proto(proto.clone())), "bad_duration");
        proto.available_duration = 60;
        proto.count = f64::NAN;
        assert_eq!(kind(&record_from_proto(proto.clone())), "bad_count");
        proto.count = -1.0;
        assert_eq!(kind(&record_from_proto(proto.clone())), "bad_count");
        proto.count = 1.0;
        proto.record_type = "vm".into();
        let Submission::Invalid(reason) = record_from_proto(proto) else {
            panic!("accepted an unknown record type")
        };
        assert!(reason.to_string().contains("vm"), "{reason}");
    }

    #[test]
    fn outcomes_round_trip() {
        assert_eq!(
            outcome_from_proto(&outcome_to_proto(&Outcome::Unchanged)),
            Received::Acknowledged
        );
        let rejected = Outcome::Rejected {
            reason: Rejection::BatchTooLarge { limit: 10 },
        };
        let Received::Rejected { kind, reason } = outcome_from_proto(&outcome_to_proto(&rejected))
        else {
            panic!("not rejected")
        };
        assert_eq!(kind, "batch_too_large");
        assert!(reason.contains("10"), "{reason}");
    }
}
