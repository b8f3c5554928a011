//! Checks of a pushed document's times and names, which need the time of the push and the
//! configured limits (`[registry] max_clock_skew_s`, `max_validity_s`):
//!
//! * a CreationTime further in the future than the allowed clock skew is a site's clock gone
//!   wrong: taken, it would keep the document fresh long after it stopped being true;
//! * a Validity past the maximum would do the same on purpose, and one large enough makes the
//!   expiry fall past year 9999, which is not RFC 3339 text (chrono writes `+262142-...`);
//! * an ID, a Name or an association with a control character, and a Name past
//!   [`MAX_NAME_CHARS`](accelfed_schemas::names::MAX_NAME_CHARS) characters, are refused as they are in configuration ([`accelfed_schemas::names`]):
//!   they end up in LDAP DNs, web pages and logs.
//!
//! With both limits kept, every time the API derives from a stored document (expiry, freshness)
//! stays within a few days of the push, so the answers' dates are RFC 3339.

use chrono::{DateTime, TimeDelta, Utc};

use accelfed_schemas::excerpt::excerpt;
use accelfed_schemas::glue::entity::{Entity, Value};
use accelfed_schemas::glue::from_json::ParsedDocument;
use accelfed_schemas::names::LocalId;

use super::check::Rejection;

/// The clock skew allowed unless configured: 5 minutes, what NTP-less hosts drift in months.
pub const DEFAULT_MAX_CLOCK_SKEW_S: u64 = 300;
/// The longest Validity accepted unless configured: 7 days (accelfed writes 3600).
pub const DEFAULT_MAX_VALIDITY_S: u64 = 7 * 24 * 3600;

/// The limits on a pushed document's times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLimits {
    pub max_clock_skew_s: u64,
    pub max_validity_s: u64,
}

impl Default for TimeLimits {
    fn default() -> Self {
        Self {
            max_clock_skew_s: DEFAULT_MAX_CLOCK_SKEW_S,
            max_validity_s: DEFAULT_MAX_VALIDITY_S,
        }
    }
}

/// The first entity of `parsed` whose CreationTime lies past `now` plus the skew, or whose
/// Validity is past the maximum.
pub fn check_times(
    parsed: &ParsedDocument,
    now: DateTime<Utc>,
    limits: TimeLimits,
) -> Result<(), Rejection> {
    let skew = TimeDelta::try_seconds(i64::try_from(limits.max_clock_skew_s).unwrap_or(i64::MAX))
        .unwrap_or(TimeDelta::MAX);
    let latest = now
        .checked_add_signed(skew)
        .unwrap_or(DateTime::<Utc>::MAX_UTC);
    for (entity, stamp) in parsed.entities.iter().zip(&parsed.stamps) {
        if stamp.creation_time > latest {
            return Err(Rejection::Time(format!(
                "{} {}: CreationTime {} is in the future (received at {}; at most {} s of clock \
                 skew is allowed: check the clock of the host that made it)",
                entity.class.name(),
                excerpt(&entity.id),
                stamp
                    .creation_time
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                limits.max_clock_skew_s
            )));
        }
        if stamp.validity_s > limits.max_validity_s {
            return Err(Rejection::Time(format!(
                "{} {}: Validity {} s is longer than {} s, the registry's max_validity_s",
                entity.class.name(),
                excerpt(&entity.id),
                stamp.validity_s,
                limits.max_validity_s
            )));
        }
    }
    Ok(())
}

/// The first ID, Name or association target of `parsed` that configuration would refuse.
pub fn check_names(parsed: &ParsedDocument) -> Result<(), Rejection> {
    for entity in &parsed.entities {
        let refuse = |field: &str, problem: String| {
            Rejection::Name(format!(
                "{} {}: {field} {problem}",
                entity.class.name(),
                excerpt(&entity.id)
            ))
        };
        if entity.id.chars().any(char::is_control) {
            return Err(refuse("ID", "contains a control character".to_owned()));
        }
        if let Some(target) = targets(entity).find(|target| target.chars().any(char::is_control)) {
            return Err(refuse(
                "Associations",
                format!("name {} with a control character", excerpt(target)),
            ));
        }
        if let Some(Value::Text(name)) = entity.attribute("Name") {
            // A local id's rules: not empty, no control character, no padding, at most
            // MAX_NAME_CHARS; its message quotes an excerpt.
            if let Err(error) = LocalId::new(name.as_ref()) {
                let problem = error.to_string();
                let problem = problem.strip_prefix("local id ").unwrap_or(&problem);
                return Err(refuse("Name", problem.to_owned()));
            }
        }
    }
    Ok(())
}

fn targets<'e>(entity: &'e Entity<'_>) -> impl Iterator<Item = &'e str> {
    entity
        .associations
        .iter()
        .map(|(_, target)| target.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::glue::from_json;
    use accelfed_schemas::glue::sample;
    use accelfed_schemas::render::json;
    use chrono::TimeZone;
    use serde_json::Value as Json;

    /// The sample document, with every CreationTime set to `time` and every Validity to `validity`.
    fn document(time: &str, validity: u64) -> ParsedDocument {
        let mut json = json::document(&sample::snapshot("S"));
        for list in json.as_object_mut().unwrap().values_mut() {
            for entity in list.as_array_mut().unwrap() {
                entity["CreationTime"] = Json::from(time);
                entity["Validity"] = Json::from(validity);
            }
        }
        from_json::from_value(&json).unwrap()
    }

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap()
    }

    #[test]
    fn times_within_the_skew_and_validities_within_the_maximum_pass() {
        let limits = TimeLimits::default();
        // 12:05:00 is exactly now + 300 s: the last second allowed.
        check_times(&document("2026-11-01T12:05:00Z", 604_800), now(), limits).unwrap();
        check_times(&document("2026-10-01T00:00:00Z", 3600), now(), limits).unwrap();
    }

    #[test]
    fn a_future_creation_time_is_refused_with_the_times() {
        let error = check_times(
            &document("2026-11-01T12:05:01Z", 3600),
            now(),
            TimeLimits::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.contains("CreationTime 2026-11-01T12:05:01Z is in the future (received at 2026-11-01T12:00:00Z; at most 300 s"),
            "{error}"
        );
    }

    #[test]
    fn a_validity_past_the_maximum_is_refused_and_the_maximum_is_configurable() {
        let doc = document("2026-11-01T12:00:00Z", u64::MAX);
        let error = check_times(&doc, now(), TimeLimits::default())
            .unwrap_err()
            .to_string();
        assert!(
            error.ends_with(&format!(
                "Validity {} s is longer than 604800 s, the registry's max_validity_s",
                u64::MAX
            )),
            "{error}"
        );
        let short = TimeLimits {
            max_clock_skew_s: 0,
            max_validity_s: 60,
        };
        assert!(check_times(&document("2026-11-01T12:00:00Z", 61), now(), short).is_err());
        check_times(&document("2026-11-01T12:00:00Z", 60), now(), short).unwrap();
    }

    #[test]
    fn control_characters_and_long_names_are_refused_naming_the_entity() {
        let good = json::document(&sample::snapshot("S"));
        let refused = |json: &Json| {
            let parsed = from_json::from_value(json).unwrap();
            check_names(&parsed).unwrap_err().to_string()
        };
        check_names(&from_json::from_value(&good).unwrap()).unwrap();

        let mut json = good.clone();
        json["Location"][0]["Name"] = Json::from("Brno\u{0}");
        let error = refused(&json);
        assert!(error.starts_with("Location "), "{error}");
        assert!(
            error.ends_with("Name \"Brno\\0\" contains a control character"),
            "{error}"
        );

        let mut json = good.clone();
        json["Location"][0]["Name"] = Json::from("x".repeat(256));
        let error = refused(&json);
        assert!(
            error.contains("is 256 characters long, more than 255"),
            "{error}"
        );
        assert!(error.len() < 200, "{error}");
        // 255 characters is the limit, and passes.
        json["Location"][0]["Name"] = Json::from("x".repeat(255));
        check_names(&from_json::from_value(&json).unwrap()).unwrap();
    }
}
