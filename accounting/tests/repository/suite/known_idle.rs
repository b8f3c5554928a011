//! Known-idle time (IdleDuration, schema 8): stored, summed per group and per user in exact
//! milli-GPU-seconds only for records without an ActiveDuration, moved by replacements; and a
//! repository of schema 7 migrated with its figures unchanged and its new columns at 0.

use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryRow, Totals};
use accelfed_accounting::wire::Outcome;
use accelfed_schemas::names::Text;

use super::rollup::{execute, rollup};
use super::{by, ingest, record, total, workload};

const HOUR: u64 = 3_600;

/// Makes the repository at `location` look like one of schema 7: no known-idle columns, nor the
/// report generations of schema 9 (the runner applies the versions above the highest recorded).
pub(super) const BACK_TO_SCHEMA_7: &str = "DROP TABLE report_generations;
     ALTER TABLE records DROP COLUMN idle_seconds;
     ALTER TABLE summaries DROP COLUMN known_idle_records;
     ALTER TABLE summaries DROP COLUMN known_idle_gpu_milli_seconds;
     ALTER TABLE user_summaries DROP COLUMN known_idle_records;
     ALTER TABLE user_summaries DROP COLUMN known_idle_gpu_milli_seconds;
     DELETE FROM schema_migrations WHERE version IN (8, 9);";

pub async fn known_idle_time_is_summed_replaced_and_migrated(fixture: &crate::Fixture) {
    // Schema 7's figures survive migration 8 unchanged, the new columns 0.
    let mut records = workload();
    for record in &mut records {
        record.global_user_name = Some(Text::new("user-1").unwrap());
    }
    assert_eq!(
        ingest(&fixture.repo, records).await,
        vec![Outcome::Stored; 6]
    );
    let before = by(&fixture.repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    let users_before = rollup(&fixture.repo).await;
    execute(&fixture.location, BACK_TO_SCHEMA_7).await;
    let repo = Repository::open(&fixture.location).await.unwrap();
    let after = by(&repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    assert_eq!(after, before, "figures unchanged by migration 8");
    assert_eq!(rollup(&repo).await, users_before);
    assert!(after.iter().all(|row| row.totals.known_idle_records == 0));

    // A VM ACTIVE 10 h, SHUTOFF 5 h, ACTIVE 3 h on 2 GPUs: 18 h held, activity unknown, 5 h known
    // idle; 2 x 5 h = 36,000,000 milli-GPU-seconds. A record with an ActiveDuration adds no known
    // idle time (its idle time is AvailableDuration - ActiveDuration).
    let mut stopped = record("vm-os", "atlas", "A100", 4, 2.0, 18);
    stopped.global_user_name = Some(Text::new("user-1").unwrap());
    stopped.active_duration = None;
    stopped.idle_duration = Some(5 * HOUR);
    let mut measured = record("vm-dcgm", "atlas", "A100", 4, 1.0, 10);
    measured.idle_duration = Some(HOUR);
    let start = total(&repo).await;
    assert_eq!(
        ingest(&repo, vec![stopped.clone(), measured]).await,
        vec![Outcome::Stored; 2]
    );
    let grown = delta(total(&repo).await, start);
    assert_eq!(
        (grown.known_idle_records, grown.known_idle_gpu_milli_seconds),
        (1, 36_000_000)
    );
    assert_eq!(grown.gpu_milli_seconds, 2 * 18 * 3_600_000 + 10 * 3_600_000);

    // The server stopped longer on a resend: the figure moves exactly.
    stopped.idle_duration = Some(7 * HOUR);
    assert_eq!(
        ingest(&repo, vec![stopped.clone()]).await,
        [Outcome::Replaced]
    );
    let moved = delta(total(&repo).await, start);
    assert_eq!(moved.known_idle_gpu_milli_seconds, 2 * 7 * 3_600_000);
    // Idle time no longer known (a resend without it): the record leaves the known-idle count.
    stopped.idle_duration = None;
    assert_eq!(ingest(&repo, vec![stopped]).await, [Outcome::Replaced]);
    let gone = delta(total(&repo).await, start);
    assert_eq!(
        (gone.known_idle_records, gone.known_idle_gpu_milli_seconds),
        (0, 0)
    );

    // The user rollup keeps the same figures as the summaries.
    let mut again = record("vm-os-2", "atlas", "A100", 4, 2.0, 18);
    again.global_user_name = Some(Text::new("user-2").unwrap());
    again.active_duration = None;
    again.idle_duration = Some(5 * HOUR);
    assert_eq!(ingest(&repo, vec![again]).await, [Outcome::Stored]);
    let users: Vec<SummaryRow> = rollup(&repo).await;
    let user_2: Totals = users
        .iter()
        .filter(|row| row.key.user.as_deref() == Some("user-2"))
        .map(|row| row.totals)
        .fold(Totals::default(), |mut sum, t| {
            sum += t;
            sum
        });
    assert_eq!(user_2.known_idle_gpu_milli_seconds, 36_000_000);
    let vos = by(&repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    for vo in &vos {
        let mut sum = Totals::default();
        for row in users.iter().filter(|row| row.key.vo == vo.key.vo) {
            sum += row.totals;
        }
        assert_eq!(sum, vo.totals, "{:?}", vo.key.vo);
    }
}

fn delta(mut now: Totals, start: Totals) -> Totals {
    now -= start;
    now
}
