use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::usage::sample::record;
use accelfed_schemas::usage::{Month, UsageRecord};

use rusqlite::OptionalExtension;

use super::*;

fn open() -> (tempfile::TempDir, Spool) {
    let dir = tempfile::tempdir().unwrap();
    let spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
    (dir, spool)
}

fn grown(record: &UsageRecord, seconds: u64) -> UsageRecord {
    let mut r = record.clone();
    r.available_duration += seconds;
    r.last_seen += chrono::Duration::seconds(seconds as i64);
    r
}

fn ids(pending: &[PendingRecord]) -> Vec<String> {
    pending
        .iter()
        .map(|p| p.record().unwrap().associated_record.to_string())
        .collect()
}

#[test]
fn a_run_is_stored_and_pending_oldest_first() {
    let (_dir, mut spool) = open();
    let summary = spool.write_run(&[record("a"), record("b")]).unwrap();
    assert_eq!(summary.inserted, 2);
    spool.write_run(&[record("c"), record("a")]).unwrap();
    assert_eq!(spool.depth().unwrap(), 3);
    assert_eq!(spool.len().unwrap(), 3);
    let pending = spool.pending(10).unwrap();
    assert_eq!(ids(&pending), ["a", "b", "c"]);
    assert_eq!(pending[0].record().unwrap(), record("a"));
    assert_eq!(ids(&spool.pending(2).unwrap()), ["a", "b"]);
}

#[test]
fn a_newer_version_of_a_pending_record_replaces_it_in_place() {
    let (_dir, mut spool) = open();
    spool.write_run(&[record("a"), record("b")]).unwrap();
    let before = spool.pending(10).unwrap();
    let summary = spool.write_run(&[grown(&record("a"), 60)]).unwrap();
    assert_eq!(summary.updated, 1);
    let after = spool.pending(10).unwrap();
    assert_eq!(ids(&after), ["a", "b"], "keeps its place in the queue");
    assert_eq!(
        after[0].record().unwrap().available_duration,
        record("a").available_duration + 60
    );
    assert!(after[0].version > before[0].version);
    assert_eq!(spool.depth().unwrap(), 2);
}

#[test]
fn acknowledged_records_reopen_only_when_their_values_change() {
    let (_dir, mut spool) = open();
    spool.write_run(&[record("a"), record("b")]).unwrap();
    let acks: Vec<Ack> = spool
        .pending(10)
        .unwrap()
        .iter()
        .map(PendingRecord::ack)
        .collect();
    assert_eq!(spool.acknowledge(&acks).unwrap(), 2);
    assert_eq!(spool.depth().unwrap(), 0);

    let summary = spool.write_run(&[record("a"), record("b")]).unwrap();
    assert_eq!(summary.unchanged, 2);
    assert_eq!(spool.depth().unwrap(), 0, "same values stay acknowledged");

    let summary = spool
        .write_run(&[record("a"), grown(&record("b"), 3_600)])
        .unwrap();
    assert_eq!((summary.unchanged, summary.reopened), (1, 1));
    assert_eq!(
        ids(&spool.pending(10).unwrap()),
        ["b"],
        "the growing month is re-sent"
    );
    let stored = spool.get(&record("a").id()).unwrap().unwrap();
    assert!(stored.acknowledged);
}

#[test]
fn an_ack_for_an_older_version_does_not_hide_the_newer_one() {
    let (_dir, mut spool) = open();
    spool.write_run(&[record("a")]).unwrap();
    let sent = spool.pending(10).unwrap()[0].ack();
    // The meter runs again while the shipper waits for the repository.
    spool.write_run(&[grown(&record("a"), 60)]).unwrap();
    assert_eq!(spool.acknowledge(&[sent]).unwrap(), 0);
    let pending = spool.pending(10).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].record().unwrap().available_duration,
        record("a").available_duration + 60
    );
    assert_eq!(spool.acknowledge(&[pending[0].ack()]).unwrap(), 1);
    assert_eq!(spool.depth().unwrap(), 0);
    // Acks for unknown ids or repeated acks mark nothing.
    assert_eq!(spool.acknowledge(&[pending[0].ack()]).unwrap(), 0);
}

#[test]
fn a_refused_run_stores_nothing() {
    let (_dir, mut spool) = open();
    spool.write_run(&[record("a")]).unwrap();
    let err = spool
        .write_run(&[grown(&record("a"), 60), record("b"), record("b")])
        .unwrap_err();
    assert!(matches!(err, SpoolError::DuplicateRecord { .. }), "{err}");
    assert!(err.to_string().contains(record("b").id().as_str()), "{err}");

    let mut bad = record("c");
    bad.count = GpuCount::ZERO;
    let err = spool.write_run(&[record("d"), bad]).unwrap_err();
    assert!(matches!(err, SpoolError::InvalidRecord { .. }), "{err}");
    assert!(err.to_string().contains("Count"), "{err}");

    assert_eq!(ids(&spool.pending(10).unwrap()), ["a"]);
    assert_eq!(
        spool.get(&record("a").id()).unwrap().unwrap().record,
        record("a")
    );
}

#[test]
fn the_spool_survives_reopening_and_refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spool.sqlite");
    {
        let mut spool = Spool::open(&path).unwrap();
        let mut feb = record("a");
        feb.month = Month::new(2026, 2).unwrap();
        feb.first_seen = feb.month.start();
        feb.last_seen = feb.first_seen + chrono::Duration::days(10);
        spool.write_run(&[record("a"), feb]).unwrap();
    }
    let spool = Spool::open(&path).unwrap();
    assert_eq!(spool.depth().unwrap(), 2);
    drop(spool);

    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    let err = Spool::open(&path).unwrap_err();
    assert!(matches!(err, SpoolError::TooNew { found: 99, .. }), "{err}");
}

#[test]
fn a_corrupted_body_is_reported_with_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spool.sqlite");
    let mut spool = Spool::open(&path).unwrap();
    spool.write_run(&[record("a")]).unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    // A row from before the spool kept encodings, with a broken body.
    conn.execute(
        "UPDATE records SET body = '{\"count\": 1}', wire = NULL",
        [],
    )
    .unwrap();
    let err = spool.pending(10).unwrap_err();
    assert!(matches!(err, SpoolError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains(record("a").id().as_str()), "{err}");
}

#[test]
fn the_file_is_in_wal_mode_with_a_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spool.sqlite");
    drop(Spool::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 5);
}

#[test]
fn a_version_1_spool_is_migrated_and_its_rows_are_shipped_from_their_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spool.sqlite");
    {
        // The spool as version 1 wrote it: no encodings.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        let body = serde_json::to_string(&record("a")).unwrap();
        conn.execute(
            "INSERT INTO records (record_id, version, enqueued, month, body, updated_at)
             VALUES (?1, 1, 1, '2026-01', ?2, '2026-02-01T00:00:00Z')",
            rusqlite::params![record("a").id().as_str(), body],
        )
        .unwrap();
        conn.execute("UPDATE sequence SET next = 2", []).unwrap();
    }
    let mut spool = Spool::open(&path).unwrap();
    let pending = spool.pending(10).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        pending[0].wire,
        crate::wire::encoded::encode_record(&record("a"))
    );
    assert_eq!(pending[0].record().unwrap(), record("a"));
    // The old row is acknowledged by its row and version; a new run writes with encodings.
    spool.write_run(&[record("b")]).unwrap();
    assert_eq!(spool.acknowledge(&[pending[0].ack()]).unwrap(), 1);
    assert_eq!(ids(&spool.pending(10).unwrap()), ["b"]);
}

#[test]
fn a_version_2_spool_keeps_what_was_pending_and_what_was_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spool.sqlite");
    {
        // The spool as version 2 wrote it: "a" acknowledged, "b" pending, "c" acknowledged in an
        // older version and changed since (pending again).
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(super::schema::MIGRATIONS[0]).unwrap();
        conn.execute_batch(super::schema::MIGRATIONS[1]).unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
        for (n, (name, version, acked)) in [("a", 1, Some(1)), ("b", 2, None), ("c", 4, Some(3))]
            .into_iter()
            .enumerate()
        {
            let body = serde_json::to_string(&record(name)).unwrap();
            let wire = crate::wire::encoded::encode_record(&record(name));
            conn.execute(
                "INSERT INTO records (record_id, version, enqueued, acked_version, month, body,
                                      wire, updated_at)
                 VALUES (?1, ?2, ?3, ?4, '2026-01', ?5, ?6, '2026-02-01T00:00:00Z')",
                rusqlite::params![
                    record(name).id().as_str(),
                    version,
                    n + 1,
                    acked,
                    body,
                    wire
                ],
            )
            .unwrap();
        }
        conn.execute("UPDATE sequence SET next = 5", []).unwrap();
    }
    let mut spool = Spool::open(&path).unwrap();
    assert_eq!(spool.depth().unwrap(), 2);
    let pending = spool.pending(10).unwrap();
    assert_eq!(ids(&pending), ["b", "c"]);
    assert_eq!(
        pending.iter().map(|p| p.version).collect::<Vec<_>>(),
        [2, 4]
    );
    assert!(spool.get(&record("a").id()).unwrap().unwrap().acknowledged);
    assert!(!spool.get(&record("c").id()).unwrap().unwrap().acknowledged);
    // The migrated queue behaves as a new one: acks by version, new records behind the old.
    spool.write_run(&[record("d")]).unwrap();
    assert_eq!(spool.acknowledge(&[pending[1].ack()]).unwrap(), 1);
    assert_eq!(ids(&spool.pending(10).unwrap()), ["b", "d"]);
    let column: Option<String> = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT name FROM pragma_table_info('records') WHERE name = 'acked_version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .unwrap();
    assert_eq!(column, None, "the old state column is gone");
}

#[test]
fn processes_opening_a_new_spool_at_once_all_open_it() {
    // A meter's spool check and its write (or a meter and a shipper started together by cron)
    // open a spool that does not exist yet at the same moment. Switching a new file to WAL takes
    // a lock SQLite does not wait for by itself: every opener must still succeed.
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool.sqlite");
        let openers: Vec<_> = (0..6)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Spool::open(&path).map(|spool| spool.depth()))
            })
            .collect();
        for opener in openers {
            let opened = opener.join().unwrap();
            assert!(matches!(opened, Ok(Ok(0))), "round {round}: {opened:?}");
        }
    }
}
