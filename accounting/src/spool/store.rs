//! The site spool: a SQLite file (WAL, synchronous FULL) holding every usage record until the
//! repository has acknowledged its latest version. The only file of the spool that does IO.
//!
//! * [`Spool::write_run`] stores one meter run in one transaction (`write.rs`).
//! * [`Spool::acknowledge`] marks a record sent only if the acknowledged version is still the
//!   stored one. Acknowledgements are committed without waiting for the disk (see there).
//!
//! Rows are never deleted here; pruning acknowledged months is for later work.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use accelfed_schemas::usage::{RecordId, UsageRecord};

use super::error::SpoolError;
use super::schema::{self, MIGRATIONS, PENDING_FROM};

/// A record waiting for acknowledgement, in the form the shipper sends.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingRecord {
    /// Its place in the queue (the sequence number when its id was first stored), which also
    /// finds its outbox entry when it is acknowledged.
    pub enqueued: i64,
    pub id: RecordId,
    /// The version to name in the acknowledgement.
    pub version: i64,
    /// The record's protobuf encoding (see [`crate::wire::encoded`]).
    pub wire: Bytes,
}

impl PendingRecord {
    /// The record itself, decoded from its encoding (for messages and inspection; shipping sends
    /// the encoding as it is). `None` if the encoding is not a valid record.
    pub fn record(&self) -> Option<UsageRecord> {
        let proto = crate::wire::encoded::decode_record(&self.wire).ok()?;
        match crate::wire::convert::record_from_proto(proto) {
            crate::wire::Submission::Record(record) => Some(*record),
            crate::wire::Submission::Invalid(_) => None,
        }
    }

    /// Bytes on the wire, for batching.
    pub fn bytes(&self) -> usize {
        self.wire.len()
    }

    pub fn ack(&self) -> Ack {
        Ack {
            enqueued: self.enqueued,
            version: self.version,
        }
    }
}

/// The columns [`PendingRow::read`] reads, in its order, selected from [`PENDING_FROM`]: the body
/// only where there is no encoding (reading it costs as much as the rest of the row).
pub(super) const PENDING_COLUMNS: &str =
    "o.enqueued, r.record_id, o.version, r.wire, CASE WHEN r.wire IS NULL THEN r.body END";

/// A pending row as stored.
pub(super) struct PendingRow {
    enqueued: i64,
    id: String,
    version: i64,
    wire: Option<Vec<u8>>,
    body: Option<String>,
}

impl PendingRow {
    /// Reads [`PENDING_COLUMNS`].
    pub(super) fn read(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            enqueued: row.get(0)?,
            id: row.get(1)?,
            version: row.get(2)?,
            wire: row.get(3)?,
            body: row.get(4)?,
        })
    }
}

/// The repository's receipt for one version of one record. Versions are unique across the spool
/// (each change takes the next number of one sequence), so the version alone says which content
/// was acknowledged; the queue position finds its outbox entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ack {
    pub enqueued: i64,
    pub version: i64,
}

/// A stored record and its state, for inspection.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    pub version: i64,
    pub acknowledged: bool,
    pub record: UsageRecord,
}

/// How long a spool waits for another process's lock (a meter and a shipper may run at once).
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of the spool file SQLite may map into memory (see `Spool::configure`).
const SPOOL_MMAP_BYTES: i64 = 1 << 30;

/// The spool, open on one file.
#[derive(Debug)]
pub struct Spool {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
}

impl Spool {
    /// Opens the spool on a connection already made (see `open.rs`) and brings its schema up to
    /// date.
    pub(super) fn on(conn: Connection, path: PathBuf) -> Result<Self, SpoolError> {
        let mut spool = Self { conn, path };
        spool.configure()?;
        spool.migrate()?;
        Ok(spool)
    }

    /// The spool's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn sqlite(&self) -> impl Fn(rusqlite::Error) -> SpoolError + '_ {
        |source| SpoolError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn configure(&self) -> Result<(), SpoolError> {
        // A meter and a shipper may run at once from cron: wait for each other's transactions.
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(self.sqlite())?;
        // Two processes opening a new spool at once (a meter's spool check and its write; a meter
        // and a shipper from cron) both switch it to WAL.
        let mode = crate::database::wal::switch(&self.conn, BUSY_TIMEOUT).map_err(self.sqlite())?;
        debug_assert_eq!(mode.to_ascii_lowercase(), "wal");
        // A cache large enough for a whole batch's pages: acknowledging a batch rewrites every row
        // it names, and a cache that overflows mid-transaction spills and re-reads pages.
        self.conn
            .pragma_update(None, "cache_size", -65_536)
            .map_err(self.sqlite())?;
        // Pages read through a memory map instead of one read(2) and copy each: the shipper reads
        // every pending row once (profiled: its page reads fell from a quarter of the shipping
        // process's CPU to a sixth). Only address space is reserved; SQLite maps at most this
        // much of the file and reads the rest as before.
        self.conn
            .pragma_update(None, "mmap_size", SPOOL_MMAP_BYTES)
            .map_err(self.sqlite())?;
        // FULL: a run is on disk when write_run returns, power cut included.
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(self.sqlite())
    }

    fn migrate(&mut self) -> Result<(), SpoolError> {
        let path = self.path.clone();
        let err = |source| SpoolError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let found: i64 = tx
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(err)?;
        if found > schema::current() {
            return Err(SpoolError::TooNew {
                path: path.clone(),
                found,
                known: schema::current(),
            });
        }
        for migration in &MIGRATIONS[usize::try_from(found).unwrap_or(0)..] {
            tx.execute_batch(migration).map_err(err)?;
        }
        tx.pragma_update(None, "user_version", schema::current())
            .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Up to `limit` pending records, oldest first enqueue first.
    pub fn pending(&self, limit: usize) -> Result<Vec<PendingRecord>, SpoolError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut statement = self
            .conn
            .prepare_cached(&format!(
                "SELECT {PENDING_COLUMNS} FROM {PENDING_FROM} ORDER BY o.enqueued LIMIT ?1"
            ))
            .map_err(self.sqlite())?;
        let rows = statement
            .query_map([limit], PendingRow::read)
            .map_err(self.sqlite())?;
        let mut pending = Vec::new();
        for row in rows {
            let row = row.map_err(self.sqlite())?;
            pending.push(self.pending_record(row)?);
        }
        Ok(pending)
    }

    /// Marks each acknowledged version sent, in one transaction. An ack whose version is no longer
    /// the pending one (the record changed since it was read) is ignored: the newer version stays
    /// pending. Returns how many records were marked.
    ///
    /// The transaction is committed with `synchronous = NORMAL`: it survives the process being
    /// killed (WAL), and a power cut may only undo it, so the records are sent again and the
    /// repository answers them as unchanged; never counted twice, never lost. Waiting for the disk
    /// here (FULL) cost the shipper a sync per batch for nothing. The next `write_run` syncs the
    /// log again, these marks with it.
    pub fn acknowledge(&mut self, acks: &[Ack]) -> Result<usize, SpoolError> {
        let path = self.path.clone();
        let err = |source| SpoolError::Sqlite {
            path: path.clone(),
            source,
        };
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        let marked = Self::delete_from_outbox(&mut self.conn, acks).map_err(err);
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(err)?;
        marked.map_err(super::open::explained)
    }

    fn delete_from_outbox(conn: &mut Connection, acks: &[Ack]) -> rusqlite::Result<usize> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut marked = 0;
        {
            let mut delete =
                tx.prepare_cached("DELETE FROM outbox WHERE enqueued = ?1 AND version = ?2")?;
            for ack in acks {
                marked += delete.execute([ack.enqueued, ack.version])?;
            }
        }
        tx.commit()?;
        Ok(marked)
    }

    /// How many records wait for acknowledgement.
    pub fn depth(&self) -> Result<u64, SpoolError> {
        self.count("SELECT count(*) FROM outbox")
    }

    /// How many records are stored, acknowledged or not.
    pub fn len(&self) -> Result<u64, SpoolError> {
        self.count("SELECT count(*) FROM records")
    }

    /// The one number `sql` (a `SELECT count(*)`) answers.
    fn count(&self, sql: &str) -> Result<u64, SpoolError> {
        let count: i64 = self
            .conn
            .query_row(sql, [], |row| row.get(0))
            .map_err(self.sqlite())?;
        Ok(count.unsigned_abs())
    }

    pub fn is_empty(&self) -> Result<bool, SpoolError> {
        self.len().map(|n| n == 0)
    }

    /// One stored record and its state.
    pub fn get(&self, id: &RecordId) -> Result<Option<StoredRecord>, SpoolError> {
        let row: Option<(i64, bool, String)> = self
            .conn
            .query_row(
                "SELECT r.version, o.enqueued IS NULL, r.body
                 FROM records r LEFT JOIN outbox o ON o.enqueued = r.enqueued
                 WHERE r.record_id = ?1",
                [id.as_str()],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(self.sqlite())?;
        row.map(|(version, acknowledged, body)| {
            let (_, record) = self.decode(id.as_str(), &body)?;
            Ok(StoredRecord {
                version,
                acknowledged,
                record,
            })
        })
        .transpose()
    }

    /// A pending row as the shipper sends it: its stored encoding, or (a row from before the
    /// spool kept encodings) one made from its body.
    pub(super) fn pending_record(&self, row: PendingRow) -> Result<PendingRecord, SpoolError> {
        let (id, wire) = match row.wire {
            Some(wire) => {
                let id = RecordId::parse(&row.id).map_err(|e| SpoolError::Corrupt {
                    path: self.path.clone(),
                    id: row.id.clone(),
                    reason: e.to_string(),
                })?;
                (id, Bytes::from(wire))
            }
            None => {
                let body = row.body.as_deref().unwrap_or_default();
                let (id, record) = self.decode(&row.id, body)?;
                (id, crate::wire::encoded::encode_record(&record).into())
            }
        };
        Ok(PendingRecord {
            enqueued: row.enqueued,
            id,
            version: row.version,
            wire,
        })
    }

    pub(super) fn decode(
        &self,
        id: &str,
        body: &str,
    ) -> Result<(RecordId, UsageRecord), SpoolError> {
        let corrupt = |reason: String| SpoolError::Corrupt {
            path: self.path.clone(),
            id: id.to_owned(),
            reason,
        };
        let parsed = RecordId::parse(id).map_err(|e| corrupt(e.to_string()))?;
        let record: UsageRecord = serde_json::from_str(body).map_err(|e| corrupt(e.to_string()))?;
        if record.id() != parsed {
            return Err(corrupt(format!("its body has id {}", record.id())));
        }
        Ok((parsed, record))
    }
}
