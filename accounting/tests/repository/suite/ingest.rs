//! What ingest stores, replaces and refuses, per record and per batch.

use accelfed_accounting::repository::{Dimension, IngestOptions, SummaryFilter};
use accelfed_accounting::wire::convert::record_to_proto;
use accelfed_accounting::wire::encoded::decode_submission;
use accelfed_accounting::wire::proto;
use accelfed_accounting::wire::{Outcome, Rejection, Submission};
use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::{Month, UsageRecord};
use prost::Message;

use super::{SITE, by, hours, ingest, options, reason, record, site, total, workload};

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
