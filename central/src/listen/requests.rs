//! Idleness counted in requests, not bytes, for HTTP/2. On an HTTP/2 connection bytes move with no
//! request at all: a client's PING frames (answered by the server) and the server's own keep-alive
//! PINGs keep the byte-level [`super::idle::IdleTimeout`] from ever firing, so a client that only
//! pings would hold its place in the gate forever. Here a connection is idle when it has no request
//! in flight, and it is closed once it has been idle for the idle timeout since it was accepted or
//! since its last request ended, whatever frames arrive meanwhile.
//!
//! The server counts requests by putting [`TrackRequests`] in front of its service; the accepted
//! connection reads the count through the [`ConnectionInfo`] that tonic puts into every request's
//! extensions.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tonic::codegen::{Service, http};
use tonic::server::NamedService;
use tonic::transport::server::TcpConnectInfo;

/// Requests in flight on one connection, and when it last had none.
#[derive(Debug)]
pub struct Requests {
    in_flight: AtomicUsize,
    quiet_since: Mutex<Instant>,
}

impl Requests {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            in_flight: AtomicUsize::new(0),
            quiet_since: Mutex::new(Instant::now()),
        })
    }

    /// Counts a request until the returned guard is dropped.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(self.clone())
    }

    /// Since when no request has been in flight; `None` while one is.
    pub fn quiet_since(&self) -> Option<Instant> {
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        Some(*self.quiet_since.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// One request in flight; dropping it ends the request.
#[derive(Debug)]
pub struct InFlight(Arc<Requests>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let requests = &self.0;
        // The time is set before the count drops, so a reader that sees no request in flight
        // also sees when the last one ended.
        *requests
            .quiet_since
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Instant::now();
        requests.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An accepted connection's alarm: fires once the connection has had no request in flight for
/// `timeout`.
#[derive(Debug)]
pub struct QuietAlarm {
    requests: Arc<Requests>,
    timeout: Duration,
    alarm: Pin<Box<Sleep>>,
}

impl QuietAlarm {
    pub fn new(requests: Arc<Requests>, timeout: Duration) -> Self {
        Self {
            requests,
            timeout,
            alarm: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    /// `Ready(Err)` once the connection has been quiet for the timeout; registers the waker
    /// otherwise (while a request is in flight, to look again one timeout later).
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        let now = Instant::now();
        let deadline = match self.requests.quiet_since() {
            Some(since) => since + self.timeout,
            None if self.alarm.deadline() <= now => now + self.timeout,
            None => self.alarm.deadline(),
        };
        if self.alarm.deadline() != deadline {
            self.alarm.as_mut().reset(deadline);
        }
        match self.alarm.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no request for {} s", self.timeout.as_secs()),
            )),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// What tonic puts into each request's extensions for a connection from [`super::accept`]: the
/// addresses, the connection's request count for [`TrackRequests`], and its standing in the gate
/// (the authenticator marks a site's connection, which then keeps its place in a full port).
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub tcp: TcpConnectInfo,
    pub requests: Arc<Requests>,
    /// Marks the connection as a site's once a call on it carried a valid token.
    pub standing: super::gate::Standing,
}

/// A service wrapper that counts each request on its connection's [`Requests`] until the response
/// is ready, and puts the connection's [`TcpConnectInfo`] into the request (so
/// `tonic::Request::remote_addr` still answers).
#[derive(Debug, Clone)]
pub struct TrackRequests<S> {
    inner: S,
}

impl<S> TrackRequests<S> {
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S: NamedService> NamedService for TrackRequests<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<http::Request<B>> for TrackRequests<S>
where
    S: Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let in_flight = match request.extensions().get::<ConnectionInfo>().cloned() {
            Some(info) => {
                request.extensions_mut().insert(info.tcp);
                Some(info.requests.begin())
            }
            None => None,
        };
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await;
            drop(in_flight);
            response
        })
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use super::*;

    /// Polls the alarm once, as a pending read would.
    async fn expired(alarm: &mut QuietAlarm) -> bool {
        poll_fn(|cx| Poll::Ready(alarm.poll_expired(cx).is_ready())).await
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_closed_after_the_timeout_without_a_request_in_flight() {
        let requests = Requests::new();
        let mut alarm = QuietAlarm::new(requests.clone(), Duration::from_secs(10));
        tokio::time::advance(Duration::from_secs(6)).await;
        assert!(!expired(&mut alarm).await);
        let request = requests.begin();
        // In flight past the timeout: not idle.
        tokio::time::advance(Duration::from_secs(30)).await;
        assert!(!expired(&mut alarm).await);
        drop(request);
        tokio::time::advance(Duration::from_secs(9)).await;
        assert!(!expired(&mut alarm).await, "9 s since the request ended");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(expired(&mut alarm).await, "10 s since the request ended");
    }
}
