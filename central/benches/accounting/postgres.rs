//! The PostgreSQL server the benchmark uses (`ACCELFED_BENCH_POSTGRES`, default
//! postgres://postgres@127.0.0.1:5432, trust auth): each run creates its own databases and drops them.

use tokio_postgres::NoTls;

pub struct Server {
    url: String,
}

impl Server {
    pub fn from_env() -> Self {
        Self {
            url: std::env::var("ACCELFED_BENCH_POSTGRES")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into()),
        }
    }

    async fn admin(&self, sql: &str) {
        let (client, connection) =
            tokio_postgres::connect(&format!("{}/postgres", self.url), NoTls)
                .await
                .expect("the PostgreSQL server for the benchmark (ACCELFED_BENCH_POSTGRES)");
        tokio::spawn(connection);
        client.batch_execute(sql).await.expect("an admin statement");
    }

    /// A fresh, empty database named `name` (with this process's id); returns its URL.
    pub async fn fresh(&self, name: &str) -> Database {
        let name = format!("accelfed_bench_{name}_{}", std::process::id());
        self.admin(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await;
        self.admin(&format!("CREATE DATABASE {name}")).await;
        Database {
            url: format!("{}/{name}", self.url),
            name,
        }
    }

    /// A checkpoint, so the phase timed next starts a checkpoint cycle of its own (as pgbench does
    /// before each run): otherwise the WAL written by the phase before decides when the next
    /// checkpoint lands, and with it the full-page images the next phase writes.
    pub async fn checkpoint(&self) {
        self.admin("CHECKPOINT").await;
    }

    pub async fn drop(&self, database: Database) {
        self.admin(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            database.name
        ))
        .await;
    }
}

pub struct Database {
    pub url: String,
    name: String,
}
