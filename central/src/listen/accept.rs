//! The accept loop every port shares: admit through the [`Gate`], finish the TLS handshake within
//! its timeout on a task of its own (a slow client never holds up the next), and hand the
//! connection on. At the file-descriptor limit the loop waits (5 ms doubling to 1 s) instead of
//! retrying at once: a listener whose `accept` fails keeps failing until a descriptor is freed, and
//! retrying in a tight loop is what spun a core and wrote gigabytes of log. Refusals and accept
//! failures are logged at most once per interval, with how many were not logged.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;

use super::connection::{Accepted, Stream};
use super::frames::FrameMeter;
use super::gate::{Gate, Permit, Refusal};
use super::idle::IdleTimeout;
use super::limits::ConnectionLimits;
use super::requests::QuietAlarm;

/// How often a repeated refusal or accept failure is logged.
const LOG_INTERVAL: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for the server to take them.
const QUEUE: usize = 64;

/// The connections a port accepted, in the order their handshakes finished; ends when the stop
/// signal turns true.
#[derive(Debug)]
pub struct Incoming {
    receiver: mpsc::Receiver<Accepted>,
}

impl Incoming {
    /// The next connection; `None` once the port stopped.
    pub async fn next(&mut self) -> Option<Accepted> {
        self.receiver.recv().await
    }
}

impl futures_util::Stream for Incoming {
    type Item = Result<Accepted, io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut()
            .receiver
            .poll_recv(cx)
            .map(|next| next.map(Ok))
    }
}

/// How a port's connections are secured.
#[derive(Clone)]
pub enum Security {
    /// A TLS handshake (within the handshake timeout) before the connection is handed on.
    Tls(TlsAcceptor),
    /// Plain TCP: the metrics port, meant for a private address.
    Plain,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Tls(_) => "Tls",
            Self::Plain => "Plain",
        })
    }
}

/// What counts as activity on a port's connections. Both close a connection on which no byte has
/// moved for the idle timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Bytes alone (HTTP/1.1, where nothing moves between requests).
    Bytes,
    /// Requests too: a connection with no request in flight for the idle timeout is closed even if
    /// frames keep arriving (HTTP/2 PINGs). The server must count requests with
    /// [`super::requests::TrackRequests`].
    Requests,
}

/// A port's name (in logs) and how it accepts.
#[derive(Debug, Clone)]
pub struct Port {
    pub name: &'static str,
    pub security: Security,
    pub idle: Idle,
}

/// Starts accepting TLS connections on `listener` for the port named `port` (in logs) until
/// `stop` turns true; bytes tell idleness (see [`accept`] for the other choices).
pub fn incoming(
    port: &'static str,
    listener: TcpListener,
    tls: TlsAcceptor,
    gate: Gate,
    stop: watch::Receiver<bool>,
) -> Incoming {
    let port = Port {
        name: port,
        security: Security::Tls(tls),
        idle: Idle::Bytes,
    };
    accept(port, listener, gate, stop)
}

/// Starts accepting on `listener` as `port` says until `stop` turns true.
pub fn accept(
    port: Port,
    listener: TcpListener,
    gate: Gate,
    mut stop: watch::Receiver<bool>,
) -> Incoming {
    let (sender, receiver) = mpsc::channel(QUEUE);
    tokio::spawn(async move {
        // One throttle per kind of refusal, so a flood of one kind does not hide the other.
        let (mut shed_full, mut shed_address) = (Throttle::default(), Throttle::default());
        let (mut shed_network, mut displaced) = (Throttle::default(), Throttle::default());
        let mut failed = Throttle::default();
        let mut backoff = Duration::ZERO;
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = stop.wait_for(|stop| *stop) => return,
            };
            let (stream, peer) = match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    backoff = (backoff * 2).clamp(Duration::from_millis(5), Duration::from_secs(1));
                    if let Some(unlogged) = failed.due() {
                        tracing::warn!(
                            port = port.name,
                            %error,
                            unlogged,
                            "accept failed; waiting {} ms before accepting again",
                            backoff.as_millis()
                        );
                    }
                    tokio::time::sleep(backoff).await;
                    continue;
                }
            };
            backoff = Duration::ZERO;
            let permit = match gate.admit(peer.ip()) {
                Ok(admission) => {
                    if let Some(from) = admission.displaced
                        && let Some(unlogged) = displaced.due()
                    {
                        tracing::warn!(
                            port = port.name,
                            %peer,
                            %from,
                            unlogged,
                            "the port is full: a connection of the address holding the most was \
                             closed to make room"
                        );
                    }
                    admission.permit
                }
                Err(refusal) => {
                    let (throttle, why) = match refusal {
                        Refusal::Full => (
                            &mut shed_full,
                            "the port holds max_connections and no one holds more than this client",
                        ),
                        Refusal::NetworkFull => (
                            &mut shed_network,
                            "the network holds max_connections_per_network",
                        ),
                        Refusal::AddressFull => (
                            &mut shed_address,
                            "the address holds max_connections_per_address",
                        ),
                    };
                    if let Some(unlogged) = throttle.due() {
                        tracing::warn!(port = port.name, %peer, unlogged, "connection closed: {why}");
                    }
                    continue;
                }
            };
            let admitted = Admitted {
                stream,
                peer,
                permit,
            };
            tokio::spawn(hand_on(
                port.clone(),
                *gate.limits(),
                admitted,
                sender.clone(),
            ));
        }
    });
    Incoming { receiver }
}

/// A connection the gate let in, before its handshake.
struct Admitted {
    stream: TcpStream,
    peer: SocketAddr,
    permit: Permit,
}

/// Finishes the TLS handshake within its timeout (on a TLS port) and hands the connection to the
/// server; a connection whose handshake fails or times out is dropped, freeing its place.
async fn hand_on(
    port: Port,
    limits: ConnectionLimits,
    admitted: Admitted,
    sender: mpsc::Sender<Accepted>,
) {
    let Admitted {
        stream,
        peer,
        permit,
    } = admitted;
    let _ = stream.set_nodelay(true);
    let local = stream.local_addr().ok();
    let stream = IdleTimeout::new(stream, limits.idle_timeout());
    let stream = match port.security {
        Security::Plain => Stream::Plain(stream),
        Security::Tls(tls) => {
            let handshake = tokio::time::timeout(limits.handshake_timeout(), tls.accept(stream));
            let handshaken = tokio::select! {
                handshaken = handshake => handshaken,
                () = permit.evicted() => {
                    tracing::debug!(port = port.name, %peer, "closed during the TLS handshake to make room");
                    return;
                }
            };
            match handshaken {
                Ok(Ok(stream)) => Stream::Tls(Box::new(stream)),
                Ok(Err(error)) => {
                    tracing::debug!(port = port.name, %peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(port = port.name, %peer, "TLS handshake timed out");
                    return;
                }
            }
        }
    };
    // A port that counts requests serves HTTP/2, whose control frames are bounded too.
    let (quiet, frames) = match port.idle {
        Idle::Bytes => (None, None),
        Idle::Requests => (
            Some(QuietAlarm::new(permit.requests(), limits.idle_timeout())),
            Some(FrameMeter::new()),
        ),
    };
    let _ = sender
        .send(Accepted::new(stream, peer, local, quiet, permit, frames))
        .await;
}

/// Lets one event through per [`LOG_INTERVAL`] and counts the rest.
#[derive(Debug, Default)]
struct Throttle {
    last: Option<Instant>,
    unlogged: u64,
}

impl Throttle {
    /// `Some(events not logged since the last one)` when this event should be logged.
    fn due(&mut self) -> Option<u64> {
        let now = Instant::now();
        if self
            .last
            .is_some_and(|last| now.duration_since(last) < LOG_INTERVAL)
        {
            self.unlogged += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_logged_once_with_its_count() {
        let mut throttle = Throttle::default();
        assert_eq!(throttle.due(), Some(0));
        for _ in 0..1000 {
            assert_eq!(throttle.due(), None);
        }
        throttle.last = Some(Instant::now() - LOG_INTERVAL);
        assert_eq!(throttle.due(), Some(1000));
    }
}
