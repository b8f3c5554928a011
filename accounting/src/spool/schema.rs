//! The spool's tables and their migrations, versioned with `PRAGMA user_version`.
//!
//! `records` holds one row per record id (the deterministic id, so a new version of a month
//! replaces the old row). Each change gets the next number of a spool-wide sequence:
//!
//! * `version`: the sequence number of the row's latest content. It is what an acknowledgement must
//!   name, so an ack for an older version never hides a newer one.
//! * `enqueued`: the sequence number when the id was first stored; pending records go out in this
//!   order, so a site that was offline catches up oldest first.
//! * `acked_version`: the version the repository acknowledged (NULL: never). A row is pending while
//!   `acked_version IS NOT version`; a partial index keeps that set cheap to scan.
//! * `body`: the record in its serde JSON form; comparing bodies tells "same values" (stays
//!   acknowledged) from "changed" (pending again).
//! * `wire` (since version 2): the record's protobuf encoding, written with `body`, so shipping
//!   copies it into the request as it is. Rows written before version 2 have none; the shipper
//!   encodes those from `body`.
//!
//! Migrations only ever append to [`MIGRATIONS`]; each runs in the transaction that bumps
//! `user_version`, so a crash leaves the spool at the old or the new version, never between.

/// Migration `n` (0-based) brings the schema from version `n` to `n + 1`.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: records and the sequence.
    "CREATE TABLE sequence (
         id   INTEGER PRIMARY KEY CHECK (id = 1),
         next INTEGER NOT NULL
     );
     INSERT INTO sequence (id, next) VALUES (1, 1);
     CREATE TABLE records (
         record_id     TEXT    PRIMARY KEY,
         version       INTEGER NOT NULL,
         enqueued      INTEGER NOT NULL,
         acked_version INTEGER,
         month         TEXT    NOT NULL,
         body          TEXT    NOT NULL,
         updated_at    TEXT    NOT NULL
     );
     CREATE INDEX records_pending ON records (enqueued) WHERE acked_version IS NOT version;",
    // 2: the record's wire encoding.
    "ALTER TABLE records ADD COLUMN wire BLOB;",
];

/// The schema version this build writes.
pub(super) fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// The `WHERE` term of pending rows; queries must repeat the partial index's term to use it.
pub(super) const PENDING: &str = "acked_version IS NOT version";
