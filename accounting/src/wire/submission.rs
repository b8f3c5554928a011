//! What a site submits: records already decoded, or messages that could not be. Keeping the
//! undecodable ones in the batch keeps every outcome at its record's position, so a site learns
//! which of its records were refused and why.

use accelfed_schemas::usage::UsageRecord;
use serde_json::Value;

use super::outcome::Rejection;

/// One submitted record.
#[derive(Debug, Clone, PartialEq)]
pub enum Submission {
    /// A decoded record (boxed: records are large and batches move them around).
    Record(Box<UsageRecord>),
    /// A message that is not a usage record, with the reason.
    Invalid(Rejection),
}

impl From<UsageRecord> for Submission {
    fn from(record: UsageRecord) -> Self {
        Self::Record(Box::new(record))
    }
}

impl Submission {
    /// Decodes one record in the JSON serde form of [`UsageRecord`]. Common mistakes get a specific
    /// reason (month out of range, negative duration, bad count); anything else is `Malformed`
    /// with the decoder's message, which names the record id and field where it can.
    pub fn from_json(text: &[u8]) -> Self {
        match serde_json::from_slice(text) {
            Ok(value) => Self::from_value(value),
            Err(error) => Self::Invalid(Rejection::Malformed {
                detail: error.to_string(),
            }),
        }
    }

    /// Decodes one record from a JSON value in the serde form of [`UsageRecord`] (the gRPC
    /// service builds one from each protobuf record), with the same reasons as [`Self::from_json`].
    pub fn from_value(value: Value) -> Self {
        if let Some(rejection) = precheck(&value) {
            return Self::Invalid(rejection);
        }
        match serde_json::from_value::<UsageRecord>(value) {
            Ok(record) => record.into(),
            Err(error) => Self::Invalid(Rejection::Malformed {
                detail: error.to_string(),
            }),
        }
    }
}

/// Reasons a person can act on, for values the decoder would only call "invalid".
fn precheck(value: &Value) -> Option<Rejection> {
    let Some(object) = value.as_object() else {
        return Some(Rejection::Malformed {
            detail: "expected a JSON object".to_owned(),
        });
    };
    if let Some(month) = object.get("month").and_then(Value::as_i64)
        && !(1..=12).contains(&month)
    {
        return Some(Rejection::BadMonth {
            detail: format!("MeasurementMonth must be 1..=12, got {month}"),
        });
    }
    for field in ["available_duration", "active_duration"] {
        if let Some(n) = object.get(field).and_then(Value::as_f64)
            && n < 0.0
        {
            return Some(Rejection::BadDuration {
                detail: format!("{field} must not be negative, got {n}"),
            });
        }
    }
    match object.get("count") {
        Some(Value::Number(n)) if n.as_f64().is_some_and(|c| c > 0.0) => None,
        Some(other) => Some(Rejection::BadCount {
            detail: format!("Count must be a finite number above zero, got {other}"),
        }),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_with(field: &str, value: Value) -> Vec<u8> {
        let record = accelfed_schemas::usage::sample::record("vm-1");
        let mut json = serde_json::to_value(&record).unwrap();
        json[field] = value;
        serde_json::to_vec(&json).unwrap()
    }

    #[test]
    fn decodes_a_valid_record() {
        let record = accelfed_schemas::usage::sample::record("vm-1");
        let json = serde_json::to_vec(&record).unwrap();
        assert_eq!(Submission::from_json(&json), Submission::from(record));
    }

    #[test]
    fn names_the_problem() {
        let kind = |s: Submission| match s {
            Submission::Invalid(r) => serde_json::to_value(&r).unwrap()["kind"].clone(),
            Submission::Record(_) => Value::Null,
        };
        assert_eq!(kind(Submission::from_json(b"{not json")), "malformed");
        assert_eq!(kind(Submission::from_json(b"[1]")), "malformed");
        assert_eq!(
            kind(Submission::from_json(&json_with("month", 13.into()))),
            "bad_month"
        );
        assert_eq!(
            kind(Submission::from_json(&json_with(
                "available_duration",
                (-5).into()
            ))),
            "bad_duration"
        );
        assert_eq!(
            kind(Submission::from_json(&json_with("count", (-1).into()))),
            "bad_count"
        );
        assert_eq!(
            kind(Submission::from_json(&json_with("count", "NaN".into()))),
            "bad_count"
        );
        assert_eq!(
            kind(Submission::from_json(&json_with("model", "".into()))),
            "malformed"
        );
    }
}
