//! The report generation: a number that grows with every commit that changes the summaries, read
//! by the central service's report answer cache (`central/src/report_api/cache.rs`) before each
//! report, so a cached answer is served only while nothing has been stored since it was computed.
//!
//! One row per site in `report_generations` (schema 9), bumped inside the ingest transaction that
//! writes the site's summary deltas, and read as the sum of every row. Per site, not one row for
//! all: on PostgreSQL a batch already holds its site's advisory lock until commit, so a site's row
//! adds no waiting, where one shared row would serialise the commits of every site on every
//! instance. The sum only grows (rows are never removed or decreased), and as it is read in the
//! database, any instance on the same database sees a commit as soon as it is visible at all: an
//! ingest through one `accelfed serve` invalidates the answers cached by another at once, with no
//! message to lose (see docs/architecture.md, "Report answer cache").
//!
//! A bulk load ([`super::bulk`]) bumps the row of the empty site name with each batch.

/// SQLite: bump `?1`'s generation (inside the writing transaction).
pub(crate) const SQLITE_BUMP: &str =
    "INSERT INTO report_generations (site, generation) VALUES (?1, 1)
     ON CONFLICT (site) DO UPDATE SET generation = generation + 1";

/// PostgreSQL: bump `$1`'s generation (inside the writing transaction).
pub(crate) const POSTGRES_BUMP: &str =
    "INSERT INTO report_generations (site, generation) VALUES ($1, 1)
     ON CONFLICT (site) DO UPDATE SET generation = report_generations.generation + 1";

/// Both: the generation now (0 for a repository that never stored anything).
pub(crate) const READ: &str =
    "SELECT CAST(COALESCE(SUM(generation), 0) AS BIGINT) FROM report_generations";
