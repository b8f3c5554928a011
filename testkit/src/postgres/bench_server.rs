//! The PostgreSQL server the benchmarks use (`ACCELFED_BENCH_POSTGRES`, default
//! postgres://postgres@127.0.0.1:5432, trust auth): each run creates its own databases and drops
//! them.

/// The benchmarks' server.
#[derive(Debug, Clone)]
pub struct BenchServer {
    url: String,
}

/// A database a benchmark made.
#[derive(Debug)]
pub struct BenchDatabase {
    pub url: String,
    pub name: String,
}

const WHAT: &str = "the benchmark needs it (ACCELFED_BENCH_POSTGRES)";

impl BenchServer {
    pub fn from_env() -> Self {
        Self {
            url: std::env::var("ACCELFED_BENCH_POSTGRES")
                .unwrap_or_else(|_| super::DEFAULT_SERVER.to_owned()),
        }
    }

    /// A fresh, empty database `accelfed_bench_<what>_<process id>` (one of that name is dropped
    /// first).
    pub async fn fresh(&self, what: &str) -> BenchDatabase {
        let name = format!("accelfed_bench_{what}_{}", std::process::id());
        self.drop_named(&name).await;
        super::admin(&self.url, &format!("CREATE DATABASE {name}"), WHAT).await;
        BenchDatabase {
            url: format!("{}/{name}", self.url),
            name,
        }
    }

    /// The database `accelfed_bench_<name>`, kept between runs (a benchmark whose inputs are in
    /// `name` reuses what an earlier run loaded); created empty when missing. Returns it and
    /// whether it existed. [`Self::drop`] removes it (a load that did not finish).
    pub async fn kept(&self, name: &str) -> (BenchDatabase, bool) {
        let name = format!("accelfed_bench_{name}");
        let admin = format!("{}/postgres", self.url);
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|error| {
                panic!("PostgreSQL at {admin} is unreachable ({error}); {WHAT}")
            });
        let task = tokio::spawn(connection);
        let existed = client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
            .await
            .unwrap_or_else(|error| panic!("listing databases: {error}"))
            .is_some();
        drop(client);
        let _ = task.await;
        if !existed {
            super::admin(&self.url, &format!("CREATE DATABASE {name}"), WHAT).await;
        }
        let database = BenchDatabase {
            url: format!("{}/{name}", self.url),
            name,
        };
        (database, existed)
    }

    /// A checkpoint, so the phase timed next starts a checkpoint cycle of its own (as pgbench does
    /// before each run): otherwise the WAL written by the phase before decides when the next
    /// checkpoint lands, and with it the full-page images the next phase writes.
    pub async fn checkpoint(&self) {
        super::admin(&self.url, "CHECKPOINT", WHAT).await;
    }

    /// Drops `database`.
    pub async fn drop(&self, database: BenchDatabase) {
        self.drop_named(&database.name).await;
    }

    async fn drop_named(&self, name: &str) {
        super::admin(
            &self.url,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            WHAT,
        )
        .await;
    }
}
