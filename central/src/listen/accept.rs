//! The accept loop both ports share: admit through the [`Gate`], finish the TLS handshake within
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

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::idle::IdleTimeout;
use super::limits::{Gate, Permit, Refusal};

/// How often a repeated refusal or accept failure is logged.
const LOG_INTERVAL: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for the server to take them.
const QUEUE: usize = 64;

/// A connection that passed the gate and the TLS handshake; it holds its place in the gate until
/// dropped.
#[derive(Debug)]
pub struct Accepted {
    stream: TlsStream<IdleTimeout<TcpStream>>,
    peer: SocketAddr,
    local: Option<SocketAddr>,
    _permit: Permit,
}

impl Accepted {
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }
}

impl Connected for Accepted {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        TcpConnectInfo {
            local_addr: self.local,
            remote_addr: Some(self.peer),
        }
    }
}

impl AsyncRead for Accepted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Accepted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

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

/// Starts accepting on `listener` for the port named `port` (in logs) until `stop` turns true.
pub fn incoming(
    port: &'static str,
    listener: TcpListener,
    tls: TlsAcceptor,
    gate: Gate,
    mut stop: watch::Receiver<bool>,
) -> Incoming {
    let (sender, receiver) = mpsc::channel(QUEUE);
    tokio::spawn(async move {
        let mut shed = Throttle::default();
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
                            port,
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
                Ok(permit) => permit,
                Err(refusal) => {
                    if let Some(unlogged) = shed.due() {
                        let why = match refusal {
                            Refusal::Full => "the port holds max_connections",
                            Refusal::AddressFull => "the address holds max_connections_per_address",
                        };
                        tracing::warn!(port, %peer, unlogged, "connection closed: {why}");
                    }
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let local = stream.local_addr().ok();
            let limits = *gate.limits();
            let tls = tls.clone();
            let sender = sender.clone();
            tokio::spawn(async move {
                let stream = IdleTimeout::new(stream, limits.idle_timeout());
                let handshake =
                    tokio::time::timeout(limits.handshake_timeout(), tls.accept(stream));
                match handshake.await {
                    Ok(Ok(stream)) => {
                        let accepted = Accepted {
                            stream,
                            peer,
                            local,
                            _permit: permit,
                        };
                        let _ = sender.send(accepted).await;
                    }
                    Ok(Err(error)) => tracing::debug!(port, %peer, %error, "TLS handshake failed"),
                    Err(_) => tracing::debug!(port, %peer, "TLS handshake timed out"),
                }
            });
        }
    });
    Incoming { receiver }
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
