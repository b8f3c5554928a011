//! The accept loop the tests' fake APIs share (`fake_kubernetes` over TLS, `fake_openstack` in
//! plain HTTP): each connection served by hyper's HTTP/1 with one handler, until the returned task
//! is aborted (the fakes abort it when dropped). Beside it, the two wrong ports a client's error
//! words are tested against: one that answers a TLS handshake in plain HTTP
//! ([`plain_http_port`]) and one nothing listens on ([`closed_port`]).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Serves every connection to `listener` (through `tls` when given) with `answer(state, request)`.
pub fn serve<S, F, Fut>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    state: Arc<S>,
    answer: F,
) -> tokio::task::JoinHandle<()>
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (tls, state, answer) = (tls.clone(), state.clone(), answer.clone());
            tokio::spawn(async move {
                let service = service_fn(move |request| {
                    let answer = answer(state.clone(), request);
                    async move { Ok::<_, Infallible>(answer.await) }
                });
                let http = hyper::server::conn::http1::Builder::new();
                let _ = match tls {
                    Some(tls) => match tls.accept(stream).await {
                        Ok(stream) => http.serve_connection(TokioIo::new(stream), service).await,
                        Err(_) => return,
                    },
                    None => http.serve_connection(TokioIo::new(stream), service).await,
                };
            });
        }
    })
}

/// A port that answers whatever arrives with a plain-HTTP 400 and closes, as a service's non-TLS
/// port answers a TLS handshake (a Keystone or slurmrestd configured without TLS). Serves until
/// the test's runtime ends.
pub async fn plain_http_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind a free loopback port");
    let port = listener.local_addr().expect("the bound address").port();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let _ = socket.readable().await;
            let _ = socket.try_read(&mut [0u8; 1024]);
            let _ = socket.writable().await;
            let _ = socket.try_write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    port
}

/// A loopback port nothing listens on (bound, then closed): a connection to it is refused.
pub fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind a free loopback port")
        .port()
}
