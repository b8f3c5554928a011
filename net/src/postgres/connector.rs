//! The connector tokio-postgres takes ([`MakeTlsConnect`]), over tokio-rustls with the settings
//! [`super::target`] chose. tokio-postgres asks the server for TLS itself (`SSLRequest`) and hands
//! the socket over only when the server agreed; this wraps it.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

/// The TLS side of a PostgreSQL target: no TLS (`sslmode=disable`) or rustls with one of libpq's
/// checks. Cheap to clone (the pool makes one connection per clone).
#[derive(Clone)]
pub struct PostgresTls {
    config: Option<Arc<rustls::ClientConfig>>,
}

impl std::fmt::Debug for PostgresTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresTls")
            .field("enabled", &self.config.is_some())
            .finish()
    }
}

impl PostgresTls {
    pub(super) fn new(config: Arc<rustls::ClientConfig>) -> Self {
        Self {
            config: Some(config),
        }
    }

    /// For `sslmode=disable`: tokio-postgres then never asks for TLS.
    pub(super) fn disabled() -> Self {
        Self { config: None }
    }
}

impl<S> MakeTlsConnect<S> for PostgresTls
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = PostgresTlsStream<S>;
    type TlsConnect = PostgresTlsConnect;
    type Error = io::Error;

    /// Called for every host before TLS is wanted (a Unix socket's host is empty), so a name
    /// that cannot be a TLS server name fails only when TLS is used with it.
    fn make_tls_connect(&mut self, domain: &str) -> Result<PostgresTlsConnect, io::Error> {
        Ok(PostgresTlsConnect {
            config: self.config.clone(),
            domain: domain.to_owned(),
        })
    }
}

/// One connection's handshake.
#[derive(Debug)]
pub struct PostgresTlsConnect {
    config: Option<Arc<rustls::ClientConfig>>,
    domain: String,
}

impl<S> TlsConnect<S> for PostgresTlsConnect
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = PostgresTlsStream<S>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<PostgresTlsStream<S>, io::Error>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        Box::pin(async move {
            let config = self
                .config
                .ok_or_else(|| io::Error::other("TLS is off (sslmode=disable)"))?;
            let name = ServerName::try_from(self.domain.clone()).map_err(|error| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{:?} cannot be a TLS server name: {error}", self.domain),
                )
            })?;
            let stream = tokio_rustls::TlsConnector::from(config)
                .connect(name, stream)
                .await?;
            Ok(PostgresTlsStream(stream))
        })
    }
}

/// A TLS session with the server.
#[derive(Debug)]
pub struct PostgresTlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for PostgresTlsStream<S> {
    /// No channel binding: SCRAM then authenticates without it, as it does with libpq's
    /// `channel_binding=prefer` against a server that offers none.
    fn channel_binding(&self) -> ChannelBinding {
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for PostgresTlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for PostgresTlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
