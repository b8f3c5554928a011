//! An authenticated session: a Keystone v3 token with its service catalog, GET with microversion
//! headers, re-authentication once on a 401 (an expired token), and a limit on requests in flight
//! per service so fanning out over providers or projects stays polite. The token is a [`Secret`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use accelfed_net::{ClientSettings, HttpsClient, Trust};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::{RwLock, Semaphore};

use super::super::api::{CatalogService, catalog_url};
use super::super::auth::{Credentials, Method, Secret};
use super::super::error::OpenstackError;

/// A token and the catalog that came with it.
#[derive(Debug, Clone)]
struct Token {
    value: Secret,
    catalog: Vec<CatalogService>,
}

/// A session with one cloud; cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Session {
    http: HttpsClient,
    creds: Credentials,
    token: RwLock<Token>,
    /// Requests in flight, limited per service (`nova`, `placement`, ...): a slow service (Nova
    /// answering per-project calls one after another) must not hold the permits the others need.
    permits: std::sync::Mutex<HashMap<String, Arc<Semaphore>>>,
    concurrency: usize,
}

/// A transport failure with its whole chain of causes ("connection refused", "invalid peer
/// certificate: UnknownIssuer"), and whether a retry can cure it: a certificate the cloud's server
/// does not pass, or a port that does not speak TLS, never is.
fn transport(http: &HttpsClient, service: &str, url: &str, err: &reqwest::Error) -> OpenstackError {
    let message = if err.is_timeout() {
        // The one deadline of the call (`timeout`): "timed out after N s".
        http.describe(err)
    } else {
        let kind = if err.is_connect() {
            "cannot connect"
        } else {
            "request failed"
        };
        // reqwest's own text repeats the URL and stops at "error sending request"; the causes say
        // what went wrong. Never a header (the token).
        let cause = std::error::Error::source(err)
            .map(|source| format!(": {}", accelfed_net::cause::chain(source)))
            .unwrap_or_default();
        format!("{kind}{cause}")
    };
    OpenstackError::Transport {
        service: service.to_owned(),
        url: url.to_owned(),
        message,
        retry: !accelfed_net::cause::is_permanent(err),
    }
}

/// The first line of an OpenStack error body (`{"computeFault": {"message": ...}}` and friends).
fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|value| {
        value
            .as_object()?
            .values()
            .find_map(|inner| inner.get("message").or_else(|| inner.get("detail")))
            .or_else(|| value.get("errors")?.get(0)?.get("detail"))
            .and_then(|m| m.as_str().map(str::to_owned))
    });
    let text = found.unwrap_or_else(|| body.to_owned());
    text.lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(300)
        .collect()
}

impl Session {
    /// Authenticates; fails when Keystone is unreachable or refuses the credentials.
    pub async fn connect(
        creds: Credentials,
        timeout: Duration,
        concurrency: usize,
    ) -> Result<Arc<Self>, OpenstackError> {
        // `ca` of `[[openstack]]`, else `cacert` (clouds.yaml or OS_CACERT): a PEM file or an
        // IGTF folder.
        let trust = Trust::optional("CA file (ca or cacert)", creds.ca_file.as_deref())
            .map_err(OpenstackError::Credentials)?;
        let mut settings = ClientSettings::new(trust, timeout);
        settings.idle_per_host = Some(concurrency);
        let http = HttpsClient::new(&settings)
            .map_err(|err| OpenstackError::Credentials(format!("HTTP client: {err}")))?;
        let token = authenticate(&http, &creds).await?;
        Ok(Arc::new(Self {
            http,
            creds,
            token: RwLock::new(token),
            permits: std::sync::Mutex::default(),
            concurrency: concurrency.max(1),
        }))
    }

    /// The catalog URL of a service type (`compute`, `placement`, `image`, `identity`).
    pub async fn endpoint(&self, kind: &str) -> Result<String, OpenstackError> {
        let token = self.token.read().await;
        catalog_url(
            &token.catalog,
            kind,
            &self.creds.interface,
            self.creds.region.as_deref(),
        )
        .map(str::to_owned)
        .ok_or_else(|| OpenstackError::NoEndpoint {
            service: kind.to_owned(),
            interface: self.creds.interface.clone(),
            region: self.creds.region.clone(),
        })
    }

    /// The permits of `service`, made on its first request.
    fn permits_of(&self, service: &str) -> Arc<Semaphore> {
        let mut permits = self
            .permits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match permits.get(service) {
            Some(semaphore) => Arc::clone(semaphore),
            None => {
                let semaphore = Arc::new(Semaphore::new(self.concurrency));
                permits.insert(service.to_owned(), Arc::clone(&semaphore));
                semaphore
            }
        }
    }

    /// The catalog interface in use.
    pub fn interface(&self) -> &str {
        &self.creds.interface
    }

    /// GETs `url` and parses the JSON body. `microversion` is `("compute", "2.93")`. On a 401 the
    /// session re-authenticates once and repeats the request.
    pub async fn get<T: DeserializeOwned>(
        &self,
        service: &str,
        url: &str,
        microversion: Option<(&str, &str)>,
    ) -> Result<T, OpenstackError> {
        self.get_read(service, url, microversion, |body| {
            serde_json::from_slice(body)
        })
        .await
    }

    /// [`Session::get`] with the body read by `read` (e.g. a Nova page's scanner).
    pub async fn get_read<T, E: std::fmt::Display>(
        &self,
        service: &str,
        url: &str,
        microversion: Option<(&str, &str)>,
        read: impl FnOnce(&[u8]) -> Result<T, E>,
    ) -> Result<T, OpenstackError> {
        let body = self.get_bytes(service, url, microversion).await?;
        read(&body).map_err(|err| OpenstackError::Parse {
            service: service.to_owned(),
            url: url.to_owned(),
            message: err.to_string(),
        })
    }

    async fn get_bytes(
        &self,
        service: &str,
        url: &str,
        microversion: Option<(&str, &str)>,
    ) -> Result<Vec<u8>, OpenstackError> {
        let _permit = self
            .permits_of(service)
            .acquire_owned()
            .await
            .map_err(|_| OpenstackError::Transport {
                service: service.to_owned(),
                url: url.to_owned(),
                message: "session closed".to_owned(),
                retry: true,
            })?;
        for attempt in 0..2 {
            let started = Instant::now();
            let token = self.token.read().await.value.clone();
            let mut request = self
                .http
                .http()
                .get(url)
                .header("X-Auth-Token", token.expose())
                .header("Accept", "application/json");
            if let Some((kind, version)) = microversion {
                request = request.header("OpenStack-API-Version", format!("{kind} {version}"));
                if kind == "compute" {
                    request = request.header("X-OpenStack-Nova-API-Version", version);
                }
            }
            let response = request
                .send()
                .await
                .map_err(|e| transport(&self.http, service, url, &e))?;
            let status = response.status();
            if status.as_u16() == 401 && attempt == 0 {
                tracing::info!(
                    service,
                    url,
                    "token refused (expired?); re-authenticating once"
                );
                self.reauthenticate(&token).await?;
                continue;
            }
            let body = response
                .bytes()
                .await
                .map_err(|e| transport(&self.http, service, url, &e))?;
            // Where a run's time goes, call by call (`RUST_LOG=accelfed_provider=debug`).
            tracing::debug!(
                service,
                url,
                status = status.as_u16(),
                bytes = body.len(),
                ms = started.elapsed().as_secs_f64() * 1e3,
                "GET"
            );
            if status.is_success() {
                return Ok(body.to_vec());
            }
            let code = status.as_u16();
            return Err(OpenstackError::Http {
                service: service.to_owned(),
                url: url.to_owned(),
                status: code,
                message: error_message(&String::from_utf8_lossy(&body)),
                retry: code >= 500 || code == 429 || code == 408,
            });
        }
        unreachable!("the second attempt returns")
    }

    /// Replaces the token, unless another request already did since `stale` was read.
    async fn reauthenticate(&self, stale: &Secret) -> Result<(), OpenstackError> {
        let mut token = self.token.write().await;
        if token.value == *stale {
            *token = authenticate(&self.http, &self.creds).await?;
        }
        Ok(())
    }
}

/// `POST /v3/auth/tokens`.
async fn authenticate(http: &HttpsClient, creds: &Credentials) -> Result<Token, OpenstackError> {
    let url = format!("{}/auth/tokens", creds.auth_url);
    let body = match &creds.method {
        Method::Password {
            username,
            user_domain,
            password,
            project,
            project_is_id,
            project_domain,
        } => {
            let scope = if *project_is_id {
                json!({"project": {"id": project}})
            } else {
                json!({"project": {"name": project, "domain": {"name": project_domain}}})
            };
            json!({"auth": {
                "identity": {"methods": ["password"], "password": {"user": {
                    "name": username, "domain": {"name": user_domain}, "password": password.expose()}}},
                "scope": scope}})
        }
        Method::ApplicationCredential { id, secret } => json!({"auth": {"identity": {
            "methods": ["application_credential"],
            "application_credential": {"id": id, "secret": secret.expose()}}}}),
    };
    let fail = |message: String, retry: bool| OpenstackError::Auth {
        url: url.clone(),
        message,
        retry,
    };
    let started = Instant::now();
    let response = http
        .http()
        .post(&url)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|err| match transport(http, "keystone", &url, &err) {
            OpenstackError::Transport { message, retry, .. } => fail(message, retry),
            other => other,
        })?;
    let status = response.status();
    let value = response
        .headers()
        .get("X-Subject-Token")
        .and_then(|v| v.to_str().ok())
        .map(|v| Secret::new(v.to_owned()));
    let text =
        response
            .text()
            .await
            .map_err(|err| match transport(http, "keystone", &url, &err) {
                OpenstackError::Transport { message, retry, .. } => fail(message, retry),
                other => other,
            })?;
    tracing::debug!(
        url,
        status = status.as_u16(),
        ms = started.elapsed().as_secs_f64() * 1e3,
        "POST"
    );
    if !status.is_success() {
        return Err(fail(
            format!(
                "HTTP {}: {} ({})",
                status.as_u16(),
                error_message(&text),
                creds.origin
            ),
            status.is_server_error(),
        ));
    }
    #[derive(serde::Deserialize)]
    struct Body {
        token: TokenBody,
    }
    #[derive(serde::Deserialize)]
    struct TokenBody {
        #[serde(default)]
        catalog: Vec<CatalogService>,
    }
    let parsed: Body =
        serde_json::from_str(&text).map_err(|err| fail(format!("token body: {err}"), false))?;
    let value = value.ok_or_else(|| fail("no X-Subject-Token header".to_owned(), false))?;
    Ok(Token {
        value,
        catalog: parsed.token.catalog,
    })
}

#[cfg(test)]
mod tests;
