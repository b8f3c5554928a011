//! `[[slurm]]`: a Slurm cluster read through its JSON CLI output or slurmrestd, with the facts Slurm
//! does not know (what a GRES type is, which VO an account belongs to) given here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::gpu::{GpuModel, MemoryMb};
use accelfed_schemas::names::{LocalId, Text};

use super::version::DataVersion;
use crate::config::Problem;
use crate::static_site::VoConfig;

/// One Slurm cluster, published as one GLUE2 ComputingService.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmConfig {
    /// Unique among the site's services; part of every GLUE2 ID beneath it.
    pub id: Spanned<LocalId>,
    /// Human-readable name.
    pub name: Option<Text>,
    /// The cluster whose jobs are metered (sacct `--clusters`); default: slurm.conf's ClusterName.
    pub cluster: Option<Text>,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    /// How the commands are run when slurmrestd is not configured.
    #[serde(default)]
    pub cli: CliConfig,
    /// Read through slurmrestd instead of the commands.
    pub rest: Option<RestConfig>,
    /// What each GRES type is, by its Slurm name: `a100 = { model = "NVIDIA A100-SXM4-80GB",
    /// memory_mb = 81920 }`. Untyped GPUs (`gpu:4`) are looked up as `gpu`. A type missing here is
    /// published with its Slurm name as the model and a warning; an AutoDetect MIG name that names
    /// one catalogued GPU (`nvidia_h100_80gb_hbm3_1g.10gb`) under that GPU's model.
    #[serde(default)]
    pub gpu_types: BTreeMap<String, GpuTypeConfig>,
    /// How many `gres/shard`s one GPU holds (gres.conf's shard `Count` over the node's GPUs): a
    /// job's shards are metered as `shards / shards_per_gpu` physical GPUs. Required where jobs
    /// hold shards; such jobs are skipped with a warning without it.
    pub shards_per_gpu: Option<std::num::NonZeroU32>,
    /// VO of each Slurm account: `"vo.atlas" = "atlas"` or `{ vo = "atlas", fqan = "/atlas" }`.
    /// Checked first when metering a job.
    #[serde(default)]
    pub accounts: BTreeMap<String, VoConfig>,
    /// VO of each QOS, for sites that separate VOs by QOS; checked after accounts.
    #[serde(default)]
    pub qos: BTreeMap<String, VoConfig>,
    /// VO of each partition dedicated to one VO; checked last.
    #[serde(default)]
    pub partitions: BTreeMap<String, VoConfig>,
    /// VO of each Unix group named in partitions' AllowGroups (publishing only; jobs carry no group).
    #[serde(default)]
    pub groups: BTreeMap<String, VoConfig>,
}

/// Running `sinfo`, `scontrol` and `sacct`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliConfig {
    /// Folder holding the commands; default: found on `PATH`.
    pub bin_dir: Option<PathBuf>,
    /// slurm.conf to use (sets `SLURM_CONF`); default: the commands' own default.
    pub slurm_conf: Option<PathBuf>,
    /// Seconds one command may run before it is killed and the run fails.
    #[serde(default = "sixty")]
    pub timeout_s: Spanned<u64>,
}

impl Default for CliConfig {
    fn default() -> Self {
        Self {
            bin_dir: None,
            slurm_conf: None,
            timeout_s: sixty(),
        }
    }
}

/// slurmrestd with JWT authentication.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestConfig {
    /// Base URL, e.g. `http://slurm-rest.example.org:6820`.
    pub url: Spanned<Text>,
    /// Sent as `X-SLURM-USER-NAME`.
    pub user: Text,
    /// File holding the JWT (from `scontrol token`), sent as `X-SLURM-USER-TOKEN`. Read on every
    /// run, so a cron job that refreshes it needs no restart.
    pub token_file: PathBuf,
    /// The data version in the paths (`v0.0.38` for Slurm 22.05, `v0.0.40` for 23.11...). Unset
    /// (the default): the newest version both slurmrestd (its `/openapi/v3`) and accelfed know.
    #[serde(default)]
    pub api_version: Option<Spanned<Text>>,
    /// A CA to trust besides the system's roots, for an `https://` slurmrestd: a PEM file, or a
    /// folder of them such as `/etc/grid-security/certificates`.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Seconds one request may take, whole: connecting, the TLS handshake, the request and the
    /// answer (the jobs of the whole window for `meter`).
    #[serde(default = "sixty")]
    pub timeout_s: Spanned<u64>,
}

/// What a GRES type is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuTypeConfig {
    /// The model as the device names itself, e.g. `NVIDIA A100-SXM4-80GB`.
    pub model: GpuModel,
    /// Device memory (of a MIG slice: the slice's), MB or a string with unit (`"80 GB"`).
    pub memory_mb: Option<MemoryMb>,
    /// `NVIDIA` (default), `AMD`, `Intel`.
    #[serde(default = "nvidia")]
    pub vendor: Text,
    /// CUDA compute capability or the vendor's equivalent.
    pub compute_capability: Option<Text>,
}

impl GpuTypeConfig {
    /// The configured model in the one vocabulary ([`GpuModel::canonical`]), so a Slurm type maps
    /// to the name every other source of the same GPU gives.
    pub fn canonical_model(&self) -> GpuModel {
        GpuModel::canonical(self.model.as_str()).unwrap_or_else(|_| self.model.clone())
    }
}

fn production() -> Text {
    Text::literal("production")
}
fn nvidia() -> Text {
    Text::literal("NVIDIA")
}
fn sixty() -> Spanned<u64> {
    Spanned::new(0..0, 60)
}

impl SlurmConfig {
    /// Checks what serde cannot: URL scheme, API version, timeouts.
    pub fn validate(&self) -> Result<(), Problem> {
        at_least_one_second(&self.cli.timeout_s, "cli.timeout_s")?;
        if let Some(rest) = &self.rest {
            let url = rest.url.get_ref().as_str();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Problem::new(
                    &rest.url,
                    "rest.url",
                    format!("{url:?} is not an http:// or https:// URL"),
                ));
            }
            if let Some(version) = &rest.api_version {
                DataVersion::parse(version.get_ref().as_str())
                    .map_err(|message| Problem::new(version, "rest.api_version", message))?;
            }
            at_least_one_second(&rest.timeout_s, "rest.timeout_s")?;
        }
        Ok(())
    }

    /// The VO a job belongs to: by account, then QOS, then partition.
    pub fn vo_of(&self, account: &str, qos: &str, partition: &str) -> Option<&VoConfig> {
        self.accounts
            .get(account)
            .or_else(|| self.qos.get(qos))
            .or_else(|| self.partitions.get(partition))
    }
}

/// A timeout of 0 would kill every command at once.
fn at_least_one_second(seconds: &Spanned<u64>, field: &str) -> Result<(), Problem> {
    if *seconds.get_ref() == 0 {
        return Err(Problem::new(seconds, field, "must be at least 1 second"));
    }
    Ok(())
}
