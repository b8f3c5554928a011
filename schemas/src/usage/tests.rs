use chrono::{Duration, TimeZone, Utc};

use super::sample::record;
use super::*;
use crate::gpu::GpuCount;

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 15, 12, 0, 0).unwrap()
}

#[test]
fn the_sample_is_valid_and_counts_gpu_seconds() {
    let mut r = record("vm-1");
    r.validate(now()).unwrap();
    assert_eq!(r.gpu_seconds(), 864_000.0);
    r.count = GpuCount::new(0.5).unwrap();
    assert_eq!(r.gpu_seconds(), 432_000.0);
    assert_eq!(r.gpu_hours(), 120.0);
}

#[test]
fn the_id_follows_the_identity_only() {
    let a = record("vm-1");
    let mut b = a.clone();
    b.available_duration += 60;
    b.count = GpuCount::whole(2);
    b.vo = None;
    b.source = Source::Kubernetes;
    assert_eq!(a.id(), b.id(), "values are not identity");
    let mut c = a.clone();
    c.month = Month::new(2026, 2).unwrap();
    assert_ne!(a.id(), c.id());
    assert_eq!(a.id(), a.identity().id());
}

fn problem_of(r: &UsageRecord) -> (String, Problem) {
    let err = r.validate(now()).unwrap_err();
    assert_eq!(err.id, r.id());
    (err.to_string(), err.problem)
}

#[test]
fn available_duration_longer_than_the_month_is_refused() {
    let mut r = record("vm-1");
    r.available_duration = 31 * 86_400;
    r.validate(now()).unwrap();
    r.available_duration += 1;
    let (text, problem) = problem_of(&r);
    assert!(matches!(problem, Problem::AvailableTooLong { .. }));
    assert!(text.contains("AvailableDuration 2678401 s"), "{text}");
    assert!(text.contains(r.id().as_str()), "{text}");
    assert!(text.contains("vm-1"), "{text}");

    let mut r = sample::in_month(r, Month::new(2024, 2).unwrap());
    r.available_duration = 29 * 86_400 + 1;
    assert!(matches!(problem_of(&r).1, Problem::AvailableTooLong { .. }));
}

#[test]
fn active_longer_than_available_is_refused() {
    let mut r = record("vm-1");
    r.active_duration = Some(r.available_duration + 1);
    let (text, problem) = problem_of(&r);
    assert!(matches!(problem, Problem::ActiveTooLong { .. }));
    assert!(text.contains("ActiveDuration"), "{text}");
}

#[test]
fn future_months_are_refused_the_current_one_is_not() {
    let r = sample::in_month(record("vm-1"), Month::new(2026, 3).unwrap());
    r.validate(now()).unwrap();
    let r = sample::in_month(r, Month::new(2026, 4).unwrap());
    let (text, problem) = problem_of(&r);
    assert!(matches!(problem, Problem::FutureMonth { .. }));
    assert!(text.contains("2026-04 is in the future"), "{text}");
}

#[test]
fn zero_counts_bad_benchmarks_and_reversed_times_are_refused() {
    let mut r = record("vm-1");
    r.count = GpuCount::ZERO;
    assert!(matches!(problem_of(&r).1, Problem::Count(_)));

    let mut r = record("vm-1");
    r.benchmark = Some(Benchmark {
        kind: crate::names::Text::new("hepscore23").unwrap(),
        value: f64::NAN,
    });
    assert!(matches!(problem_of(&r).1, Problem::Benchmark(_)));

    let mut r = record("vm-1");
    r.last_seen = r.first_seen - Duration::seconds(1);
    assert!(matches!(problem_of(&r).1, Problem::SeenOrder { .. }));
}

#[test]
fn serde_round_trips_with_our_field_names() {
    let mut r = record("vm-1");
    r.count = GpuCount::new(0.5).unwrap();
    r.benchmark = Some(Benchmark {
        kind: crate::names::Text::new("hepscore23").unwrap(),
        value: 12.5,
    });
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["year"], 2026);
    assert_eq!(json["month"], 1);
    assert_eq!(json["record_type"], "cloud");
    assert_eq!(json["accelerator_type"], "GPU");
    assert_eq!(json["count"], 0.5);
    assert_eq!(json["source"], "openstack");
    assert_eq!(json["benchmark"]["type"], "hepscore23");
    assert_eq!(json["first_seen"], "2026-01-05T00:00:00Z");
    let back: UsageRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);

    let mut minimal = record("vm-2");
    minimal.global_user_name = None;
    minimal.fqan = None;
    minimal.vo = None;
    minimal.cores = None;
    minimal.active_duration = None;
    let text = serde_json::to_string(&minimal).unwrap();
    assert!(!text.contains("fqan") && !text.contains("cores"), "{text}");
    assert_eq!(serde_json::from_str::<UsageRecord>(&text).unwrap(), minimal);
}

/// Deserialises `record("vm-1")` with one field replaced, returning the error text.
fn refused(field: &str, value: serde_json::Value) -> String {
    let mut json = serde_json::to_value(record("vm-1")).unwrap();
    json[field] = value;
    serde_json::from_value::<UsageRecord>(json)
        .unwrap_err()
        .to_string()
}

#[test]
fn deserialising_refuses_bad_values_naming_field_and_record() {
    let id = record("vm-1").id();
    let text = refused("global_user_name", "".into());
    assert!(
        text.contains("GlobalUserName: text must not be empty"),
        "{text}"
    );
    assert!(text.contains(id.as_str()), "{text}");

    let text = refused("month", 13.into());
    assert!(
        text.contains("MeasurementMonth must be 1..=12, got 13"),
        "{text}"
    );
    assert!(text.contains("usage record "), "{text}");

    let text = refused("site", "".into());
    assert!(
        text.contains("SiteName: site name must not be empty"),
        "{text}"
    );
    let text = refused("associated_record", " vm".into());
    assert!(text.contains("AssociatedRecord"), "{text}");
    let text = refused("model", "".into());
    assert!(text.contains("Model"), "{text}");
    let text = refused("fqan", "atlas".into());
    assert!(text.contains("FQAN"), "{text}");
    let text = refused("vo", "".into());
    assert!(text.contains("VO: VO name must not be empty"), "{text}");
    let text = refused("count", (-1.0).into());
    assert!(
        text.contains("Count must be a finite number above zero, got -1"),
        "{text}"
    );
    let text = refused("available_duration", (32 * 86_400).into());
    assert!(text.contains("AvailableDuration"), "{text}");
    let text = refused("record_type", "vm".into());
    assert!(text.contains("unknown variant"), "{text}");
}

#[test]
fn sharing_is_kept_in_json_and_old_spools_read_as_whole_gpus() {
    use crate::gpu::{GpuCount, Sharing};
    use crate::names::Text;
    let mut slice = record("pod-1");
    slice.count = GpuCount::new(3.0 / 7.0).unwrap();
    slice.sharing = Sharing::Mig {
        profile: Text::new("3g.40gb").unwrap(),
        slices: 3,
        of: 7,
    };
    slice.installed = Some(GpuCount::whole(4));
    let json = serde_json::to_value(&slice).unwrap();
    assert_eq!(
        json["sharing"],
        serde_json::json!({"mode": "mig", "profile": "3g.40gb", "slices": 3, "of": 7})
    );
    assert_eq!(json["installed"], 4.0);
    let back: UsageRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, slice, "the unrounded count and the sharing survive");

    // A whole-GPU record writes no sharing, and a record written before the field reads as whole.
    let whole = serde_json::to_value(record("vm-1")).unwrap();
    assert!(whole.get("sharing").is_none() && whole.get("installed").is_none());
    let old: UsageRecord = serde_json::from_value(whole).unwrap();
    assert_eq!(old.sharing, Sharing::Whole);

    let mut impossible = serde_json::to_value(&slice).unwrap();
    impossible["sharing"]["slices"] = 8.into();
    let err = serde_json::from_value::<UsageRecord>(impossible)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("sharing: MIG profile 3g.40gb holds 8 of 7"),
        "{err}"
    );
}

#[test]
fn seen_times_that_leave_the_month_are_refused() {
    // The whole month, to its last instant, is inside it.
    let mut r = record("vm-1");
    r.first_seen = r.month.start();
    r.last_seen = r.month.end();
    r.validate(now()).unwrap();

    // January's record seen in May (the case).
    let mut r = record("vm-1");
    r.first_seen = Utc.with_ymd_and_hms(2026, 5, 1, 0, 0, 0).unwrap();
    r.last_seen = Utc.with_ymd_and_hms(2026, 5, 2, 0, 0, 0).unwrap();
    let (text, problem) = problem_of(&r);
    assert!(matches!(problem, Problem::SeenOutsideMonth { .. }));
    assert!(text.contains("leaves the record's month 2026-01"), "{text}");

    // One second before the month starts.
    let mut r = record("vm-1");
    r.first_seen = r.month.start() - Duration::seconds(1);
    assert!(matches!(problem_of(&r).1, Problem::SeenOutsideMonth { .. }));
}

#[test]
fn counts_below_the_smallest_share_are_refused() {
    let mut r = record("vm-1");
    for share in [1.0 / 32.0, 0.0004, 1e-9] {
        r.count = GpuCount::new(share).unwrap();
        r.validate(now()).unwrap();
    }
    for tiny in [1e-300, 1e-12, 0.999e-9] {
        r.count = GpuCount::new(tiny).unwrap();
        let (text, problem) = problem_of(&r);
        assert!(matches!(problem, Problem::CountBelowShare(_)), "{tiny}");
        assert!(text.contains("smallest share"), "{text}");
    }
}

#[test]
fn known_idle_time_fits_the_hold_beside_any_active_time() {
    let mut r = record("vm-1");
    r.active_duration = None;
    r.idle_duration = Some(r.available_duration);
    assert!(r.validate(now()).is_ok(), "all of it known idle");
    r.idle_duration = Some(r.available_duration + 1);
    let (text, problem) = problem_of(&r);
    assert!(matches!(problem, Problem::IdleTooLong { .. }));
    assert!(text.contains("IdleDuration 864001 s"), "{text}");
    // Beside an ActiveDuration, the two together fit in AvailableDuration.
    r.active_duration = Some(3_600);
    r.idle_duration = Some(r.available_duration - 3_600);
    assert!(r.validate(now()).is_ok());
    r.idle_duration = Some(r.available_duration - 3_599);
    let (text, _) = problem_of(&r);
    assert!(text.contains("with ActiveDuration 3600 s"), "{text}");
    // Spools and senders older than the field: none known.
    let json = serde_json::to_value(record("vm-1")).unwrap();
    assert!(json.get("idle_duration").is_none(), "{json}");
}
