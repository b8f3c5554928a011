//! `[[kubernetes]]`: one Kubernetes cluster, read through its API with a kubeconfig or, when accelfed
//! runs in a pod, the service account's token.
//!
//! Credentials never live in this file: it names a kubeconfig (and a context in it) or says
//! `in_cluster = true`. What the API cannot tell (which VO a namespace serves when the namespace
//! carries no label) is said here.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::names::{LocalId, Text};

use crate::config::Problem;
use crate::static_site::VoConfig;

/// One Kubernetes cluster, published as one GLUE2 service.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubernetesConfig {
    /// Unique among the site's services; part of every GLUE2 ID beneath it.
    pub id: Spanned<LocalId>,
    /// Human-readable name of the service.
    pub name: Option<Text>,
    /// The cluster's name in usage records (`<cluster>/<namespace>/<pod uid>`); default: `id`.
    /// Keep it stable: it is part of every record id.
    pub cluster: Option<Text>,
    /// `production`, `pre-production`, `testing` or `development`.
    #[serde(default = "production")]
    pub quality_level: Text,
    /// Publish a GLUE2 `computing` service (batch-like, the default) or a `cloud` computing
    /// service (for clusters offered as a container cloud).
    #[serde(default)]
    pub service: ServiceKind,
    /// The kubeconfig to read; default: `KUBECONFIG`, else `~/.kube/config`. Ignored with
    /// `in_cluster`.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use; default: the file's `current-context`.
    pub context: Option<String>,
    /// Use the pod's service account (its `token` and `ca.crt` in `service_account_dir`) and the
    /// API server named by `KUBERNETES_SERVICE_HOST`/`_PORT`, as when accelfed runs inside the
    /// cluster.
    #[serde(default = "outside_the_cluster")]
    pub in_cluster: Spanned<bool>,
    /// Where the service account's `token` and `ca.crt` are, with `in_cluster`; default
    /// `/var/run/secrets/kubernetes.io/serviceaccount`, where Kubernetes mounts them.
    pub service_account_dir: Option<Spanned<PathBuf>>,
    /// A PEM file of CA certificates to trust instead of the kubeconfig's, for API servers behind
    /// a private CA.
    pub ca_file: Option<PathBuf>,
    /// A file holding a bearer token to send instead of the kubeconfig's credentials. Read on every
    /// run, so a rotated token needs no restart.
    pub token_file: Option<PathBuf>,
    /// Objects per list request (`limit`); large clusters are read in pages of this size so
    /// memory stays bounded.
    #[serde(default = "page_size")]
    pub page_size: Spanned<u32>,
    /// Seconds one API request may take before the run fails (a retry on the next run can help).
    #[serde(default = "thirty")]
    pub timeout_s: Spanned<u64>,
    /// Taint keys that do not make a node unavailable: GPU nodes are commonly tainted
    /// `nvidia.com/gpu:NoSchedule` to keep other pods off, and GPU pods tolerate that.
    #[serde(default = "gpu_taints")]
    pub tolerated_taints: Vec<String>,
    /// Namespace label whose value names the namespace's VO, e.g. `accelfed.io/vo`.
    pub vo_label: Option<Spanned<String>>,
    /// Namespace annotation whose value names the VO; checked after `vo_label`.
    pub vo_annotation: Option<Spanned<String>>,
    /// Namespace -> VO (`"atlas-prod" = "atlas"` or `{ vo = "atlas", fqan = "/atlas" }`); wins
    /// over labels and annotations.
    #[serde(default)]
    pub namespaces: BTreeMap<String, VoConfig>,
    /// GPU utilisation from a Prometheus server that scrapes NVIDIA's DCGM exporter (meter only).
    pub prometheus: Option<PrometheusConfig>,
}

/// Which GLUE2 service class a cluster is published as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServiceKind {
    /// GLUE2 ComputingService with ComputingShares.
    #[default]
    Computing,
    /// GLUE 2.1 CloudComputingService with shares per VO.
    Cloud,
}

/// A Prometheus server with DCGM exporter metrics.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrometheusConfig {
    /// Base URL, e.g. `https://prometheus.example.org:9090`.
    pub url: Spanned<Text>,
    /// Seconds one query may take, whole: connecting, the TLS handshake, the query and the answer.
    #[serde(default = "thirty")]
    pub timeout_s: Spanned<u64>,
    /// A CA to trust besides the system's roots, for an `https://` URL behind a private CA: a PEM
    /// file, or a folder of them such as `/etc/grid-security/certificates` (also spelled `ca`,
    /// as every other client's).
    #[serde(alias = "ca")]
    pub ca_file: Option<PathBuf>,
    /// A file holding a bearer token for the server.
    pub token_file: Option<PathBuf>,
}

fn production() -> Text {
    Text::literal("production")
}
fn page_size() -> Spanned<u32> {
    Spanned::new(0..0, 500)
}
fn gpu_taints() -> Vec<String> {
    vec!["nvidia.com/gpu".to_owned(), "amd.com/gpu".to_owned()]
}
fn outside_the_cluster() -> Spanned<bool> {
    Spanned::new(0..0, false)
}
fn thirty() -> Spanned<u64> {
    Spanned::new(0..0, 30)
}

impl KubernetesConfig {
    /// The cluster name used in usage records.
    pub fn cluster_name(&self) -> &str {
        self.cluster
            .as_ref()
            .map_or_else(|| self.id.get_ref().as_str(), Text::as_str)
    }

    /// Checks what serde cannot: one way to authenticate, page size, timeouts, URL scheme.
    pub fn validate(&self) -> Result<(), Problem> {
        if *self.in_cluster.get_ref() && (self.kubeconfig.is_some() || self.context.is_some()) {
            return Err(Problem::new(
                &self.in_cluster,
                "in_cluster",
                "in_cluster = true cannot be combined with kubeconfig or context",
            ));
        }
        if let Some(dir) = self
            .service_account_dir
            .as_ref()
            .filter(|_| !*self.in_cluster.get_ref())
        {
            return Err(Problem::new(
                dir,
                "service_account_dir",
                "only read with in_cluster = true",
            ));
        }
        let page = *self.page_size.get_ref();
        if !(1..=10_000).contains(&page) {
            return Err(Problem::new(
                &self.page_size,
                "page_size",
                format!("{page} is not between 1 and 10000"),
            ));
        }
        at_least_one_second(&self.timeout_s, "timeout_s")?;
        for (field, key) in [
            ("vo_label", &self.vo_label),
            ("vo_annotation", &self.vo_annotation),
        ] {
            if let Some(key) = key.as_ref().filter(|key| key.get_ref().is_empty()) {
                return Err(Problem::new(key, field, "must not be empty"));
            }
        }
        if let Some(prometheus) = &self.prometheus {
            let url = prometheus.url.get_ref().as_str();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Problem::new(
                    &prometheus.url,
                    "prometheus.url",
                    format!("{url:?} is not an http:// or https:// URL"),
                ));
            }
            at_least_one_second(&prometheus.timeout_s, "prometheus.timeout_s")?;
        }
        Ok(())
    }
}

/// A timeout of 0 would fail every request at once.
fn at_least_one_second(seconds: &Spanned<u64>, field: &str) -> Result<(), Problem> {
    if *seconds.get_ref() == 0 {
        return Err(Problem::new(seconds, field, "must be at least 1 second"));
    }
    Ok(())
}
