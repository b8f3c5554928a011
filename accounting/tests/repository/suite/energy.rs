//! Energy per record: stored, summed per group in exact milliwatt-hours, moved by replacements,
//! and absent (not 0) for groups whose records carry none.

use accelfed_accounting::repository::{Dimension, SummaryFilter};
use accelfed_accounting::wire::Outcome;

use super::{SITE, by, ingest, record, total, workload};

pub async fn energy_is_stored_summed_and_replaced_exactly(fixture: &crate::Fixture) {
    let repo = &fixture.repo;
    let mut records = workload();
    // atlas's vm-1 and vm-2 measured; cms's records did not.
    records[0].energy_wh = Some(70_000.125);
    records[1].energy_wh = Some(12.5);
    assert_eq!(ingest(repo, records).await, vec![Outcome::Stored; 6]);
    let t = total(repo).await;
    assert_eq!((t.energy_records, t.energy_wh()), (2, Some(70_012.625)));
    let vos = by(repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    let energy: Vec<_> = vos.iter().map(|r| r.totals.energy_wh()).collect();
    assert_eq!(energy, [Some(70_012.625), None], "cms: absent, not 0");

    // vm-1 grows and its energy with it; vm-2 is sent again without (an older meter): the
    // summaries move by exactly the difference.
    let mut grown = record("vm-1", "atlas", "A100", 1, 2.0, 150);
    grown.energy_wh = Some(105_000.0);
    let plain = record("vm-2", "atlas", "A100", 2, 1.0, 50);
    assert_eq!(
        ingest(repo, vec![grown, plain]).await,
        vec![Outcome::Replaced, Outcome::Replaced]
    );
    let t = total(repo).await;
    assert_eq!((t.energy_records, t.energy_wh()), (1, Some(105_000.0)));

    let page = repo.site_records(SITE, 1, 10).await.unwrap();
    let stored: Vec<_> = page
        .records
        .iter()
        .map(|r| (r.associated_record.as_str(), r.energy_wh))
        .filter(|(_, energy)| energy.is_some())
        .collect();
    assert_eq!(stored, [("vm-1", Some(105_000.0))]);
}
