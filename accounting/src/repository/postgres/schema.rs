//! The PostgreSQL schema, as numbered migrations, and the monthly partitions of `records`.
//!
//! * `records` is partitioned by month (`period`, one integer per month): a month's partition is
//!   created before its first record arrives, old months can be detached or archived whole, and
//!   an ingest's random index writes land in the (small) partitions of the months being sent.
//!   The primary key must contain the partition key, so it is (period, record_id); the record id
//!   already determines its month, so this is the same identity as the id alone.
//! * `summaries` holds the totals per (site, VO, model, month), maintained on ingest; reports and
//!   sync counts read only it. `user_summaries` (schema 6) splits them by user, for the reports
//!   by user.
//!
//! Migrations and partition creation take a transaction-scoped advisory lock, so several
//! `accelfed serve` instances sharing one database never race on DDL.

use tokio_postgres::Client;

use crate::database::MigrationSet;

use super::super::period::Period;

/// Advisory lock keys (arbitrary, fixed): one for migrations, one for partition DDL.
pub(crate) const MIGRATION_LOCK: i64 = 0x6163_6366_0001;
const PARTITION_LOCK: i64 = 0x6163_6366_0002;

/// Migrations in order; a version is never edited once released, only followed by a new one.
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "CREATE TABLE records (
        record_id         bytea            NOT NULL,
        period            integer          NOT NULL,
        site              text             NOT NULL,
        vo                text,
        model             text             NOT NULL,
        record_type       text             NOT NULL,
        associated_record text             NOT NULL,
        global_user_name  text,
        fqan              text,
        gpu_milli         bigint           NOT NULL,
        cores             bigint,
        active_seconds    bigint,
        available_seconds bigint           NOT NULL,
        benchmark_type    text,
        benchmark         double precision,
        accelerator_type  text             NOT NULL,
        source            text             NOT NULL,
        first_seen        bigint,
        last_seen         bigint,
        PRIMARY KEY (period, record_id)
    ) PARTITION BY RANGE (period);
    CREATE TABLE summaries (
        site                               text    NOT NULL,
        vo                                 text    NOT NULL,
        model                              text    NOT NULL,
        period                             integer NOT NULL,
        records                            bigint  NOT NULL,
        gpu_milli                          bigint  NOT NULL,
        gpu_milli_seconds                  bigint  NOT NULL,
        active_records                     bigint  NOT NULL,
        active_gpu_milli_seconds           bigint  NOT NULL,
        active_available_gpu_milli_seconds bigint  NOT NULL,
        PRIMARY KEY (site, vo, model, period)
    );
    CREATE INDEX summaries_by_period ON summaries (period);",
    ),
    // Every batch updates its summary rows in place; room on each page lets PostgreSQL keep the
    // new versions there (HOT: no index writes, old versions pruned on the page). Measured: 100
    // batches of 960 summary upserts took 1.0 s instead of 1.85 s. Pages written before keep
    // their layout until rewritten.
    (2, "ALTER TABLE summaries SET (fillfactor = 50);"),
    // What a record says beyond APEL's fields: its unrounded count (summaries are computed from
    // it), its sharing (JSON, NULL for whole GPUs) and the installed GPUs of its model at the site
    // in its month (`accelfed report --check`). Added to the partitioned table, so to every
    // partition.
    (
        3,
        "ALTER TABLE records ADD COLUMN gpu_count double precision,
             ADD COLUMN sharing text,
             ADD COLUMN installed double precision;",
    ),
    // The distinct users a site reported in a month, for central's per-site cap on them
    // (`[ingest] max_users_per_month`), read from this index alone instead of the site's rows.
    // Partial: records without a user (most cloud records) cost it nothing. Created on the
    // partitioned table, so on every partition, present and future.
    (
        4,
        "CREATE INDEX records_by_site_user ON records (site, period, global_user_name)
             WHERE global_user_name IS NOT NULL;",
    ),
    // What the central knows of each site's calls (`repository::contacts`), kept here so every
    // instance's `/metrics` says the same, after a restart too: the last contact, the spool depth
    // and held records the site last reported, the records received; and the held records
    // themselves (a bounded list per site), which `accelfed report --check` lists.
    (
        5,
        "CREATE TABLE site_contacts (
             site             text   PRIMARY KEY,
             last_contact     bigint NOT NULL,
             spool_depth      bigint,
             records_received bigint NOT NULL DEFAULT 0,
             held_count       bigint
         );
         CREATE TABLE held_records (
             site      text   NOT NULL,
             record_id text   NOT NULL,
             reason    text   NOT NULL,
             since     bigint NOT NULL,
             PRIMARY KEY (site, record_id)
         );",
    ),
    // 6: the energy a record's GPUs used in its month, where the site measured it (watt-hours;
    // NULL: not measured), and per summary row how many records carry it and their sum in
    // milliwatt-hours (integers, as every summary column, so replacements subtract exactly).
    (
        6,
        "ALTER TABLE records ADD COLUMN energy_wh double precision;
         ALTER TABLE summaries ADD COLUMN energy_records bigint NOT NULL DEFAULT 0,
             ADD COLUMN energy_milli_wh bigint NOT NULL DEFAULT 0;",
    ),
    // 7: the user rollup: the summaries per (site, VO, model, month) split by user, kept on ingest
    // beside `summaries` (`plan.rs`), so a report by user reads it instead of every record of its
    // filter. Keyed VO first (a VO's manager asks for one VO over a range of months); a site's
    // administrator reads `user_summaries_by_site`. Room on each page as for `summaries`. Filled
    // here from the records already stored, each counted as `RecordRow::totals` counts it;
    // `floor(x + 0.5)` is Rust's `f64::round` for these non-negative products (PostgreSQL's own
    // `round` of a double rounds half to even).
    (
        7,
        "CREATE TABLE user_summaries (
             site                               text    NOT NULL,
             vo                                 text    NOT NULL,
             model                              text    NOT NULL,
             period                             integer NOT NULL,
             global_user_name                   text    NOT NULL,
             records                            bigint  NOT NULL,
             gpu_milli                          bigint  NOT NULL,
             gpu_milli_seconds                  bigint  NOT NULL,
             active_records                     bigint  NOT NULL,
             active_gpu_milli_seconds           bigint  NOT NULL,
             active_available_gpu_milli_seconds bigint  NOT NULL,
             energy_records                     bigint  NOT NULL,
             energy_milli_wh                    bigint  NOT NULL,
             PRIMARY KEY (vo, period, global_user_name, site, model)
         ) WITH (fillfactor = 50);
         CREATE INDEX user_summaries_by_site ON user_summaries (site, period);
         INSERT INTO user_summaries
         SELECT site, vo, model, period, global_user_name, COUNT(*), SUM(gpu_milli),
                SUM(available_ms), COUNT(active_ms), COALESCE(SUM(active_ms), 0),
                COALESCE(SUM(CASE WHEN active_ms IS NULL THEN NULL ELSE available_ms END), 0),
                COUNT(energy_wh), COALESCE(SUM(energy_mwh), 0)
         FROM (
             SELECT site, COALESCE(vo, '') AS vo, model, period,
                    COALESCE(global_user_name, '') AS global_user_name, gpu_milli,
                    CASE WHEN gpu_count IS NULL THEN gpu_milli * available_seconds
                         ELSE floor(gpu_count * 1000.0::float8 * available_seconds::float8
                                    + 0.5)::bigint
                    END AS available_ms,
                    CASE WHEN gpu_count IS NULL THEN gpu_milli * active_seconds
                         ELSE floor(gpu_count * 1000.0::float8 * active_seconds::float8
                                    + 0.5)::bigint
                    END AS active_ms,
                    energy_wh, floor(energy_wh * 1000.0::float8 + 0.5)::bigint AS energy_mwh
             FROM records
         ) AS counted
         GROUP BY site, vo, model, period, global_user_name;",
    ),
    // 8: the seconds of a record known idle where its ActiveDuration is unknown (a VM's stopped
    // stretches in a month it also ran; NULL: none known), and per summary and user rollup row
    // how many such records there are and their Count x seconds in milli-GPU-seconds. No stored
    // record has the field yet, so the new summary columns start at 0.
    (
        8,
        "ALTER TABLE records ADD COLUMN idle_seconds bigint;
         ALTER TABLE summaries ADD COLUMN known_idle_records bigint NOT NULL DEFAULT 0,
             ADD COLUMN known_idle_gpu_milli_seconds bigint NOT NULL DEFAULT 0;
         ALTER TABLE user_summaries ADD COLUMN known_idle_records bigint NOT NULL DEFAULT 0,
             ADD COLUMN known_idle_gpu_milli_seconds bigint NOT NULL DEFAULT 0;",
    ),
    // 9: the report generation per site, bumped by every ingest commit, which the central
    // service's report answer cache reads before each report (`repository/generation.rs`).
    (
        9,
        "CREATE TABLE report_generations (
             site       text   NOT NULL PRIMARY KEY,
             generation bigint NOT NULL
         );",
    ),
];

/// The repository's migrations, for the store layer's one runner ([`crate::database::migrate`]).
/// Adding a migration: one entry at the end of [`MIGRATIONS`].
pub(crate) const SET: MigrationSet = MigrationSet {
    owner: "accounting repository",
    table: "schema_migrations",
    lock: MIGRATION_LOCK,
    migrations: MIGRATIONS,
};

/// The newest schema version this program knows.
pub(super) const LATEST: i64 = SET.latest();

/// Applies the migrations the database lacks; `Err(found)` when the database is newer than this
/// program (nothing is changed then).
pub(super) async fn migrate(
    client: &mut Client,
) -> Result<Result<i64, i64>, tokio_postgres::Error> {
    crate::database::migrate::postgres(client, &SET).await
}

/// Creates the partitions of `periods` that do not exist yet (`records_p2026_01`, ...).
pub(crate) async fn create_partitions(
    client: &mut Client,
    periods: &[Period],
) -> Result<(), tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PARTITION_LOCK])
        .await?;
    for period in periods {
        // Built from integers only: nothing from outside reaches the DDL text.
        tx.batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS records_p{:04}_{:02} PARTITION OF records \
             FOR VALUES FROM ({}) TO ({})",
            period.year(),
            period.month(),
            period.index(),
            period.index() + 1
        ))
        .await?;
    }
    tx.commit().await
}
