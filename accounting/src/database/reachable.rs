//! Waiting for PostgreSQL when the service starts: a database that is still starting, restarting
//! or not up yet (a host that boots both) is waited for, up to a limit, rather than ending
//! `serve`; a database that refuses (a wrong password, a database that does not exist) ends the
//! wait at once, since waiting cannot cure it. Once running, the pool and the writer reconnect on
//! their own ([`super::postgres`]).

use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;

/// How long `serve` waits for its database at start by default (`database.start_wait_s`).
pub const START_WAIT: Duration = Duration::from_secs(60);
/// Between two tries.
const RETRY: Duration = Duration::from_secs(1);
/// One try: connecting and the answer.
const TRY_LIMIT: Duration = Duration::from_secs(10);

/// Returns once a connection to `url` answers a query; the reason otherwise, at once for a
/// failure waiting cannot cure and after `limit` for one it might (the last one's words).
pub async fn wait_until_reachable(url: &str, limit: Duration) -> Result<(), String> {
    let location = accelfed_schemas::database_url::redact(url);
    let target = super::postgres::target(url).map_err(|error| format!("{location}: {error}"))?;
    let started = Instant::now();
    let mut warned = false;
    loop {
        let tried = tokio::time::timeout(TRY_LIMIT, async {
            let client = super::postgres::connect(&target).await?;
            client.simple_query("SELECT 1").await.map(drop)
        })
        .await;
        let error = match tried {
            Ok(Ok(())) => {
                if warned {
                    tracing::info!(url = %location, "the database answers; starting");
                }
                return Ok(());
            }
            Ok(Err(error)) if !curable(&error) => {
                let why = crate::repository::postgres_message::describe(&error);
                return Err(format!("{location}: {why}"));
            }
            Ok(Err(error)) => crate::repository::postgres_message::describe(&error),
            Err(_) => format!("no answer within {} s", TRY_LIMIT.as_secs()),
        };
        if started.elapsed() >= limit {
            return Err(format!(
                "{location}: {error} (waited {} s for the database)",
                limit.as_secs()
            ));
        }
        if !warned {
            tracing::warn!(
                url = %location,
                "the database does not answer yet ({error}); waiting up to {} s",
                limit.as_secs()
            );
            warned = true;
        }
        tokio::time::sleep(RETRY).await;
    }
}

/// Whether waiting may cure `error`: no answer from a server (refused, reset, closed), or a
/// server that says it is starting or shutting down.
pub(crate) fn curable(error: &tokio_postgres::Error) -> bool {
    match error.code() {
        None => true,
        Some(code) => [
            SqlState::CANNOT_CONNECT_NOW,
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::TOO_MANY_CONNECTIONS,
        ]
        .contains(code),
    }
}
