//! The federation registry over HTTPS: `accelfed provide --publish registry` pushes the site's
//! GLUE 2.1 JSON with the site's bearer token (`PUT <url>/registry/v1/document`), and
//! `accelfed query` reads offers back (`GET <url>/registry/v1/offers`). Both use the one HTTPS
//! client (`accelfed-net`): the system's roots plus, where given, a CA file or folder (federations
//! often run their own CA), and one deadline per call.
//!
//! A site may list several instances of the central service: a push goes to the first, and to the
//! next when one is unreachable or answers a server error, never after a refusal of the token or
//! the document (every instance refuses those alike). Instances share one database, so a
//! document stored by any of them is the federation's.

use std::time::Duration;

use accelfed_net::{ClientSettings, HttpsClient, HttpsUrl, HttpsUrls, TimedOut, Trust};

/// How long one call may take when the configuration does not say (`timeout_s`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Why talking to the registry failed, and whether trying again can help.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("CA file: {0}")]
    Ca(String),
    #[error(
        "registry {url}: {} ({})",
        accelfed_net::cause::chain(source),
        transport_advice(source)
    )]
    Transport {
        url: String,
        #[source]
        source: reqwest::Error,
    },
    #[error("registry {0} (a retry may help)")]
    TimedOut(TimedOut),
    #[error("registry {url}: the answer is larger than {limit} bytes; not read further")]
    TooLarge { url: String, limit: usize },
    #[error("registry {url}: {problem}")]
    BadUrl { url: String, problem: String },
    #[error("registry {url} refused the request ({status}): {reason}")]
    Refused {
        url: String,
        status: u16,
        reason: String,
    },
}

/// Whether a retry can help, and what to do instead when it cannot.
fn transport_advice(source: &reqwest::Error) -> String {
    use accelfed_net::cause;
    if !cause::is_permanent(source) {
        return "a retry may help".to_owned();
    }
    if cause::names_certificate_dates(&cause::chain(source)) {
        format!("retry will not help: {}", cause::CERTIFICATE_DATES)
    } else {
        "retry will not help: check the certificate, the CA file and https://".to_owned()
    }
}

impl RegistryError {
    /// Whether sending again later can help (the network or the registry's database), as opposed to
    /// a document or token the registry will refuse again.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport { source, .. } => !accelfed_net::cause::is_permanent(source),
            Self::TimedOut(_) => true,
            Self::Refused { status, .. } => *status >= 500,
            Self::Ca(_) | Self::TooLarge { .. } | Self::BadUrl { .. } => false,
        }
    }
}

/// Where a push goes, with the site's token and CA already read (the binary settles them from
/// flags and `[publish.registry]`).
#[derive(Clone, PartialEq, Eq)]
pub struct RegistryTarget {
    /// The registry's base URL, `https://host[:port][/path]`; several instances of it, tried in
    /// order.
    pub urls: HttpsUrls,
    pub token: String,
    /// The system's roots plus the configured CA, if any.
    pub trust: Trust,
    /// One call, whole (`publish.registry.timeout_s`).
    pub timeout: Duration,
}

/// Never prints the token: a target may end up in a debug log.
impl std::fmt::Debug for RegistryTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegistryTarget")
            .field("urls", &self.urls)
            .field("token", &"<redacted>")
            .field("trust", &self.trust)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// [`crate::publish`]'s registry destination: a client for `target`'s trust, then [`push`] to
/// each URL in turn until one takes the document or refuses it. Returns the answer and the URL
/// that took the document.
pub(crate) async fn publish(
    target: &RegistryTarget,
    document: &[u8],
) -> Result<(String, HttpsUrl), RegistryError> {
    let client = client_with(&ClientSettings::new(target.trust.clone(), target.timeout))?;
    let (last, before) =
        target
            .urls
            .as_slice()
            .split_last()
            .ok_or_else(|| RegistryError::BadUrl {
                url: String::new(),
                problem: "no registry URL".to_owned(),
            })?;
    for (at, url) in before.iter().enumerate() {
        match push(&client, url.as_str(), &target.token, document.to_vec()).await {
            Ok(answer) => return Ok((answer, url.clone())),
            Err(error) if error.is_transient() => {
                let next = target.urls.as_slice().get(at + 1).unwrap_or(last);
                tracing::warn!(%next, "{error}; pushing to the next registry URL");
            }
            Err(error) => return Err(error),
        }
    }
    let answer = push(&client, last.as_str(), &target.token, document.to_vec()).await?;
    Ok((answer, last.clone()))
}

/// A client that trusts the system roots and `ca_pem`'s certificates, with the default deadline.
pub fn client(ca_pem: Option<&[u8]>) -> Result<HttpsClient, RegistryError> {
    let trust = ca_pem.map_or_else(Trust::system, |pem| Trust::from_pem(pem.to_vec()));
    client_with(&ClientSettings::new(trust, DEFAULT_TIMEOUT))
}

/// A client for `settings` (the one HTTPS client builder).
pub fn client_with(settings: &ClientSettings) -> Result<HttpsClient, RegistryError> {
    HttpsClient::new(settings).map_err(|error| RegistryError::Ca(error.to_string()))
}

/// Pushes `document` for the site `token` belongs to. Returns the registry's answer (JSON).
pub async fn push(
    client: &HttpsClient,
    base_url: &str,
    token: &str,
    document: Vec<u8>,
) -> Result<String, RegistryError> {
    let url = format!("{}/registry/v1/document", base_url.trim_end_matches('/'));
    let request = client
        .http()
        .put(&url)
        .bearer_auth(token.trim())
        .header("content-type", "application/json")
        .body(document);
    exchange(client, url, request).await
}

/// `GET <base_url><path>?<query>`; the body on success.
pub async fn get(
    client: &HttpsClient,
    base_url: &str,
    path: &str,
    query: &[(&str, String)],
) -> Result<String, RegistryError> {
    let url = format!("{}{path}", base_url.trim_end_matches('/'));
    let request = client.http().get(&url).query(query);
    exchange(client, url, request).await
}

/// One page of a paged list: `GET url` (a whole URL, query included); the body on success and
/// the next page's URL when the answer's `Link` header names one (`rel="next"`, RFC 8288),
/// resolved against `url`. A next page on another scheme, host or port is refused: the list's
/// pages come from the registry that was asked.
pub async fn get_page(
    client: &HttpsClient,
    url: &str,
) -> Result<(String, Option<String>), RegistryError> {
    let request = client.http().get(url);
    let (body, link) = exchange_with_link(client, url.to_owned(), request).await?;
    let Some(link) = link else {
        return Ok((body, None));
    };
    let next = next_link(url, &link).ok_or_else(|| RegistryError::BadUrl {
        url: url.to_owned(),
        problem: format!(
            "the answer's Link header names a next page that is not on this registry: {:?}",
            accelfed_schemas::excerpt::excerpt(&link)
        ),
    })?;
    Ok((body, next))
}

/// `<base_url><path>?<query>` as one URL, for [`get_page`].
pub fn page_url(
    base_url: &str,
    path: &str,
    query: &[(&str, String)],
) -> Result<String, RegistryError> {
    let url = format!("{}{path}", base_url.trim_end_matches('/'));
    let parsed = if query.is_empty() {
        reqwest::Url::parse(&url)
    } else {
        reqwest::Url::parse_with_params(&url, query)
    };
    parsed
        .map(|parsed| parsed.to_string())
        .map_err(|error| RegistryError::BadUrl {
            url,
            problem: format!("not a URL: {error}"),
        })
}

/// The `rel="next"` target of a `Link` header, resolved against `base`: `Some(None)` when the
/// header names no next page, `None` when the next page is elsewhere or not a URL.
fn next_link(base: &str, link: &str) -> Option<Option<String>> {
    let base = reqwest::Url::parse(base).ok()?;
    for value in link.split(',') {
        let mut parts = value.split(';');
        let target = parts.next()?.trim();
        let is_next = parts.any(|param| {
            let param = param.trim().to_ascii_lowercase();
            param == "rel=\"next\"" || param == "rel=next"
        });
        if !is_next {
            continue;
        }
        let target = target.strip_prefix('<')?.strip_suffix('>')?;
        let next = base.join(target).ok()?;
        if next.origin() != base.origin() {
            return None;
        }
        return Some(Some(next.to_string()));
    }
    Some(None)
}

/// The most an answer of the registry may hold: a federation's whole offer list is a few MB.
const MAX_ANSWER_BYTES: usize = 64 << 20;
/// The most of a refusal's reason shown: the registry's reasons are a sentence or two.
const MAX_REASON_CHARS: usize = 1000;

/// Sends `request` (to `url`) and reads the answer: the body on success, else why the registry
/// refused. A failure to send or to read the body is a transport error either way; the whole
/// exchange ends at the client's deadline.
async fn exchange(
    client: &HttpsClient,
    url: String,
    request: reqwest::RequestBuilder,
) -> Result<String, RegistryError> {
    exchange_with_link(client, url, request)
        .await
        .map(|(body, _)| body)
}

/// [`exchange`], with the answer's `Link` header when it has one.
async fn exchange_with_link(
    client: &HttpsClient,
    url: String,
    request: reqwest::RequestBuilder,
) -> Result<(String, Option<String>), RegistryError> {
    let timed_out = || {
        RegistryError::TimedOut(TimedOut {
            endpoint: url.clone(),
            after: client.deadline(),
        })
    };
    client
        .within(&url, read_answer(&url, request))
        .await
        .map_err(|_| timed_out())?
        .map_err(|error| match error {
            RegistryError::Transport { source, .. } if source.is_timeout() => timed_out(),
            other => other,
        })
}

async fn read_answer(
    url: &str,
    request: reqwest::RequestBuilder,
) -> Result<(String, Option<String>), RegistryError> {
    let url = url.to_owned();
    let transport = |source| RegistryError::Transport {
        url: url.clone(),
        source,
    };
    let mut response = request.send().await.map_err(transport)?;
    let status = response.status();
    let link = response
        .headers()
        .get(reqwest::header::LINK)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(RegistryError::TooLarge {
                url,
                limit: MAX_ANSWER_BYTES,
            });
        }
        body.extend_from_slice(&chunk);
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    if status.is_success() {
        return Ok((body, link));
    }
    // The registry answers `{"error": "<reason>"}`; anything else is passed on as it came, cut to
    // a few lines (a proxy's error page must not fill the log).
    let reason = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|json| {
            json.get("error")
                .and_then(|e| e.as_str())
                .map(str::to_owned)
        })
        .unwrap_or(body);
    let reason = match reason.char_indices().nth(MAX_REASON_CHARS) {
        Some((cut, _)) => format!("{}... ({} bytes)", &reason[..cut], reason.len()),
        None => reason,
    };
    Err(RegistryError::Refused {
        url,
        status: status.as_u16(),
        reason,
    })
}

#[cfg(test)]
mod tests;
