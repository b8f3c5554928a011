//! The only folder that does IO: runs `sinfo`, `scontrol` and `sacct` (each with a timeout, killed when
//! it passes), or asks slurmrestd with a JWT. Everything it reads goes to the pure parsers.

use std::time::Duration;

use accelfed_net::{ClientSettings, HttpsClient, Trust};
use chrono::{DateTime, Utc};

use super::config::{CliConfig, RestConfig, SlurmConfig};
use super::documents::{is_sinfo_list, parse_nodes, parse_partitions};
use super::error::SlurmError;
use super::inventory::Inventory;
use super::jobs::{JobProblem, JobsSummary, SlurmJob};
use super::negotiate::{self, Api};
use super::partitions::parse_scontrol_text;
use super::version::{DataVersion, KNOWN_MINORS};

mod command;
mod jobs_stream;
mod rest;
#[cfg(test)]
mod tests;

/// Reads one configured cluster.
#[derive(Debug, Clone)]
pub struct SlurmClient {
    cli: CliConfig,
    rest: Option<RestConfig>,
    cluster: Option<String>,
    /// slurmrestd's HTTPS client, one per run (a handle to one connection pool), or why it could
    /// not be built (`rest.ca` unreadable), reported by the first request.
    http: Option<Result<HttpsClient, String>>,
}

impl SlurmClient {
    pub fn new(config: &SlurmConfig) -> Self {
        let http = config.rest.as_ref().map(|rest| {
            let trust = Trust::optional("rest.ca", rest.ca.as_deref())?;
            let deadline = Duration::from_secs(*rest.timeout_s.get_ref());
            HttpsClient::new(&ClientSettings::new(trust, deadline)).map_err(|err| err.to_string())
        });
        Self {
            cli: config.cli.clone(),
            rest: config.rest.clone(),
            cluster: config.cluster.as_ref().map(|c| c.as_str().to_owned()),
            http,
        }
    }

    /// Nodes and partitions, now.
    pub async fn inventory(&self) -> Result<Inventory, SlurmError> {
        match &self.rest {
            Some(rest) => self.inventory_rest(rest).await,
            None => self.inventory_cli().await,
        }
    }

    async fn inventory_cli(&self) -> Result<Inventory, SlurmError> {
        let sinfo = self.run("sinfo", &["--json"]).await?;
        let (nodes_source, nodes_bytes) = if is_sinfo_list(&sinfo.1) {
            // 23.02+: `sinfo --json` groups nodes; `scontrol show nodes --json` lists them.
            self.run("scontrol", &["show", "nodes", "--json"]).await?
        } else {
            sinfo
        };
        let nodes = parse_nodes(&nodes_bytes).map_err(|error| SlurmError::Document {
            source_name: nodes_source.clone(),
            error,
        })?;
        let partitions = if nodes.version == DataVersion::V0038 {
            let (_, text) = self
                .run("scontrol", &["-a", "-o", "show", "partition"])
                .await?;
            parse_scontrol_text(&String::from_utf8_lossy(&text))
        } else {
            let (source_name, bytes) = self
                .run("scontrol", &["-a", "show", "partitions", "--json"])
                .await?;
            parse_partitions(&bytes).map_err(|error| SlurmError::Document { source_name, error })?
        };
        Ok(Inventory::new(nodes, partitions))
    }

    /// The data version to ask for: the configured one, else the newest one both slurmrestd's
    /// OpenAPI document and accelfed know for `api`.
    async fn rest_version(&self, rest: &RestConfig, api: Api) -> Result<String, SlurmError> {
        if let Some(version) = &rest.api_version {
            return Ok(version.get_ref().as_str().to_owned());
        }
        let (source, bytes) = self.get(rest, "openapi/v3").await.map_err(|err| match err {
            SlurmError::Http {
                endpoint,
                message,
                retryable,
            } => SlurmError::Http {
                endpoint,
                message: format!(
                    "{message}; the data versions slurmrestd serves could not be read (accelfed reads v0.0.{} to v0.0.{}: set rest.api_version to one the server serves)",
                    KNOWN_MINORS.start(),
                    KNOWN_MINORS.end()
                ),
                retryable,
            },
            other => other,
        })?;
        negotiate::offered(&bytes)
            .and_then(|offered| negotiate::pick(&offered, api))
            .map(DataVersion::name)
            .map_err(|message| SlurmError::Http {
                endpoint: source,
                message,
                retryable: false,
            })
    }

    async fn inventory_rest(&self, rest: &RestConfig) -> Result<Inventory, SlurmError> {
        let version = self.rest_version(rest, Api::Slurm).await?;
        let version = version.as_str();
        let (nodes_source, nodes_bytes) = self.get(rest, &format!("slurm/{version}/nodes")).await?;
        let nodes = parse_nodes(&nodes_bytes).map_err(|error| SlurmError::Document {
            source_name: nodes_source,
            error,
        })?;
        let (source_name, bytes) = self
            .get(rest, &format!("slurm/{version}/partitions"))
            .await?;
        let partitions = parse_partitions(&bytes)
            .map_err(|error| SlurmError::Document { source_name, error })?;
        Ok(Inventory::new(nodes, partitions))
    }

    /// Reads the jobs that ran in `[start, end)`, passing each to `on_job` as it is read, so memory
    /// does not grow with the number of jobs. Blocking: call it from a thread that may block (the
    /// REST path runs its own small runtime for the download). The jobs are provisional until this
    /// returns `Ok` (see [`read_jobs`]); on an error, write nothing from this run.
    pub fn jobs_blocking(
        &self,
        start: DateTime<Utc>,
        end: DateTime<Utc>,
        on_job: &mut dyn FnMut(Result<SlurmJob, JobProblem>),
    ) -> Result<JobsSummary, SlurmError> {
        match &self.rest {
            Some(rest) => self.jobs_rest(rest, start, end, on_job),
            None => self.jobs_cli(start, end, on_job),
        }
    }
}
