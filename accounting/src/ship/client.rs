//! The gRPC channel to the repository: TLS always (rustls; the CA from the configuration or the
//! system's roots), the site's bearer token on every call (marked sensitive, never logged).

use std::time::Duration;

use tonic::Request;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

use super::error::ShipError;
use crate::wire::AUTHORIZATION;
use crate::wire::proto::accounting_client::AccountingClient;

/// Where and how to reach the repository.
#[derive(Clone)]
pub struct ClientSettings {
    /// `https://host:port`.
    pub endpoint: String,
    /// PEM of the CA that signed the repository's certificate; `None`: the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// The site's token (secret).
    pub token: String,
    /// Per call, connection included.
    pub timeout: Duration,
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSettings")
            .field("endpoint", &self.endpoint)
            .field("ca_pem", &self.ca_pem.as_ref().map(|_| "<pem>"))
            .field("token", &"<secret>")
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Adds the site's bearer token to every call.
#[derive(Clone)]
pub(super) struct Bearer(MetadataValue<Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, tonic::Status> {
        request.metadata_mut().insert(AUTHORIZATION, self.0.clone());
        Ok(request)
    }
}

type Authenticated = InterceptedService<Channel, Bearer>;

/// A connected (lazily: the first call connects, so a repository that is down is a retryable
/// call failure) client.
#[derive(Clone)]
pub struct Client {
    pub(super) inner: AccountingClient<Authenticated>,
    pub(super) endpoint: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Builds the channel; fails on settings that can never work (not `https://`, a bad CA file,
    /// a token that cannot be a header).
    pub fn new(settings: &ClientSettings) -> Result<Self, ShipError> {
        let fail = |message: String| ShipError::Settings {
            endpoint: settings.endpoint.clone(),
            message,
        };
        if !settings.endpoint.starts_with("https://") {
            return Err(fail(
                "the endpoint must be https:// (records are only shipped over TLS)".to_owned(),
            ));
        }
        let mut tls = ClientTlsConfig::new();
        tls = match &settings.ca_pem {
            Some(pem) => tls.ca_certificate(Certificate::from_pem(pem)),
            None => tls.with_native_roots(),
        };
        let endpoint = Endpoint::from_shared(settings.endpoint.clone())
            .map_err(|e| fail(format!("not a URL: {e}")))?
            .tls_config(tls)
            .map_err(|e| fail(format!("TLS: {e}")))?
            .connect_timeout(settings.timeout)
            .timeout(settings.timeout);
        let channel = endpoint.connect_lazy();
        let mut value: MetadataValue<Ascii> =
            format!("Bearer {}", settings.token.trim())
                .parse()
                .map_err(|_| fail("the token has characters a header cannot carry".to_owned()))?;
        value.set_sensitive(true);
        let inner = AccountingClient::with_interceptor(channel, Bearer(value))
            .max_decoding_message_size(64 * 1024 * 1024)
            .max_encoding_message_size(64 * 1024 * 1024);
        Ok(Self {
            inner,
            endpoint: settings.endpoint.clone(),
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }
}

/// Whether a failed call may succeed when tried again.
pub(super) fn retryable(status: &tonic::Status) -> bool {
    use tonic::Code;
    matches!(
        status.code(),
        Code::Unavailable
            | Code::DeadlineExceeded
            | Code::ResourceExhausted
            | Code::Aborted
            | Code::Internal
            | Code::Unknown
            | Code::Cancelled
    )
}

/// A status in words for messages (the code and the server's message, never metadata).
pub(super) fn describe(status: &tonic::Status) -> String {
    let message = status.message();
    if message.is_empty() {
        format!("{:?}", status.code())
    } else {
        format!("{:?}: {message}", status.code())
    }
}
