//! Prometheus instant queries for DCGM utilisation (IO only; [`crate::kubernetes::dcgm`] reads the
//! answers).

use std::time::Duration;

use accelfed_net::{ClientSettings, HttpsClient, Trust};
use chrono::{DateTime, Utc};

use super::super::config::PrometheusConfig;
use super::super::dcgm::{self, Metric, Utilisation};
use super::super::error::KubernetesError;

/// Mean utilisation per pod over `[since, now)` (the query is evaluated at `now`), from both DCGM
/// metrics (the MIG one fills in pods the whole-GPU one lacks). Warnings name the pod and device.
pub async fn utilisation(
    config: &PrometheusConfig,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    warnings: &mut Vec<String>,
) -> Result<Utilisation, KubernetesError> {
    let window_s = (now - since).num_seconds().max(1);
    let at = now.timestamp().to_string();
    let url = config
        .url
        .get_ref()
        .as_str()
        .trim_end_matches('/')
        .to_owned();
    let failed = |message: String, retryable: bool| KubernetesError::Prometheus {
        url: url.clone(),
        message,
        retryable,
    };
    let trust = Trust::optional("ca_file", config.ca_file.as_deref())
        .map_err(|message| failed(message, false))?;
    let deadline = Duration::from_secs(*config.timeout_s.get_ref());
    let client = HttpsClient::new(&ClientSettings::new(trust, deadline))
        .map_err(|err| failed(err.to_string(), false))?;
    let token = match &config.token_file {
        Some(path) => Some(
            accelfed_net::secret::read_token("token_file", path)
                .map_err(|message| failed(message, false))?,
        ),
        None => None,
    };
    let mut merged = Utilisation::new();
    for metric in [Metric::GpuUtil, Metric::GrEngineActive] {
        let query = format!("avg_over_time({}{{pod!=\"\"}}[{window_s}s])", metric.name());
        let mut request = client
            .http()
            .get(format!("{url}/api/v1/query"))
            .query(&[("query", query.as_str()), ("time", at.as_str())]);
        if let Some(token) = &token {
            request = request.bearer_auth(token);
        }
        let call = async {
            let response = request.send().await?;
            let status = response.status();
            response.text().await.map(|body| (status, body))
        };
        let (status, body) = client
            .within(&url, call)
            .await
            .map_err(|late| {
                let words = accelfed_net::deadline::timed_out(late.after);
                failed(format!("{query}: {words}"), true)
            })?
            .map_err(|err| failed(format!("{query}: {}", client.describe(&err)), true))?;
        if status.is_server_error() {
            return Err(failed(format!("{query}: HTTP {status}"), true));
        }
        let read = dcgm::read(&body, metric, warnings)
            .map_err(|message| failed(format!("{query}: HTTP {status}: {message}"), false))?;
        for (key, value) in read {
            merged.entry(key).or_insert(value);
        }
    }
    Ok(merged)
}
