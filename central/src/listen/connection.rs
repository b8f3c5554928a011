//! One connection the accept loop admitted: its stream (TLS or plain, under the byte-level idle
//! timeout), where it comes from, its place in the gate (which may tell it to give way to another:
//! its next read or write fails), and, on HTTP/2 ports, the alarm that closes it once no request
//! has been in flight for the idle timeout and the bound on its control frames.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::frames::FrameMeter;
use super::gate::Permit;
use super::idle::IdleTimeout;
use super::requests::{ConnectionInfo, QuietAlarm, Requests};

/// The bytes of a connection: after the TLS handshake, or as they come (the plain-HTTP metrics
/// port).
#[derive(Debug)]
pub enum Stream {
    Tls(Box<TlsStream<IdleTimeout<TcpStream>>>),
    Plain(IdleTimeout<TcpStream>),
}

/// A connection that passed the gate (and the TLS handshake, on a TLS port); it holds its place in
/// the gate until dropped.
#[derive(Debug)]
pub struct Accepted {
    stream: Stream,
    peer: SocketAddr,
    local: Option<SocketAddr>,
    requests: Arc<Requests>,
    /// Set on ports that count requests (HTTP/2); `None` where bytes alone tell idleness.
    quiet: Option<QuietAlarm>,
    /// Set on HTTP/2 ports.
    frames: Option<FrameMeter>,
    permit: Permit,
}

impl Accepted {
    pub(super) fn new(
        stream: Stream,
        peer: SocketAddr,
        local: Option<SocketAddr>,
        quiet: Option<QuietAlarm>,
        permit: Permit,
        frames: Option<FrameMeter>,
    ) -> Self {
        Self {
            stream,
            peer,
            local,
            requests: permit.requests(),
            quiet,
            frames,
            permit,
        }
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// What an HTTP/1.1 server puts into each request (an HTTP/2 server gets it from
    /// [`Connected`]): the addresses, the request count and the handle that marks the connection
    /// as a site's.
    pub fn info(&self) -> ConnectionInfo {
        self.connect_info()
    }

    /// The error a connection told to give way reads and writes.
    fn evicted() -> io::Error {
        io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "closed to make room for a client holding fewer connections",
        )
    }
}

impl Connected for Accepted {
    type ConnectInfo = ConnectionInfo;

    fn connect_info(&self) -> ConnectionInfo {
        ConnectionInfo {
            tcp: TcpConnectInfo {
                local_addr: self.local,
                remote_addr: Some(self.peer),
            },
            requests: self.requests.clone(),
            standing: self.permit.standing(),
        }
    }
}

impl AsyncRead for Accepted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.permit.poll_evicted(cx).is_ready() {
            return Poll::Ready(Err(Self::evicted()));
        }
        let before = buf.filled().len();
        let read = match &mut this.stream {
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
            Stream::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
        };
        if let (Poll::Ready(Ok(())), Some(frames)) = (&read, &mut this.frames)
            && let Err(error) = frames.observe(&buf.filled()[before..])
        {
            tracing::debug!(peer = %this.peer, %error, "HTTP/2 connection closed");
            return Poll::Ready(Err(error));
        }
        match (read, &mut this.quiet) {
            // An HTTP/2 server always has a read pending, so this is where a quiet connection
            // learns that its time is up.
            (Poll::Pending, Some(quiet)) => quiet.poll_expired(cx).map(Err),
            (read, _) => read,
        }
    }
}

impl AsyncWrite for Accepted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.permit.poll_evicted(cx).is_ready() {
            return Poll::Ready(Err(Self::evicted()));
        }
        match &mut this.stream {
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, data),
            Stream::Plain(stream) => Pin::new(stream).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
            Stream::Plain(stream) => Pin::new(stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().stream {
            Stream::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
            Stream::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
        }
    }
}
