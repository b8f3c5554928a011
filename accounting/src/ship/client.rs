//! The gRPC channel to the repository: TLS always (the one network layer, `accelfed-net`: the
//! system's roots plus the configured CA), the site's bearer token on every call (marked
//! sensitive, never logged), and one deadline per call that covers the TLS handshake too.
//!
//! A client holds one channel per endpoint (several instances of the central service) and the one
//! in use, shared by its clones so that the batches on the wire move together: a call that fails
//! in a way a retry may cure moves the client to the next endpoint ([`Client::fail_over`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tonic::Request;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::error::ShipError;
use crate::wire::AUTHORIZATION;
use crate::wire::encoded::{EncodedSubmitRequest, SUBMIT_PATH};
use crate::wire::proto::{self, accounting_client::AccountingClient};

/// Where and how to reach the repository.
#[derive(Clone)]
pub struct ClientSettings {
    /// `https://host:port`.
    pub endpoint: String,
    /// Further instances of the same central service, tried in order after `endpoint`.
    pub fallbacks: Vec<String>,
    /// PEM of a CA to trust besides the system's roots (the one that signed the repository's
    /// certificate).
    pub ca_pem: Option<Vec<u8>>,
    /// The site's token (secret).
    pub token: String,
    /// Per call, whole: connecting, the TLS handshake, the request and the answer.
    pub timeout: Duration,
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSettings")
            .field("endpoint", &self.endpoint)
            .field("fallbacks", &self.fallbacks)
            .field("ca_pem", &self.ca_pem.as_ref().map(|_| "<pem>"))
            .field("token", &"<secret>")
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The largest message either way (a batch of 50,000 records is about 15 MB).
const MESSAGE_LIMIT: usize = 64 * 1024 * 1024;

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

/// One endpoint's channel.
#[derive(Clone)]
struct Route {
    endpoint: String,
    inner: AccountingClient<Authenticated>,
    /// The same channel, for calls the generated client has no method for (requests built from
    /// already-encoded records).
    raw: tonic::client::Grpc<Authenticated>,
}

/// A connected (lazily: the first call connects, so a repository that is down is a retryable
/// call failure) client.
#[derive(Clone)]
pub struct Client {
    routes: Arc<[Route]>,
    /// The index in `routes` of the endpoint calls go to, shared by every clone.
    active: Arc<AtomicUsize>,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Builds the channels; fails on settings that can never work (not `https://`, a bad CA file,
    /// a token that cannot be a header).
    pub fn new(settings: &ClientSettings) -> Result<Self, ShipError> {
        let routes = std::iter::once(&settings.endpoint)
            .chain(&settings.fallbacks)
            .map(|endpoint| route(settings, endpoint))
            .collect::<Result<Arc<[Route]>, ShipError>>()?;
        Ok(Self {
            routes,
            active: Arc::new(AtomicUsize::new(0)),
            timeout: settings.timeout,
        })
    }

    /// Runs one call within the deadline. tonic's timeouts bound connecting and the request, not
    /// the TLS handshake between them: a peer that accepts and never answers the ClientHello would
    /// hold the call for ever without this.
    pub(super) async fn within<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, tonic::Status>>,
    ) -> Result<T, tonic::Status> {
        let started = std::time::Instant::now();
        let timed_out =
            || tonic::Status::deadline_exceeded(accelfed_net::deadline::timed_out(self.timeout));
        match accelfed_net::within(self.endpoint(), self.timeout, call).await {
            // tonic's own timeout may end the call at the same moment, in its own words.
            Ok(Err(_)) if started.elapsed() >= self.timeout => Err(timed_out()),
            Ok(result) => result,
            Err(_) => Err(timed_out()),
        }
    }

    /// `Submit` with a request of already-encoded records (the same message on the wire), to the
    /// endpoint in use; returns that endpoint's index with the answer.
    pub(super) async fn submit_encoded(
        &mut self,
        request: EncodedSubmitRequest,
    ) -> (usize, Result<proto::SubmitResponse, tonic::Status>) {
        let at = self.active();
        let mut raw = self.routes[at].raw.clone();
        let answer = self
            .within(async move {
                raw.ready().await.map_err(|e| {
                    // Keep the cause (refused, certificate, not TLS) for the message and the retry
                    // decision; the status text alone would say only that the channel failed.
                    let mut status = tonic::Status::unavailable("the channel is not ready");
                    let source: Box<dyn std::error::Error + Send + Sync> = e.into();
                    status.set_source(std::sync::Arc::from(source));
                    status
                })?;
                let codec =
                    tonic_prost::ProstCodec::<EncodedSubmitRequest, proto::SubmitResponse>::default(
                    );
                let path = tonic::codegen::http::uri::PathAndQuery::from_static(SUBMIT_PATH);
                raw.unary(Request::new(request), path, codec)
                    .await
                    .map(tonic::Response::into_inner)
            })
            .await;
        (at, answer)
    }

    /// `SyncCounts`, within the deadline, to the endpoint in use; returns that endpoint's index
    /// with the answer.
    pub(super) async fn sync_counts(
        &mut self,
    ) -> (usize, Result<proto::SyncResponse, tonic::Status>) {
        let at = self.active();
        let mut inner = self.routes[at].inner.clone();
        let answer = self
            .within(async move {
                inner
                    .sync_counts(proto::SyncRequest {})
                    .await
                    .map(tonic::Response::into_inner)
            })
            .await;
        (at, answer)
    }

    /// The endpoint calls go to now.
    pub fn endpoint(&self) -> &str {
        &self.routes[self.active()].endpoint
    }

    /// Every endpoint, in the order they are tried, for messages.
    pub fn endpoints(&self) -> String {
        let all: Vec<&str> = self.routes.iter().map(|r| r.endpoint.as_str()).collect();
        all.join(", ")
    }

    /// How many endpoints the client knows.
    pub fn endpoint_count(&self) -> usize {
        self.routes.len()
    }

    /// The endpoint at `at`, as [`Self::submit_encoded`] returns it.
    pub(super) fn endpoint_at(&self, at: usize) -> &str {
        &self.routes[at % self.routes.len()].endpoint
    }

    fn active(&self) -> usize {
        self.active.load(Ordering::Relaxed) % self.routes.len()
    }

    /// After a call to the endpoint at `failed` failed in a way a retry may cure: the client (and
    /// its clones) moves to the next endpoint, unless another call moved it already. Returns the
    /// endpoint now in use; with one endpoint, that one.
    pub(super) fn fail_over(&self, failed: usize) -> &str {
        let next = (failed + 1) % self.routes.len();
        let _ = self
            .active
            .compare_exchange(failed, next, Ordering::Relaxed, Ordering::Relaxed);
        self.endpoint()
    }
}

/// The channel to one endpoint, with the site's token on every call.
fn route(settings: &ClientSettings, endpoint: &str) -> Result<Route, ShipError> {
    let fail = |message: String| ShipError::Settings {
        endpoint: endpoint.to_owned(),
        message,
    };
    let url = accelfed_net::HttpsUrl::parse(endpoint).map_err(|message| {
        fail(format!(
            "the endpoint must be https:// (records are only shipped over TLS): {message}"
        ))
    })?;
    let trust = settings
        .ca_pem
        .clone()
        .map_or_else(accelfed_net::Trust::system, accelfed_net::Trust::from_pem);
    let channel = accelfed_net::grpc::endpoint(&url, &trust, settings.timeout)
        .map_err(fail)?
        .connect_lazy();
    let mut value: MetadataValue<Ascii> = format!("Bearer {}", settings.token.trim())
        .parse()
        .map_err(|_| fail("the token has characters a header cannot carry".to_owned()))?;
    value.set_sensitive(true);
    let bearer = Bearer(value);
    let raw = tonic::client::Grpc::new(InterceptedService::new(channel.clone(), bearer.clone()))
        .max_decoding_message_size(MESSAGE_LIMIT)
        .max_encoding_message_size(MESSAGE_LIMIT);
    let inner = AccountingClient::with_interceptor(channel, bearer)
        .max_decoding_message_size(MESSAGE_LIMIT)
        .max_encoding_message_size(MESSAGE_LIMIT);
    Ok(Route {
        endpoint: endpoint.to_owned(),
        inner,
        raw,
    })
}

/// Whether a failed call may succeed when tried again. A TLS handshake the repository's
/// certificate failed (unknown CA, expired, another name) or a peer that does not speak TLS is
/// never cured by waiting, whatever code the channel reports it with.
pub(super) fn retryable(status: &tonic::Status) -> bool {
    use tonic::Code;
    if accelfed_schemas::cause::is_permanent(status) {
        return false;
    }
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

/// A status in words for messages: the code, the server's message and, for a call that never
/// reached the server, the chain of causes (connection refused, the certificate problem), never
/// metadata.
pub(super) fn describe(status: &tonic::Status) -> String {
    use std::error::Error as _;
    let mut text = format!("{:?}", status.code());
    let message = status.message();
    if !message.is_empty() {
        text.push_str(": ");
        text.push_str(message);
    }
    if let Some(source) = status.source()
        && !message.contains(&accelfed_schemas::cause::root(source))
    {
        text.push_str(": ");
        text.push_str(&accelfed_schemas::cause::chain(source));
    }
    text
}
