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
fn sharing_and_installed_survive_the_round_trip_and_old_senders_mean_whole() {
    use accelfed_schemas::gpu::GpuCount;
    for sharing in [
        Sharing::Mig {
            profile: Text::new("3g.40gb").unwrap(),
            slices: 3,
            of: 7,
        },
        Sharing::TimeSlicing { replicas: 8 },
        Sharing::Mps { replicas: 4 },
        Sharing::Vgpu {
            vgpu_type: Text::new("GRID A100-10C").unwrap(),
            per_gpu: 4,
        },
        Sharing::Fraction,
        Sharing::Whole,
    ] {
        let mut record = sample::record("vm-1");
        record.count = GpuCount::new(sharing.physical_share()).unwrap();
        record.sharing = sharing;
        record.installed = Some(GpuCount::whole(8));
        let back = record_from_proto(record_to_proto(&record));
        assert_eq!(back, Submission::from(record));
    }
    let whole = record_to_proto(&sample::record("vm-1"));
    assert_eq!(
        whole.sharing, None,
        "whole GPUs encode as before the fields"
    );
    let mut unknown = whole.clone();
    unknown.sharing = Some("sliced".into());
    assert_eq!(kind(&record_from_proto(unknown)), "bad_field");
    let mut incomplete = whole;
    incomplete.sharing = Some("mig".into());
    incomplete.sharing_parts = Some(3);
    let Submission::Invalid(reason) = record_from_proto(incomplete) else {
        panic!("a MIG record without its profile was accepted")
    };
    assert!(reason.to_string().contains("sharing_name"), "{reason}");
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
    proto.first_seen = "yesterday".into();
    assert_eq!(kind(&record_from_proto(proto.clone())), "bad_field");
    proto.first_seen = proto.last_seen.clone();
    proto.benchmark_type = Some("hepscore23".into());
    proto.benchmark = None;
    assert_eq!(kind(&record_from_proto(proto.clone())), "bad_field");
    proto.benchmark = Some(f64::NAN);
    assert_eq!(kind(&record_from_proto(proto.clone())), "bad_field");
    let mut benchmarked = record_to_proto(&sample::record("vm-1"));
    benchmarked.benchmark_type = Some("hepscore23".into());
    benchmarked.benchmark = Some(12.5);
    assert_eq!(kind(&record_from_proto(benchmarked)), "record");
    proto.site = String::new();
    assert_eq!(kind(&record_from_proto(proto.clone())), "bad_field");
    proto.site = "CESNET-MCC".into();
    // A year out of range is a bad month, as month 13 is (1969 was `malformed` on the JSON
    // path the tests once used).
    for year in [1969, 1999] {
        proto.year = year;
        assert_eq!(
            kind(&record_from_proto(proto.clone())),
            "bad_month",
            "{year}"
        );
    }
    proto.year = 2026;
    proto.site = "CESNET-MCC".into();
    proto.record_type = "vm".into();
    let Submission::Invalid(reason) = record_from_proto(proto) else {
        panic!("accepted an unknown record type")
    };
    assert!(reason.to_string().contains("vm"), "{reason}");
}

#[test]
fn a_megabyte_value_gives_a_short_reason() {
    let huge = "x".repeat(1 << 20);
    let base = record_to_proto(&sample::record("vm-1"));
    type Change = fn(&mut proto::UsageRecord, &str);
    let cases: [(&str, Change); 9] = [
        ("site", |r, v| {
            r.site = v.into();
            r.first_seen = "yesterday".into();
        }),
        ("associated_record", |r, v| {
            r.associated_record = v.into();
            r.sharing = Some("mig".into());
        }),
        ("first_seen", |r, v| r.first_seen = v.into()),
        ("record_type", |r, v| r.record_type = v.into()),
        ("source", |r, v| r.source = v.into()),
        ("sharing", |r, v| r.sharing = Some(v.into())),
        ("benchmark_type", |r, v| r.benchmark_type = Some(v.into())),
        ("accelerator_type", |r, v| r.accelerator_type = v.into()),
        ("model", |r, v| r.model = v.into()),
    ];
    for (field, change) in cases {
        let mut received = base.clone();
        change(&mut received, &huge);
        let Submission::Invalid(reason) = record_from_proto(received) else {
            panic!("{field}: a megabyte value was accepted")
        };
        let text = reason.to_string();
        assert!(text.len() < 1_000, "{field}: {} bytes", text.len());
        assert!(text.contains("xxxx..."), "{field}: no excerpt in {text}");
    }
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

/// The record as a sender or repository older than `energy_wh` (field 25) declares it: enough of
/// it to carry a record's identity and figures.
#[derive(Clone, PartialEq, prost::Message)]
struct OldUsageRecord {
    #[prost(string, tag = "1")]
    site: String,
    #[prost(string, tag = "3")]
    associated_record: String,
    #[prost(double, tag = "8")]
    count: f64,
    #[prost(int64, tag = "11")]
    available_duration: i64,
}

#[test]
fn energy_survives_the_round_trip_and_old_shapes_mean_none() {
    use prost::Message;
    let mut record = sample::record("vm-1");
    record.energy_wh = Some(1234.5);
    let proto = record_to_proto(&record);
    assert_eq!(
        record_from_proto(proto.clone()),
        Submission::from(record.clone())
    );
    // An older repository decodes a new sender's message: field 25 is skipped, the rest read.
    let old = OldUsageRecord::decode(proto.encode_to_vec().as_slice()).unwrap();
    assert_eq!(
        (old.associated_record.as_str(), old.available_duration),
        ("vm-1", 864_000)
    );
    // An older sender's message (no field 25) is a record without energy, not one of 0 Wh.
    let mut without = proto;
    without.energy_wh = None;
    let bytes = without.encode_to_vec();
    let decoded = proto::UsageRecord::decode(bytes.as_slice()).unwrap();
    record.energy_wh = None;
    assert_eq!(record_from_proto(decoded), Submission::from(record.clone()));
    // A bad figure is refused with the field named.
    let mut bad = record_to_proto(&record);
    bad.energy_wh = Some(-1.0);
    let Submission::Invalid(reason) = record_from_proto(bad) else {
        panic!("a negative energy was accepted");
    };
    assert!(reason.to_string().contains("EnergyWh"), "{reason}");
}

#[test]
fn known_idle_survives_the_round_trip_and_old_shapes_mean_none() {
    use prost::Message;
    let mut record = sample::record("vm-1");
    record.active_duration = None;
    record.idle_duration = Some(18_000);
    let proto = record_to_proto(&record);
    assert_eq!(proto.idle_duration, Some(18_000));
    assert_eq!(
        record_from_proto(proto.clone()),
        Submission::from(record.clone())
    );
    // An older repository decodes a new sender's message: field 26 is skipped, the rest read.
    let old = OldUsageRecord::decode(proto.encode_to_vec().as_slice()).unwrap();
    assert_eq!(
        (old.associated_record.as_str(), old.available_duration),
        ("vm-1", 864_000)
    );
    // An older sender's message (no field 26) is a record with nothing known idle.
    let mut without = proto;
    without.idle_duration = None;
    let decoded = proto::UsageRecord::decode(without.encode_to_vec().as_slice()).unwrap();
    record.idle_duration = None;
    assert_eq!(record_from_proto(decoded), Submission::from(record.clone()));
    // Negative, or longer than the hold: refused, the field named.
    let mut bad = record_to_proto(&record);
    bad.idle_duration = Some(-1);
    let Submission::Invalid(reason) = record_from_proto(bad.clone()) else {
        panic!("a negative idle time was accepted");
    };
    assert!(reason.to_string().contains("idle_duration"), "{reason}");
    bad.idle_duration = Some(864_001);
    let Submission::Invalid(reason) = record_from_proto(bad) else {
        panic!("more idle than held was accepted");
    };
    assert!(
        reason.to_string().contains("IdleDuration 864001"),
        "{reason}"
    );
}
