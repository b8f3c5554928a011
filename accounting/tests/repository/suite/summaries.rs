//! What the repository gives back: summaries by each dimension, reports, sync counts, a reopened
//! store, batches sent at once, shares and the capacity check.

use accelfed_accounting::report::{Grouping, Report, ReportFormat, TextFormat, render_svg};
use accelfed_accounting::repository::{Dimension, Period, Repository, SummaryFilter};
use accelfed_accounting::wire::Outcome;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::usage::UsageRecord;

use super::{SITE, by, hours, ingest, record, total, workload};

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
    let report = Report::from_rows(Grouping::one(Dimension::Vo), None, None, &rows);
    let csv = report.render(TextFormat::Csv);
    assert!(csv.starts_with("vo,records,gpu_hours,mean_gpus,active_gpu_hours"));
    assert!(csv.contains("\r\natlas,3,290.000,2.333,145.000,290.000,50.0,145.000\r\n"));
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

/// A report by user reads the user rollup, not the summaries: per VO it adds up to the summaries'
/// figures exactly, under the same filters (the model matched by words, as summaries match it).
pub async fn reports_by_user_add_up_to_the_summaries(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let mut records = workload();
    for (i, record) in records.iter_mut().enumerate() {
        record.global_user_name =
            Some(accelfed_schemas::names::Text::new(format!("user-{}", i % 2)).unwrap());
    }
    ingest(repo, records).await;
    let all = SummaryFilter::default;
    let per_vo = by(repo, vec![Dimension::Vo], all()).await;
    let per_vo_user = by(repo, vec![Dimension::Vo, Dimension::User], all()).await;
    assert_eq!(per_vo_user.len(), 4, "{per_vo_user:?}");
    for vo in &per_vo {
        let mut sum = accelfed_accounting::repository::Totals::default();
        for row in per_vo_user.iter().filter(|row| row.key.vo == vo.key.vo) {
            assert!(
                row.key
                    .user
                    .as_deref()
                    .is_some_and(|u| u.starts_with("user-"))
            );
            sum += row.totals;
        }
        assert_eq!(sum, vo.totals, "{:?}", vo.key.vo);
    }
    let narrow = || SummaryFilter {
        vo: Some("atlas".into()),
        model: Some("A100".into()),
        from: Some("2026-02".parse().unwrap()),
        ..SummaryFilter::default()
    };
    let users = by(repo, vec![Dimension::User], narrow()).await;
    let summed = by(repo, vec![], narrow()).await;
    let mut sum = accelfed_accounting::repository::Totals::default();
    for row in &users {
        sum += row.totals;
    }
    assert_eq!(sum, summed[0].totals);
    assert_eq!(
        hours(&users, Dimension::User),
        vec![("user-1".into(), 50.0, 1)]
    );
}

/// A site's records page by page, in month then record-id order, each once.
pub async fn a_sites_records_page_by_page(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    ingest(repo, workload()).await;
    let first = repo.site_records(SITE, 1, 4).await.unwrap();
    let second = repo.site_records(SITE, 2, 4).await.unwrap();
    assert!(first.more && !second.more);
    assert_eq!((first.records.len(), second.records.len()), (4, 2));
    let months: Vec<&str> = first
        .records
        .iter()
        .chain(&second.records)
        .map(|r| r.month.as_str())
        .collect();
    assert_eq!(
        months,
        [
            "2026-01", "2026-01", "2026-02", "2026-02", "2026-03", "2026-03"
        ]
    );
    let mut resources: Vec<&str> = first
        .records
        .iter()
        .chain(&second.records)
        .map(|r| r.associated_record.as_str())
        .collect();
    resources.sort();
    resources.dedup();
    assert_eq!(resources.len(), 6);
    let vm1 = first
        .records
        .iter()
        .find(|r| r.associated_record == "vm-1")
        .unwrap();
    assert_eq!((vm1.gpus, vm1.gpu_hours), (2.0, 200.0));
    assert!(
        repo.site_records("ELSEWHERE", 1, 4)
            .await
            .unwrap()
            .records
            .is_empty()
    );
}
