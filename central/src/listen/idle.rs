//! A stream that gives up when nothing moves: once no byte has been read or written for the idle
//! timeout, reads and writes fail with `TimedOut`, and the HTTP server drops the connection. It
//! closes idle keep-alive connections and clients that send half a request and stop, on both
//! ports, whatever the protocol above does with its own timers.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `inner`, closed after `timeout` without traffic.
#[derive(Debug)]
pub struct IdleTimeout<S> {
    inner: S,
    timeout: Duration,
    deadline: Pin<Box<Sleep>>,
}

impl<S> IdleTimeout<S> {
    pub fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    fn moved(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.timeout);
    }

    /// `Ready(Err)` once the deadline passed with nothing moving; registers the waker otherwise.
    fn expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("idle for {} s", self.timeout.as_secs()),
            )),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleTimeout<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    this.moved();
                }
                Poll::Ready(result)
            }
            Poll::Pending => this.expired(cx).map(Err),
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleTimeout<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_write(cx, data) {
            Poll::Ready(result) => {
                if matches!(result, Ok(written) if written > 0) {
                    this.moved();
                }
                Poll::Ready(result)
            }
            Poll::Pending => this.expired(cx).map(Err),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_silent_peer_is_cut_off_after_the_timeout_and_traffic_keeps_it_open() {
        let (near, mut far) = tokio::io::duplex(64);
        let mut stream = IdleTimeout::new(near, Duration::from_secs(10));
        let mut buffer = [0u8; 4];
        tokio::time::advance(Duration::from_secs(8)).await;
        far.write_all(b"ping").await.unwrap();
        stream.read_exact(&mut buffer).await.unwrap();
        // 8 s more: 16 s since the start, 8 since the last byte.
        tokio::time::advance(Duration::from_secs(8)).await;
        far.write_all(b"pong").await.unwrap();
        stream.read_exact(&mut buffer).await.unwrap();
        let error = stream.read_exact(&mut buffer).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
    }
}
