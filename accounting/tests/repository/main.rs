//! The repository's behaviour, one suite run against both backends: every test in `suite` runs once
//! on a fresh SQLite file and once on a fresh PostgreSQL database.

#![allow(clippy::unwrap_used)]

mod opening_at_once;
mod postgres_connections;
mod postgres_errors;
mod suite;

use accelfed_testkit::postgres;

use accelfed_accounting::repository::Repository;

/// A repository and whatever keeps its storage alive until the test ends.
pub struct Fixture {
    pub repo: Repository,
    /// What `Repository::open` was given.
    pub location: String,
    _keep: Box<dyn std::any::Any + Send>,
}

pub async fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repository.sqlite");
    let location = path.to_str().unwrap().to_owned();
    let repo = Repository::open(&location).await.unwrap();
    Fixture {
        repo,
        location,
        _keep: Box::new(dir),
    }
}

pub async fn postgres() -> Fixture {
    let db = postgres::TestDatabase::create().await;
    let repo = Repository::open(&db.url).await.unwrap();
    Fixture {
        repo,
        location: db.url.clone(),
        _keep: Box::new(db),
    }
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fixture")
            .field("location", &self.location)
            .finish()
    }
}

/// Instantiates each named suite test for both backends.
macro_rules! both_backends {
    ($($test:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test]
                async fn $test() {
                    let fixture = crate::sqlite().await;
                    crate::suite::$test(&fixture).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test]
                async fn $test() {
                    let fixture = crate::postgres().await;
                    crate::suite::$test(&fixture).await;
                }
            )*
        }
    };
}

both_backends!(
    ingest_stores_and_summarises,
    identical_resend_changes_nothing,
    changed_resend_replaces_and_moves_totals,
    mixed_batch_of_new_and_stored_records,
    other_sites_records_are_refused_per_record,
    bad_records_are_refused_with_reasons,
    oversized_batch_stores_up_to_the_limit,
    reports_by_each_dimension_with_filters,
    report_formats_render_repository_data,
    reports_by_user_add_up_to_the_summaries,
    a_sites_records_page_by_page,
    sync_counts_per_month,
    reopening_keeps_data_and_schema,
    batches_sent_at_once_count_each_record_once,
    shares_sum_exactly_and_capacity_is_checked,
    site_contacts_are_kept_and_held_lists_replaced,
    energy_is_stored_summed_and_replaced_exactly,
    known_idle_time_is_summed_replaced_and_migrated,
    the_user_rollup_is_kept_on_ingest_and_rebuilt_by_the_migration,
);
