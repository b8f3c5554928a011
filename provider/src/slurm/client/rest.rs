//! Asking slurmrestd: one HTTPS client per run, a JWT per request, transport failures named with
//! their causes and whether a retry helps.

use accelfed_net::HttpsClient;

use crate::slurm::config::RestConfig;
use crate::slurm::error::SlurmError;

use super::SlurmClient;

impl SlurmClient {
    pub(super) async fn get(
        &self,
        rest: &RestConfig,
        path: &str,
    ) -> Result<(String, Vec<u8>), SlurmError> {
        let response = self.request(rest, path, &[]).await?;
        let client = self.https()?;
        let endpoint = response.url().to_string();
        let bytes = response
            .bytes()
            .await
            .map_err(|err| http_error(&endpoint, &err, client))?;
        Ok((format!("GET {endpoint}"), bytes.to_vec()))
    }

    pub(super) async fn request(
        &self,
        rest: &RestConfig,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<reqwest::Response, SlurmError> {
        let endpoint = format!(
            "{}/{path}",
            rest.url.get_ref().as_str().trim_end_matches('/')
        );
        let client = self.https()?;
        // Read on every request: a site may renew the token between them.
        let token = std::fs::read_to_string(&rest.token_file).map_err(|err| SlurmError::Token {
            path: rest.token_file.display().to_string(),
            message: err.to_string(),
        })?;
        accelfed_net::secret::warn_if_exposed("slurmrestd token_file", &rest.token_file);
        let response = client
            .http()
            .get(&endpoint)
            .query(query)
            .header("X-SLURM-USER-NAME", rest.user.as_str())
            .header("X-SLURM-USER-TOKEN", token.trim())
            .send()
            .await
            .map_err(|err| http_error(&endpoint, &err, client))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            // A 404 on a versioned path is nearly always a data version this slurmrestd does not
            // serve (current releases dropped v0.0.38): say so rather than a bare 404.
            let hint = match (status.as_u16(), &rest.api_version) {
                (404, Some(version)) if path.contains("/v0.0.") => format!(
                    " (slurmrestd may not serve data version {}, set in rest.api_version: its /openapi/v3 lists what it serves; leave rest.api_version unset to pick the newest both sides know)",
                    version.get_ref()
                ),
                _ => String::new(),
            };
            return Err(SlurmError::Http {
                endpoint: format!("GET {endpoint}"),
                message: format!(
                    "HTTP {status}: {}{hint}",
                    body.chars().take(500).collect::<String>()
                ),
                retryable: status.is_server_error() || status.as_u16() == 429,
            });
        }
        Ok(response)
    }

    /// The HTTPS client built for this run.
    pub(super) fn https(&self) -> Result<&HttpsClient, SlurmError> {
        match &self.http {
            Some(Ok(client)) => Ok(client),
            Some(Err(message)) => Err(SlurmError::Http {
                endpoint: self
                    .rest
                    .as_ref()
                    .map_or_else(String::new, |rest| rest.url.get_ref().as_str().to_owned()),
                message: message.clone(),
                retryable: false,
            }),
            None => Err(SlurmError::Worker(
                "slurmrestd asked without a [slurm.rest] table".to_owned(),
            )),
        }
    }
}

/// A transport failure with its chain of causes ("connection refused", "invalid peer certificate:
/// UnknownIssuer"; reqwest's own text repeats the URL and stops at "error sending request"), or
/// `timed out after N s` (the one deadline, `rest.timeout_s`). A certificate slurmrestd's server
/// does not pass, or a port that does not speak TLS, is never cured by running again.
pub(super) fn http_error(endpoint: &str, err: &reqwest::Error, client: &HttpsClient) -> SlurmError {
    let kind = if err.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let mut message = if err.is_timeout() {
        client.describe(err)
    } else if std::error::Error::source(err).is_some() {
        format!("{kind}: {}", client.describe(err))
    } else {
        err.to_string()
    };
    let permanent = accelfed_net::cause::is_permanent(err);
    if permanent {
        message.push_str(" (retry will not help: check rest.url, and that the system's CAs or rest.ca trust the server's certificate)");
    }
    SlurmError::Http {
        endpoint: format!("GET {endpoint}"),
        message,
        retryable: !permanent && (err.is_timeout() || err.is_connect() || err.is_request()),
    }
}
