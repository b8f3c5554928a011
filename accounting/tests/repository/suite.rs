//! The tests themselves, written once against `Repository`.

use accelfed_accounting::report::{Report, ReportFormat, TextFormat, render_svg};
use accelfed_accounting::repository::{
    Dimension, IngestOptions, Period, Repository, SummaryFilter, SummaryQuery, SummaryRow, Totals,
};
use accelfed_accounting::wire::convert::record_to_proto;
use accelfed_accounting::wire::encoded::decode_submission;
use accelfed_accounting::wire::proto;
use accelfed_accounting::wire::{Outcome, Rejection, Submission};
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::{Month, UsageRecord, sample};
use chrono::{TimeZone, Utc};
use prost::Message;

const SITE: &str = "CESNET-MCC";

fn site() -> SiteName {
    SiteName::new(SITE).unwrap()
}

fn options() -> IngestOptions {
    IngestOptions {
        max_batch: 1000,
        now: Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap(),
    }
}

/// A record of `site` for `vo` on `model` in 2026-`month`: `gpus` GPUs for `hours` hours, half
/// of them active.
fn record(resource: &str, vo: &str, model: &str, month: u32, gpus: f64, hours: u64) -> UsageRecord {
    let mut r = sample::record(resource);
    r.vo = Some(VoName::new(vo).unwrap());
    r.model = GpuModel::new(model).unwrap();
    r.month = Month::new(2026, month).unwrap();
    r.first_seen = Utc.with_ymd_and_hms(2026, month, 1, 0, 0, 0).unwrap();
    r.last_seen = r.first_seen + chrono::Duration::hours(hours as i64);
    r.count = GpuCount::new(gpus).unwrap();
    r.available_duration = hours * 3600;
    r.active_duration = Some(hours * 1800);
    r
}

/// Six records over two VOs, two models and three months.
fn workload() -> Vec<UsageRecord> {
    vec![
        record("vm-1", "atlas", "A100", 1, 2.0, 100),
        record("vm-2", "atlas", "A100", 2, 1.0, 50),
        record("vm-3", "atlas", "H100", 2, 4.0, 10),
        record("vm-4", "cms", "A100", 1, 0.5, 200),
        record("vm-5", "cms", "H100", 3, 1.0, 300),
        record("vm-6", "cms", "H100", 3, 1.0, 1),
    ]
}

async fn ingest(repo: &Repository, records: Vec<UsageRecord>) -> Vec<Outcome> {
    let batch = records.into_iter().map(Submission::from).collect();
    repo.ingest(&site(), batch, options())
        .await
        .unwrap()
        .outcomes
}

async fn by(repo: &Repository, group_by: Vec<Dimension>, filter: SummaryFilter) -> Vec<SummaryRow> {
    repo.summaries(SummaryQuery { group_by, filter })
        .await
        .unwrap()
}

async fn total(repo: &Repository) -> Totals {
    let rows = by(repo, vec![], SummaryFilter::default()).await;
    rows.first().map(|r| r.totals).unwrap_or_default()
}

/// (key, GPU-hours, records) per group, for compact assertions.
fn hours(rows: &[SummaryRow], dimension: Dimension) -> Vec<(String, f64, i64)> {
    rows.iter()
        .map(|r| {
            (
                r.key.get(dimension).unwrap(),
                r.totals.gpu_hours(),
                r.totals.records,
            )
        })
        .collect()
}

fn reason(outcome: &Outcome) -> &Rejection {
    match outcome {
        Outcome::Rejected { reason } => reason,
        other => panic!("expected a rejection, got {other:?}"),
    }
}

pub async fn ingest_stores_and_summarises(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let outcomes = ingest(repo, workload()).await;
    assert_eq!(outcomes, vec![Outcome::Stored; 6]);
    let t = total(repo).await;
    assert_eq!(t.records, 6);
    // 200 + 50 + 40 + 100 + 300 + 1 GPU-hours.
    assert_eq!(t.gpu_hours(), 691.0);
    assert_eq!(t.active_gpu_hours(), Some(345.5));
    assert_eq!(t.mean_gpus(), Some(9.5 / 6.0));
}

pub async fn identical_resend_changes_nothing(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    let before = by(
        repo,
        vec![Dimension::Vo, Dimension::Month],
        SummaryFilter::default(),
    )
    .await;
    let outcomes = ingest(repo, workload()).await;
    assert_eq!(outcomes, vec![Outcome::Unchanged; 6]);
    let after = by(
        repo,
        vec![Dimension::Vo, Dimension::Month],
        SummaryFilter::default(),
    )
    .await;
    assert_eq!(before, after);
}

pub async fn changed_resend_replaces_and_moves_totals(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    // vm-1 ran longer than first reported, and was re-mapped from atlas to cms.
    let mut grown = record("vm-1", "cms", "A100", 1, 2.0, 150);
    grown.active_duration = None;
    let outcomes = ingest(repo, vec![grown]).await;
    assert_eq!(outcomes, vec![Outcome::Replaced]);
    let t = total(repo).await;
    assert_eq!(t.records, 6, "a replacement is not a new record");
    assert_eq!(t.gpu_hours(), 791.0);
    assert_eq!(t.active_records, 5);
    let vos = by(repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    assert_eq!(
        hours(&vos, Dimension::Vo),
        vec![("atlas".into(), 90.0, 2), ("cms".into(), 701.0, 4)]
    );
}

pub async fn mixed_batch_of_new_and_stored_records(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let records = workload();
    ingest(repo, records[..3].to_vec()).await;
    let mut changed = records[1].clone();
    changed.available_duration += 3600;
    changed.last_seen += chrono::Duration::hours(1);
    let batch = vec![
        records[0].clone(),
        changed,
        records[3].clone(),
        records[4].clone(),
    ];
    let outcomes = ingest(repo, batch).await;
    assert_eq!(
        outcomes,
        vec![
            Outcome::Unchanged,
            Outcome::Replaced,
            Outcome::Stored,
            Outcome::Stored
        ]
    );
    let t = total(repo).await;
    assert_eq!(t.records, 5);
    assert_eq!(t.gpu_hours(), 200.0 + 51.0 + 40.0 + 100.0 + 300.0);
    // And a later all-new batch still goes in.
    assert_eq!(
        ingest(repo, vec![records[5].clone()]).await,
        vec![Outcome::Stored]
    );
    assert_eq!(total(repo).await.records, 6);
}

pub async fn other_sites_records_are_refused_per_record(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let mut records = workload();
    records[2].site = SiteName::new("PRAGUE-GPU").unwrap();
    let outcomes = ingest(repo, records).await;
    assert!(matches!(
        reason(&outcomes[2]),
        Rejection::WrongSite { record, authenticated } if record == "PRAGUE-GPU" && authenticated == SITE
    ));
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Stored).count(),
        5
    );
    let sites = by(repo, vec![Dimension::Site], SummaryFilter::default()).await;
    assert_eq!(
        hours(&sites, Dimension::Site),
        vec![(SITE.into(), 651.0, 5)]
    );
}

pub async fn bad_records_are_refused_with_reasons(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let good = workload();
    // Received as the service receives them: protobuf, decoded and checked entry by entry.
    let changed = |r: &UsageRecord, change: fn(&mut proto::UsageRecord)| {
        let mut received = record_to_proto(r);
        change(&mut received);
        decode_submission(&received.encode_to_vec())
    };
    let future = accelfed_schemas::usage::sample::in_month(
        record("vm-f", "atlas", "A100", 1, 1.0, 1),
        Month::new(2026, 8).unwrap(),
    );
    let mut too_active = good[1].clone();
    too_active.active_duration = Some(too_active.available_duration + 1);
    let batch = vec![
        Submission::from(good[0].clone()),
        decode_submission(&[0xff, 0xff, 0xff]),
        changed(&good[1], |r| r.month = 13),
        Submission::from(future),
        changed(&good[2], |r| r.available_duration = -3600),
        changed(&good[3], |r| r.count = f64::NAN),
        changed(&good[3], |r| r.count = -2.0),
        Submission::from(too_active),
        Submission::from(good[4].clone()),
    ];
    let outcomes = repo
        .ingest(&site(), batch, options())
        .await
        .unwrap()
        .outcomes;
    let kinds: Vec<&str> = outcomes
        .iter()
        .map(|o| match o {
            Outcome::Stored => "stored",
            Outcome::Rejected { reason } => match reason {
                Rejection::Malformed { .. } => "malformed",
                Rejection::BadMonth { .. } => "month",
                Rejection::Future { .. } => "future",
                Rejection::BadDuration { .. } => "duration",
                Rejection::BadCount { .. } => "count",
                other => panic!("unexpected {other:?}"),
            },
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "stored",
            "malformed",
            "month",
            "future",
            "duration",
            "count",
            "count",
            "duration",
            "stored"
        ]
    );
    // Every reason reads as a sentence a site admin can act on.
    assert!(reason(&outcomes[2]).to_string().contains("1..=12"));
    assert!(reason(&outcomes[7]).to_string().contains("ActiveDuration"));
    let t = total(repo).await;
    assert_eq!((t.records, t.gpu_hours()), (2, 500.0));
}

pub async fn oversized_batch_stores_up_to_the_limit(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let batch: Vec<Submission> = (0..7)
        .map(|i| record(&format!("vm-{i}"), "atlas", "A100", 1, 1.0, 1).into())
        .collect();
    let limited = IngestOptions {
        max_batch: 5,
        ..options()
    };
    let outcomes = repo.ingest(&site(), batch, limited).await.unwrap().outcomes;
    assert_eq!(outcomes[..5], vec![Outcome::Stored; 5]);
    assert_eq!(reason(&outcomes[5]), &Rejection::BatchTooLarge { limit: 5 });
    assert_eq!(reason(&outcomes[6]), &Rejection::BatchTooLarge { limit: 5 });
    assert_eq!(total(repo).await.records, 5);
}

pub async fn reports_by_each_dimension_with_filters(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    let all = SummaryFilter::default;
    let vos = by(repo, vec![Dimension::Vo], all()).await;
    assert_eq!(
        hours(&vos, Dimension::Vo),
        vec![("atlas".into(), 290.0, 3), ("cms".into(), 401.0, 3)]
    );
    let models = by(repo, vec![Dimension::Model], all()).await;
    assert_eq!(
        hours(&models, Dimension::Model),
        vec![("A100".into(), 350.0, 3), ("H100".into(), 341.0, 3)]
    );
    let months = by(repo, vec![Dimension::Month], all()).await;
    assert_eq!(
        hours(&months, Dimension::Month),
        vec![
            ("2026-01".into(), 300.0, 2),
            ("2026-02".into(), 90.0, 2),
            ("2026-03".into(), 301.0, 2)
        ]
    );
    let sites = by(repo, vec![Dimension::Site], all()).await;
    assert_eq!(
        hours(&sites, Dimension::Site),
        vec![(SITE.into(), 691.0, 6)]
    );

    let feb_on = SummaryFilter {
        from: Some("2026-02".parse().unwrap()),
        to: Some("2026-03".parse().unwrap()),
        ..all()
    };
    let vos = by(repo, vec![Dimension::Vo], feb_on.clone()).await;
    assert_eq!(
        hours(&vos, Dimension::Vo),
        vec![("atlas".into(), 90.0, 2), ("cms".into(), 301.0, 2)]
    );
    let cms_models = by(
        repo,
        vec![Dimension::Model],
        SummaryFilter {
            vo: Some("cms".into()),
            ..feb_on
        },
    )
    .await;
    assert_eq!(
        hours(&cms_models, Dimension::Model),
        vec![("H100".into(), 301.0, 2)]
    );
    let elsewhere = by(
        repo,
        vec![Dimension::Vo],
        SummaryFilter {
            site: Some("PRAGUE-GPU".into()),
            ..all()
        },
    )
    .await;
    assert!(elsewhere.is_empty());
}

pub async fn report_formats_render_repository_data(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    let rows = by(repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    let report = Report::from_rows(Dimension::Vo, None, None, &rows);
    let csv = report.render(TextFormat::Csv);
    assert!(csv.starts_with("vo,records,gpu_hours,mean_gpus,active_gpu_hours"));
    assert!(csv.contains("\r\natlas,3,290.000,2.333,145.000,290.000,50.0\r\n"));
    let json: serde_json::Value = serde_json::from_str(&report.render(TextFormat::Json)).unwrap();
    assert_eq!(json["rows"][1]["vo"], "cms");
    assert_eq!(json["total"]["gpu_hours"], 691.0);
    let table = report.render(TextFormat::Table);
    assert!(table.lines().last().unwrap().starts_with("TOTAL"));
    assert_eq!("svg".parse::<ReportFormat>(), Ok(ReportFormat::Svg));
    let per_month = by(
        repo,
        vec![Dimension::Vo, Dimension::Month],
        SummaryFilter::default(),
    )
    .await;
    let svg = render_svg(Dimension::Vo, &per_month, None, None);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">atlas (290)</text>") && svg.contains(">cms (401)</text>"));
}

pub async fn sync_counts_per_month(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    let counts = repo.sync_counts(SITE).await.unwrap();
    let counts: Vec<(Period, i64)> = counts.iter().map(|c| (c.period, c.records)).collect();
    assert_eq!(
        counts,
        vec![
            ("2026-01".parse().unwrap(), 2),
            ("2026-02".parse().unwrap(), 2),
            ("2026-03".parse().unwrap(), 2)
        ]
    );
    assert!(repo.sync_counts("PRAGUE-GPU").await.unwrap().is_empty());
}

pub async fn reopening_keeps_data_and_schema(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    // Opening again runs the migrations again: they must find nothing to do and keep the data.
    let again = Repository::open(&fixture.location).await.unwrap();
    assert_eq!(total(&again).await.records, 6);
    assert_eq!(
        ingest(&again, workload()).await,
        vec![Outcome::Unchanged; 6]
    );
}

/// Batches of one site sent at once, as a shipper with several batches in flight sends them. The
/// repository takes batches in flight together in the order they reach it, which need not be the
/// order they were sent, so which copy of a record sent twice is `Stored` and which `Unchanged`
/// may vary; each record is counted once whatever the order.
pub async fn batches_sent_at_once_count_each_record_once(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let vm = |n: u32| record(&format!("vm-{n}"), "atlas", "A100", 1, 1.0, 10);
    let batch = |ids: &mut dyn Iterator<Item = u32>| ids.map(vm).collect::<Vec<_>>();
    // The first ten records of `first` again, unchanged, with ten new ones.
    let (first, second, third, resent) = tokio::join!(
        ingest(repo, batch(&mut (1..=50))),
        ingest(repo, batch(&mut (51..=100))),
        ingest(repo, batch(&mut (101..=110))),
        ingest(repo, batch(&mut (1..=10).chain(111..=120))),
    );
    assert_eq!(second, vec![Outcome::Stored; 50]);
    assert_eq!(third, vec![Outcome::Stored; 10]);
    assert_eq!(resent[10..], vec![Outcome::Stored; 10]);
    assert_eq!(first[10..], vec![Outcome::Stored; 40]);
    for n in 0..10 {
        let pair = [&first[n], &resent[n]];
        assert!(
            pair.contains(&&Outcome::Stored) && pair.contains(&&Outcome::Unchanged),
            "vm-{}: one copy stored, the other unchanged: {pair:?}",
            n + 1
        );
    }
    let t = total(repo).await;
    assert_eq!(t.records, 120);
    assert_eq!(t.gpu_hours(), 1200.0);
    // Three batches of new records alone, at once: each on the all-new path.
    let (f, g, h) = tokio::join!(
        ingest(repo, batch(&mut (200..220))),
        ingest(repo, batch(&mut (300..320))),
        ingest(repo, batch(&mut (400..420)))
    );
    for outcomes in [f, g, h] {
        assert_eq!(outcomes, vec![Outcome::Stored; 20]);
    }
    let t = total(repo).await;
    assert_eq!(t.records, 180);
    assert_eq!(t.gpu_hours(), 1800.0);
}

/// Seven MIG `1g.10gb` slices of one A100 for all of February 2026 (Count 1/7 each): the summaries
/// hold exactly one GPU-month, 672 GPU-hours (Count rounded to thousandths would give 672.672), the
/// sharing is kept (a record re-sent with another sharing is a new version), and the capacity check
/// passes until an eighth record puts a second GPU-month on the one installed GPU.
pub async fn shares_sum_exactly_and_capacity_is_checked(fixture: &crate::Fixture) {
    use accelfed_schemas::gpu::Sharing;
    use accelfed_schemas::names::Text;
    let repo = &fixture.repo;
    let slice = Sharing::Mig {
        profile: Text::new("1g.10gb").unwrap(),
        slices: 1,
        of: 7,
    };
    let slices: Vec<UsageRecord> = (0..7)
        .map(|i| {
            let mut r = record(
                &format!("pod-{i}"),
                "atlas",
                "NVIDIA A100-SXM4-80GB",
                2,
                1.0,
                672,
            );
            r.count = GpuCount::new(1.0 / 7.0).unwrap();
            r.sharing = slice.clone();
            r.installed = Some(GpuCount::whole(1));
            r
        })
        .collect();
    assert_eq!(ingest(repo, slices.clone()).await, vec![Outcome::Stored; 7]);
    assert_eq!(total(repo).await.gpu_hours(), 672.0);
    assert_eq!(
        ingest(repo, slices.clone()).await,
        vec![Outcome::Unchanged; 7]
    );
    let mut resized = slices[0].clone();
    resized.sharing = Sharing::TimeSlicing { replicas: 7 };
    assert_eq!(ingest(repo, vec![resized]).await, vec![Outcome::Replaced]);
    assert_eq!(total(repo).await.gpu_hours(), 672.0);

    let checked = repo
        .capacity_check(SummaryFilter {
            model: Some("A100".into()),
            ..SummaryFilter::default()
        })
        .await
        .unwrap();
    assert_eq!((checked.checked, checked.unchecked), (1, 0));
    assert!(checked.breaches.is_empty(), "{:?}", checked.breaches);

    let mut whole = record("node-9", "cms", "NVIDIA A100-SXM4-80GB", 2, 1.0, 672);
    whole.installed = Some(GpuCount::whole(1));
    assert_eq!(ingest(repo, vec![whole]).await, vec![Outcome::Stored]);
    let checked = repo.capacity_check(SummaryFilter::default()).await.unwrap();
    assert_eq!(checked.breaches.len(), 1, "{checked:?}");
    let breach = checked.breaches[0].to_string();
    assert!(
        breach.contains("CESNET-MCC 2026-02") && breach.contains("1344.000"),
        "{breach}"
    );
}
