//! Prometheus instant queries for DCGM utilisation and energy (IO only; [`crate::kubernetes::dcgm`]
//! reads the answers).

use std::time::Duration;

use accelfed_net::{ClientSettings, HttpsClient, Trust};
use chrono::{DateTime, Utc};

use super::super::config::PrometheusConfig;
use super::super::dcgm::{self, Metric, Series};
use super::super::error::KubernetesError;

/// What DCGM's series said, per metric, both naming schemes' series together.
#[derive(Debug, Default)]
pub struct Answers {
    /// Mean utilisation over `[since, now)`.
    pub gpu_util: Vec<Series>,
    pub gr_engine: Vec<Series>,
    /// The energy counter's increase over `[energy_since, now)`, per series.
    pub energy: Vec<Series>,
}

/// DCGM's series per pod and device (the queries are evaluated at `now`): mean utilisation over
/// `[since, now)` and the energy counter's increase over `[energy_since, now)`, each metric under
/// both of the exporter's naming schemes. Warnings name the pod and device.
pub async fn answers(
    config: &PrometheusConfig,
    since: DateTime<Utc>,
    energy_since: DateTime<Utc>,
    now: DateTime<Utc>,
    warnings: &mut Vec<String>,
) -> Result<Answers, KubernetesError> {
    let window_s = (now - since).num_seconds().max(1);
    let energy_window_s = (now - energy_since).num_seconds().max(window_s);
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
    let mut answers = Answers::default();
    for (metric, scheme) in Metric::ALL {
        let name = metric.name(scheme);
        // A counter's increase (resets handled by Prometheus), a gauge's mean.
        let query = match metric {
            Metric::Energy => format!("increase({name}{{pod!=\"\"}}[{energy_window_s}s])"),
            Metric::GpuUtil | Metric::GrEngineActive => {
                format!("avg_over_time({name}{{pod!=\"\"}}[{window_s}s])")
            }
        };
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
        let read = dcgm::read(&body, metric, scheme, warnings)
            .map_err(|message| failed(format!("{query}: HTTP {status}: {message}"), false))?;
        match metric {
            Metric::GpuUtil => answers.gpu_util.extend(read),
            Metric::GrEngineActive => answers.gr_engine.extend(read),
            Metric::Energy => answers.energy.extend(read),
        }
    }
    Ok(answers)
}
