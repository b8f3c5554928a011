//! The SQLite schema, as numbered migrations applied in order inside one transaction each.
//!
//! * `records` is a rowid table with a unique index on the record id. The id is the only random key;
//!   keeping it in a narrow index (rather than making the whole row the primary-key B-tree with
//!   `WITHOUT ROWID`) keeps the randomly written pages few, and table rows are appended in rowid
//!   order. That index is what limits ingest speed, so it is the only index on `records`.
//! * `summaries` holds the totals per (site, VO, model, month), maintained on ingest; reports and
//!   sync counts read only it. `period >= ...` filters without a site use `summaries_by_period`.
//!   Reports grouped by VO (the common question) read `summaries_by_vo` (schema 2), which holds
//!   every column they sum in (VO, month) order, so they stream without a sort: a per-VO report
//!   over the summaries of 10,000,000 records took 21 ms on a slow 2-core machine without it.
//! * Schema 6 adds `user_summaries`, the user rollup that reports by user read.
//! * Schema 4 adds `records_by_site_user`, partial on records that name a user, so central's cap
//!   on distinct users per site and month reads an index rather than the site's rows.

use rusqlite::Connection;

use crate::database::MigrationSet;

use crate::repository::error::RepositoryError;

/// Migrations in order; a version is never edited once released, only followed by a new one.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE records (
        record_id         BLOB    NOT NULL,
        period            INTEGER NOT NULL,
        site              TEXT    NOT NULL,
        vo                TEXT,
        model             TEXT    NOT NULL,
        record_type       TEXT    NOT NULL,
        associated_record TEXT    NOT NULL,
        global_user_name  TEXT,
        fqan              TEXT,
        gpu_milli         INTEGER NOT NULL,
        cores             INTEGER,
        active_seconds    INTEGER,
        available_seconds INTEGER NOT NULL,
        benchmark_type    TEXT,
        benchmark         REAL,
        accelerator_type  TEXT    NOT NULL,
        source            TEXT    NOT NULL,
        first_seen        INTEGER,
        last_seen         INTEGER
    );
    CREATE UNIQUE INDEX records_by_id ON records (record_id);
    CREATE TABLE summaries (
        site                               TEXT    NOT NULL,
        vo                                 TEXT    NOT NULL,
        model                              TEXT    NOT NULL,
        period                             INTEGER NOT NULL,
        records                            INTEGER NOT NULL,
        gpu_milli                          INTEGER NOT NULL,
        gpu_milli_seconds                  INTEGER NOT NULL,
        active_records                     INTEGER NOT NULL,
        active_gpu_milli_seconds           INTEGER NOT NULL,
        active_available_gpu_milli_seconds INTEGER NOT NULL,
        PRIMARY KEY (site, vo, model, period)
    ) WITHOUT ROWID;
    CREATE INDEX summaries_by_period ON summaries (period);",
    ),
    (
        2,
        "CREATE INDEX summaries_by_vo ON summaries (vo, period, records, gpu_milli,
             gpu_milli_seconds, active_records, active_gpu_milli_seconds,
             active_available_gpu_milli_seconds);",
    ),
    // Schema 3: what a record says beyond APEL's fields: its unrounded count (summaries are
    // computed from it), its sharing (JSON, NULL for whole GPUs) and the installed GPUs of its
    // model at the site in its month (`accelfed report --check`).
    (
        3,
        "ALTER TABLE records ADD COLUMN gpu_count REAL;
         ALTER TABLE records ADD COLUMN sharing TEXT;
         ALTER TABLE records ADD COLUMN installed REAL;",
    ),
    // Schema 4: the distinct users a site reported in a month, for central's per-site cap on
    // them (`[ingest] max_users_per_month`), read from this index alone instead of the site's
    // rows. Partial: records without a user (most cloud records) cost it nothing.
    (
        4,
        "CREATE INDEX records_by_site_user ON records (site, period, global_user_name)
             WHERE global_user_name IS NOT NULL;",
    ),
    // Schema 5: what the central knows of each site's calls (`repository::contacts`), kept here
    // so `/metrics` says the same after a restart: the last contact, the spool depth and held
    // records the site last reported, the records received; and the held records themselves
    // (a bounded list per site), which `accelfed report --check` lists.
    (
        5,
        "CREATE TABLE site_contacts (
             site             TEXT    PRIMARY KEY,
             last_contact     INTEGER NOT NULL,
             spool_depth      INTEGER,
             records_received INTEGER NOT NULL DEFAULT 0,
             held_count       INTEGER
         );
         CREATE TABLE held_records (
             site      TEXT    NOT NULL,
             record_id TEXT    NOT NULL,
             reason    TEXT    NOT NULL,
             since     INTEGER NOT NULL,
             PRIMARY KEY (site, record_id)
         );",
    ),
    // Schema 6: the energy a record's GPUs used in its month, where the site measured it
    // (watt-hours; NULL: not measured), and per summary row how many records carry it and their
    // sum in milliwatt-hours (integers, so replacements subtract exactly).
    (
        6,
        "ALTER TABLE records ADD COLUMN energy_wh REAL;
         ALTER TABLE summaries ADD COLUMN energy_records INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE summaries ADD COLUMN energy_milli_wh INTEGER NOT NULL DEFAULT 0;",
    ),
    // Schema 7: the user rollup, the summaries per (site, VO, model, month) split by user, kept
    // on ingest beside `summaries` (`plan.rs`), so a report by user reads it instead of every
    // record of its filter (a VO manager's report by user over 10,000,000 records read a VO's
    // records, up to a fifth of them). Keyed VO first: a VO's manager asks for one VO, over a
    // range of months; a site's administrator reads `user_summaries_by_site`. Filled here from
    // the records already stored, each counted as `RecordRow::totals` counts it (GPU-time from
    // the unrounded count where the record has it, rounded once, else from the count in
    // thousandths).
    (
        7,
        "CREATE TABLE user_summaries (
             site                               TEXT    NOT NULL,
             vo                                 TEXT    NOT NULL,
             model                              TEXT    NOT NULL,
             period                             INTEGER NOT NULL,
             global_user_name                   TEXT    NOT NULL,
             records                            INTEGER NOT NULL,
             gpu_milli                          INTEGER NOT NULL,
             gpu_milli_seconds                  INTEGER NOT NULL,
             active_records                     INTEGER NOT NULL,
             active_gpu_milli_seconds           INTEGER NOT NULL,
             active_available_gpu_milli_seconds INTEGER NOT NULL,
             energy_records                     INTEGER NOT NULL,
             energy_milli_wh                    INTEGER NOT NULL,
             PRIMARY KEY (vo, period, global_user_name, site, model)
         ) WITHOUT ROWID;
         CREATE INDEX user_summaries_by_site ON user_summaries (site, period);
         INSERT INTO user_summaries
         SELECT site, vo, model, period, global_user_name, COUNT(*), SUM(gpu_milli),
                SUM(available_ms), SUM(active_ms IS NOT NULL), COALESCE(SUM(active_ms), 0),
                COALESCE(SUM(CASE WHEN active_ms IS NULL THEN NULL ELSE available_ms END), 0),
                COUNT(energy_wh), COALESCE(SUM(energy_mwh), 0)
         FROM (
             SELECT site, COALESCE(vo, '') AS vo, model, period,
                    COALESCE(global_user_name, '') AS global_user_name, gpu_milli,
                    CASE WHEN gpu_count IS NULL THEN gpu_milli * available_seconds
                         ELSE CAST(ROUND(gpu_count * 1000.0 * available_seconds) AS INTEGER)
                    END AS available_ms,
                    CASE WHEN gpu_count IS NULL THEN gpu_milli * active_seconds
                         ELSE CAST(ROUND(gpu_count * 1000.0 * active_seconds) AS INTEGER)
                    END AS active_ms,
                    energy_wh, CAST(ROUND(energy_wh * 1000.0) AS INTEGER) AS energy_mwh
             FROM records
         )
         GROUP BY site, vo, model, period, global_user_name;",
    ),
    // Schema 8: the seconds of a record known idle where its ActiveDuration is unknown (a VM's
    // stopped stretches in a month it also ran; NULL: none known), and per summary and user
    // rollup row how many such records there are and their Count x seconds in milli-GPU-seconds.
    // No stored record has the field yet, so the new summary columns start at 0.
    (
        8,
        "ALTER TABLE records ADD COLUMN idle_seconds INTEGER;
         ALTER TABLE summaries ADD COLUMN known_idle_records INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE summaries ADD COLUMN known_idle_gpu_milli_seconds INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE user_summaries ADD COLUMN known_idle_records INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE user_summaries ADD COLUMN known_idle_gpu_milli_seconds INTEGER NOT NULL DEFAULT 0;",
    ),
    // Schema 9: the report generation per site, bumped by every ingest commit, which the central
    // service's report answer cache reads before each report (`repository/generation.rs`).
    (
        9,
        "CREATE TABLE report_generations (
             site       TEXT    NOT NULL PRIMARY KEY,
             generation INTEGER NOT NULL
         ) WITHOUT ROWID;",
    ),
];

/// The repository's migrations, for the store layer's one runner ([`crate::database::migrate`]).
/// Adding a migration: one entry at the end of [`MIGRATIONS`].
pub(crate) const SET: MigrationSet = MigrationSet {
    owner: "accounting repository",
    table: "schema_migrations",
    lock: 0,
    migrations: MIGRATIONS,
};

/// The newest schema version this program knows.
pub(super) const LATEST: i64 = SET.latest();

/// Applies the migrations the database lacks. Returns the version found before, for logs.
/// A database newer than this program is refused rather than written to.
pub(super) fn migrate(conn: &mut Connection) -> rusqlite::Result<Result<i64, i64>> {
    crate::database::migrate::sqlite(conn, &SET)
}

/// Opens `path` read-only and checks it is an accelfed repository this program can read: its
/// `schema_migrations` names a version up to [`LATEST`] and its `summaries` table exists.
/// Anything else is [`RepositoryError::NotARepository`], saying what the file holds instead.
/// Returns the connection and the schema version found.
pub(super) fn open_existing(path: &std::path::Path) -> Result<(Connection, i64), RepositoryError> {
    use rusqlite::OpenFlags;
    let location = path.display().to_string();
    let sqlite = |source| RepositoryError::Sqlite {
        path: location.clone(),
        source,
    };
    let not_ours = |found: String| RepositoryError::NotARepository {
        location: location.clone(),
        found,
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sqlite)?;
    let tables: Vec<String> = match conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get::<_, String>(0))?
                .collect::<rusqlite::Result<_>>()
        }) {
        Ok(tables) => tables,
        Err(rusqlite::Error::SqliteFailure(error, _))
            if error.code == rusqlite::ErrorCode::NotADatabase =>
        {
            return Err(not_ours("not an SQLite database".to_owned()));
        }
        Err(error) => return Err(sqlite(error)),
    };
    let has = |name: &str| tables.iter().any(|table| table == name);
    if !(has("schema_migrations") && has("summaries") && has("records")) {
        return Err(not_ours(if tables.is_empty() {
            "an empty database".to_owned()
        } else if has("outbox") {
            "a site spool (give --database the central service's repository)".to_owned()
        } else {
            format!("tables {}", tables.join(", "))
        }));
    }
    let found: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            [],
            |row| row.get(0),
        )
        .map_err(sqlite)?;
    if found > LATEST {
        return Err(RepositoryError::SchemaTooNew {
            location,
            found,
            known: LATEST,
        });
    }
    conn.pragma_update(None, "temp_store", "MEMORY")
        .map_err(sqlite)?;
    Ok((conn, found))
}

/// Connection settings: WAL so reports read while a batch is written; `synchronous = FULL` so an
/// acknowledged batch survives a power cut (the site deletes acknowledged records from its spool);
/// a 64 MiB page cache so the record-id index stays in memory as long as it can.
pub(crate) fn configure(conn: &Connection) -> rusqlite::Result<()> {
    let wait = std::time::Duration::from_secs(10);
    conn.busy_timeout(wait)?;
    // Its writer and reader, or two processes (`serve` and `accelfed report`), may open a new
    // file at once.
    crate::database::wal::switch(conn, wait)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "cache_size", -65_536)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}
