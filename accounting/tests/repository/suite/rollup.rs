//! The user rollup (`user_summaries`, schema 7): kept on ingest as records arrive and are
//! replaced (a record whose user changes moves between users' rows), and rebuilt from the stored
//! records by the migration for a repository that had none, to the same integers, energy
//! included; from schema 6 (energy, no rollup) and from schema 5 (neither). Each step back first
//! undoes schema 8 (`known_idle.rs`).

use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryRow};
use accelfed_accounting::wire::Outcome;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::Text;

use super::known_idle::BACK_TO_SCHEMA_7;
use super::{by, ingest, record, workload};

/// Every row of the rollup, finest grouping.
pub(super) async fn rollup(repo: &Repository) -> Vec<SummaryRow> {
    let finest = vec![
        Dimension::Vo,
        Dimension::Site,
        Dimension::Model,
        Dimension::Month,
        Dimension::User,
    ];
    by(repo, finest, SummaryFilter::default()).await
}

/// Makes a repository of schema 7 look like one of schema 6: energy, no rollup.
const BACK_TO_SCHEMA_6: &str = "DROP TABLE user_summaries;
     DELETE FROM schema_migrations WHERE version = 7;";

/// Makes a repository of schema 6 look like one of schema 5: no energy columns either.
const BACK_TO_SCHEMA_5: &str = "ALTER TABLE records DROP COLUMN energy_wh;
     ALTER TABLE summaries DROP COLUMN energy_records;
     ALTER TABLE summaries DROP COLUMN energy_milli_wh;
     DELETE FROM schema_migrations WHERE version = 6;";

/// Runs `sql` on the repository at `location`, behind the repository's back.
pub(super) async fn execute(location: &str, sql: &str) {
    if location.contains("://") {
        let (client, connection) = tokio_postgres::connect(location, tokio_postgres::NoTls)
            .await
            .unwrap();
        let task = tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
        drop(client);
        let _ = task.await;
    } else {
        let conn = rusqlite::Connection::open(location).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        conn.execute_batch(sql).unwrap();
    }
}

pub async fn the_user_rollup_is_kept_on_ingest_and_rebuilt_by_the_migration(
    fixture: &crate::Fixture,
) {
    let repo = &fixture.repo;
    let mut records = workload();
    for (i, record) in records.iter_mut().enumerate() {
        record.global_user_name = (i != 5).then(|| Text::new(format!("user-{}", i % 2)).unwrap());
    }
    // A seventh of a GPU: GPU-time from the unrounded count, rounded once, in both paths.
    records.push(record("vm-7", "atlas", "H100", 3, 1.0 / 7.0, 333));
    // Energy where measured: milliwatt-hours rounded once, in both paths.
    records[1].energy_wh = Some(70_000.125);
    records[2].energy_wh = Some(12.3456);
    ingest(repo, records.clone()).await;
    // vm-1 goes to another user with other hours: out of user-0's row, into user-9's.
    let mut moved = records[0].clone();
    moved.global_user_name = Some(Text::new("user-9").unwrap());
    moved.count = GpuCount::new(3.0).unwrap();
    assert_eq!(ingest(repo, vec![moved]).await, vec![Outcome::Replaced]);

    let kept = rollup(repo).await;
    let user = |row: &SummaryRow| row.key.user.clone().unwrap();
    let users: Vec<String> = kept.iter().map(user).collect();
    assert!(users.contains(&"user-9".to_owned()), "{users:?}");
    assert!(
        users.contains(&String::new()),
        "a record of no user: {users:?}"
    );
    // The rollup adds up to the summaries, per VO.
    let per_vo = by(repo, vec![Dimension::Vo], SummaryFilter::default()).await;
    for vo in &per_vo {
        let mut sum = accelfed_accounting::repository::Totals::default();
        for row in kept.iter().filter(|row| row.key.vo == vo.key.vo) {
            sum += row.totals;
        }
        assert_eq!(sum, vo.totals, "{:?}", vo.key.vo);
    }

    assert!(kept.iter().any(|row| row.totals.energy_records > 0));

    execute(&fixture.location, BACK_TO_SCHEMA_7).await;
    execute(&fixture.location, BACK_TO_SCHEMA_6).await;
    let reopened = Repository::open(&fixture.location).await.unwrap();
    assert_eq!(rollup(&reopened).await, kept, "from schema 6");
    drop(reopened);

    // From schema 5 the records carry no energy any more: the same rollup, without it.
    execute(&fixture.location, BACK_TO_SCHEMA_7).await;
    execute(&fixture.location, BACK_TO_SCHEMA_6).await;
    execute(&fixture.location, BACK_TO_SCHEMA_5).await;
    let reopened = Repository::open(&fixture.location).await.unwrap();
    let without_energy: Vec<SummaryRow> = kept
        .iter()
        .cloned()
        .map(|mut row| {
            row.totals.energy_records = 0;
            row.totals.energy_milli_wh = 0;
            row
        })
        .collect();
    assert_eq!(rollup(&reopened).await, without_energy, "from schema 5");
}
