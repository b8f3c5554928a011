//! Pushes made through other instances, as PostgreSQL announces them: a connection of its own
//! `LISTEN`s on [`super::postgres::CHANNEL`] (`accelfed_registry`) and forwards each site named; when that connection
//! is lost (a database restart), it reconnects and forwards [`Change::Everything`], since
//! announcements made meanwhile were not heard.

use std::time::Duration;

use accelfed_net::postgres::PostgresTarget;
use futures_util::StreamExt;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// What changed in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// This site's latest document (a push committed).
    Site(String),
    /// Anything may have: reload every site (after connecting, and after each reconnect).
    Everything,
}

/// The statement that subscribes (the channel's name is a constant).
const LISTEN: &str = "LISTEN accelfed_registry";

/// How long to wait before connecting again after a failure.
const RETRY: Duration = Duration::from_secs(1);

/// Listens until the receiver is dropped. `location` (without password) is for logs.
pub(super) async fn listen(
    target: PostgresTarget,
    location: String,
    changes: mpsc::Sender<Change>,
) {
    loop {
        match target.config.connect(target.tls.clone()).await {
            Ok((client, mut connection)) => {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                // The connection is driven by polling `messages`; the LISTEN is answered there.
                let ready = {
                    let listening = client.batch_execute(LISTEN);
                    tokio::pin!(listening);
                    loop {
                        tokio::select! {
                            done = &mut listening => break done.is_ok(),
                            message = messages.next() => if !matches!(message, Some(Ok(_))) { break false },
                        }
                    }
                };
                if ready {
                    if changes.send(Change::Everything).await.is_err() {
                        return;
                    }
                    while let Some(Ok(message)) = messages.next().await {
                        if let AsyncMessage::Notification(notice) = message
                            && changes
                                .send(Change::Site(notice.payload().to_owned()))
                                .await
                                .is_err()
                        {
                            return;
                        }
                    }
                }
                drop(client);
                tracing::warn!(url = %location, "registry: lost the PostgreSQL connection that hears other instances' pushes; reconnecting");
            }
            Err(error) => {
                let why = accelfed_accounting::repository::postgres_message::describe(&error);
                tracing::warn!(url = %location, "registry: cannot listen for other instances' pushes: {why}; retrying");
            }
        }
        if changes.is_closed() {
            return;
        }
        tokio::time::sleep(RETRY).await;
    }
}
