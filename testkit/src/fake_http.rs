//! The accept loop the tests' fake APIs share (`fake_kubernetes` over TLS, `fake_openstack` in
//! plain HTTP): each connection served by hyper's HTTP/1 with one handler, until the returned task
//! is aborted (the fakes abort it when dropped).

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
