//! The spool's tables and their migrations, versioned with `PRAGMA user_version`.
//!
//! `records` holds one row per record id (the deterministic id, so a new version of a month
//! replaces the old row). Each change gets the next number of a spool-wide sequence:
//!
//! * `version`: the sequence number of the row's latest content. It is what an acknowledgement must
//!   name, so an ack for an older version never hides a newer one.
//! * `enqueued`: the sequence number when the id was first stored; pending records go out in this
//!   order, so a site that was offline catches up oldest first.
//! * `acked_version` (until version 3): the version the repository acknowledged; replaced by
//!   `outbox`.
//! * `body`: the record in its serde JSON form; comparing bodies tells "same values" (stays
//!   acknowledged) from "changed" (pending again).
//! * `wire` (since version 2): the record's protobuf encoding, written with `body`, so shipping
//!   copies it into the request as it is. Rows written before version 2 have none; the shipper
//!   encodes those from `body`.
//!
//! `outbox` (since version 3) holds one narrow row per pending record: its `enqueued` (the queue
//! position, also the key) and the `version` waiting for acknowledgement. Acknowledging deletes
//! that row, so marking a record sent writes a few bytes instead of rewriting its ~1 KB `records`
//! row (body and encoding), which was most of the shipper's own work; the pending set is the table
//! itself, in queue order.
//!
//! `held` (since version 4) holds one row per record the meter's capacity check doubted: while
//! its `released_version` is NULL the record has no outbox row and the APEL export skips it; an
//! operator's release sets it to the version released (`held.rs`).
//!
//! `agent_figures` (since version 5) keeps per node-agent holder, place and month the last figures
//! the meter used, so a node whose agent document is missing on a run keeps its holders'
//! ActiveDuration and energy (`agent_figures.rs`).
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
    // 3: pending state in its own narrow table.
    "CREATE TABLE outbox (
         enqueued INTEGER PRIMARY KEY,
         version  INTEGER NOT NULL
     );
     INSERT INTO outbox (enqueued, version)
         SELECT enqueued, version FROM records WHERE acked_version IS NOT version;
     DROP INDEX records_pending;
     CREATE UNIQUE INDEX records_by_enqueued ON records (enqueued);
     ALTER TABLE records DROP COLUMN acked_version;",
    // 4: records held back by the capacity check (see `held.rs`).
    "CREATE TABLE held (
         enqueued         INTEGER PRIMARY KEY,
         reason           TEXT    NOT NULL,
         held_at          TEXT    NOT NULL,
         released_version INTEGER
     );",
    // 5: the last node agents' figures the meter used (see `agent_figures.rs`).
    "CREATE TABLE agent_figures (
         kind          TEXT NOT NULL,
         id            TEXT NOT NULL,
         place         TEXT NOT NULL,
         month         TEXT NOT NULL,
         held_seconds  REAL NOT NULL,
         idle_seconds  REAL NOT NULL,
         energy_joules REAL NOT NULL,
         PRIMARY KEY (kind, id, place, month)
     ) WITHOUT ROWID;",
];

/// The schema version this build writes.
pub(super) fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// The pending records joined to their rows: `o` the outbox entry, `r` the record.
pub(super) const PENDING_FROM: &str = "outbox o JOIN records r ON r.enqueued = o.enqueued";
