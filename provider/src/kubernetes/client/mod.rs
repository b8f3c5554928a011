//! The only IO of the Kubernetes backend: the API server through `kube`'s client (kubeconfig or
//! in-cluster service account, TLS with the configured CA, bearer tokens), and Prometheus
//! ([`prometheus`]).
//!
//! Lists are read in pages (`limit`, `continue`) so a cluster of any size costs one page of text
//! at a time plus the compact per-object results. A `410 Gone` means the continue token expired
//! (the API server compacted past it): the list is read again from the start, at most
//! [`MAX_RESTARTS`] times. Each request has its own timeout.

mod in_cluster;
pub mod prometheus;

use std::time::Duration;

use kube::api::ListParams;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::api::{Namespace, Node, ResourceQuota};
use super::config::KubernetesConfig;
use super::cpu::PodsRead;
use super::error::KubernetesError;
use super::inventory::Inventory;
use super::nodes::read_node;
use super::page::read_page;

/// How often one list may be restarted after its continue token expired.
pub const MAX_RESTARTS: u32 = 3;

/// A connection to one cluster's API server.
#[derive(Clone)]
pub struct KubeClient {
    client: kube::Client,
    cluster: String,
    page_size: u32,
    timeout: Duration,
    tolerated_taints: Vec<String>,
}

impl std::fmt::Debug for KubeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeClient")
            .field("cluster", &self.cluster)
            .field("page_size", &self.page_size)
            .finish_non_exhaustive()
    }
}

impl KubeClient {
    /// Builds the client from the kubeconfig (or the service account), with the overrides of the
    /// configuration. Reads local files only; the first request is the first network IO.
    pub async fn new(config: &KubernetesConfig) -> Result<Self, KubernetesError> {
        Self::with_environment(config, &|name| std::env::var(name).ok()).await
    }

    /// [`KubeClient::new`] with the process environment given as a lookup: in-cluster auth reads
    /// `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT` through it.
    pub async fn with_environment(
        config: &KubernetesConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, KubernetesError> {
        let cluster = config.cluster_name().to_owned();
        let setup = |message: String| KubernetesError::Setup {
            cluster: cluster.clone(),
            message,
        };
        let mut kube_config = if *config.in_cluster.get_ref() {
            let service_account_dir = config
                .service_account_dir
                .as_ref()
                .map(|dir| dir.get_ref().as_path());
            in_cluster::config(service_account_dir, env)
                .map_err(|err| setup(format!("in-cluster: {err}")))?
        } else {
            let kubeconfig = match &config.kubeconfig {
                Some(path) => Kubeconfig::read_from(path)
                    .map_err(|err| setup(format!("kubeconfig {}: {err}", path.display())))?,
                None => Kubeconfig::read().map_err(|err| setup(format!("kubeconfig: {err}")))?,
            };
            let options = KubeConfigOptions {
                context: config.context.clone(),
                ..KubeConfigOptions::default()
            };
            kube::Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|err| setup(format!("kubeconfig: {err}")))?
        };
        if let Some(ca_file) = &config.ca_file {
            let pem = std::fs::read_to_string(ca_file)
                .map_err(|err| setup(format!("ca_file {}: {err}", ca_file.display())))?;
            let certs = pem_certificates(&pem)
                .map_err(|err| setup(format!("ca_file {}: {err}", ca_file.display())))?;
            kube_config.root_cert = Some(certs);
            kube_config.root_cert_file = None;
        }
        if let Some(token_file) = &config.token_file {
            // Read here rather than handing kube the path: token files written with `echo` end in
            // a newline, which kube would put into the header verbatim. A cron run is short, so
            // the token needs no refreshing.
            let token = std::fs::read_to_string(token_file)
                .map_err(|err| setup(format!("token_file {}: {err}", token_file.display())))?;
            accelfed_net::secret::warn_if_exposed("kubernetes token_file", token_file);
            let token = token.trim();
            if token.is_empty() {
                return Err(setup(format!(
                    "token_file {} is empty",
                    token_file.display()
                )));
            }
            let auth = &mut kube_config.auth_info;
            auth.token = Some(token.to_owned().into());
            auth.token_file = None;
            auth.exec = None;
            auth.auth_provider = None;
            auth.username = None;
            auth.password = None;
        }
        let timeout = Duration::from_secs(*config.timeout_s.get_ref());
        kube_config.connect_timeout = Some(timeout);
        kube_config.read_timeout = Some(timeout);
        kube_config.write_timeout = Some(timeout);
        let client = kube::Client::try_from(kube_config).map_err(|err| setup(err.to_string()))?;
        Ok(Self {
            client,
            cluster,
            page_size: *config.page_size.get_ref(),
            timeout,
            tolerated_taints: config.tolerated_taints.clone(),
        })
    }

    /// Reads nodes, pods, namespaces and quotas, the four lists concurrently.
    pub async fn inventory(&self) -> Result<Inventory, KubernetesError> {
        let tolerated = &self.tolerated_taints;
        let (nodes, pods, namespaces, quotas) = tokio::try_join!(
            self.list("/api/v1/nodes", |text, kept, warnings| {
                read_page(
                    text,
                    &mut |node: Node, warnings| read_node(&node, tolerated, warnings),
                    kept,
                    warnings,
                )
            }),
            self.list(
                "/api/v1/pods",
                |text, kept: &mut Vec<PodsRead>, warnings| {
                    // One value for the whole listing; a restarted listing gets a fresh `kept`.
                    if kept.is_empty() {
                        kept.push(PodsRead::default());
                    }
                    kept[0].read_page(text, warnings)
                }
            ),
            self.list("/api/v1/namespaces", |text, kept, warnings| {
                read_page(text, &mut |ns: Namespace, _| Some(ns), kept, warnings)
            }),
            self.list("/api/v1/resourcequotas", |text, kept, warnings| {
                read_page(text, &mut |q: ResourceQuota, _| Some(q), kept, warnings)
            }),
        )?;
        let mut warnings = nodes.1;
        warnings.extend(pods.1);
        let pods_read = pods.0.into_iter().next().unwrap_or_default();
        Ok(Inventory {
            nodes: nodes.0,
            pods: pods_read.gpu_pods,
            cpu: pods_read.cpu,
            namespaces: namespaces.0,
            quotas: quotas.0,
            warnings,
        })
    }

    /// Reads a whole list page by page; `read` reads one page's text (usually with [`read_page`]),
    /// keeping what it makes of the items and returning the continue token. A `410 Gone` starts
    /// the list over (dropping what was read, so nothing counts twice).
    pub async fn list<U>(
        &self,
        path: &str,
        mut read: impl FnMut(
            &str,
            &mut Vec<U>,
            &mut Vec<String>,
        ) -> Result<Option<String>, serde_json::Error>,
    ) -> Result<(Vec<U>, Vec<String>), KubernetesError> {
        let mut restarts = 0;
        'restart: loop {
            let mut kept = Vec::new();
            let mut warnings = Vec::new();
            let mut token: Option<String> = None;
            loop {
                let text = match self.page(path, token.take()).await {
                    Ok(text) => text,
                    Err(PageError::Gone) if restarts < MAX_RESTARTS => {
                        restarts += 1;
                        tracing::info!(cluster = %self.cluster, path, restarts, "list expired (410 Gone); reading it again");
                        continue 'restart;
                    }
                    Err(PageError::Gone) => {
                        return Err(KubernetesError::Expired {
                            cluster: self.cluster.clone(),
                            path: path.to_owned(),
                            restarts,
                        });
                    }
                    Err(PageError::Failed(err)) => return Err(err),
                };
                let next = read(&text, &mut kept, &mut warnings).map_err(|err| {
                    KubernetesError::Decode {
                        cluster: self.cluster.clone(),
                        path: path.to_owned(),
                        message: err.to_string(),
                    }
                })?;
                match next {
                    Some(next) => token = Some(next),
                    None => return Ok((kept, warnings)),
                }
            }
        }
    }

    /// One page's text.
    async fn page(&self, path: &str, token: Option<String>) -> Result<String, PageError> {
        let params = ListParams {
            limit: Some(self.page_size),
            continue_token: token,
            ..ListParams::default()
        };
        let request = kube::core::Request::new(path)
            .list(&params)
            .map_err(|err| self.failed(path, err.to_string(), false))?;
        let text = match tokio::time::timeout(self.timeout, self.client.request_text(request)).await
        {
            Err(_) => {
                return Err(PageError::Failed(KubernetesError::Timeout {
                    cluster: self.cluster.clone(),
                    path: path.to_owned(),
                    seconds: self.timeout.as_secs(),
                }));
            }
            Ok(Err(kube::Error::Api(status))) if status.code == 410 => return Err(PageError::Gone),
            Ok(Err(kube::Error::Api(status))) => {
                let retryable = status.code == 429 || status.code >= 500;
                return Err(self.failed(
                    path,
                    format!("{} {}: {}", status.code, status.reason, status.message),
                    retryable,
                ));
            }
            // A transport failure is worth retrying unless its causes hold a refused TLS handshake
            // (an unknown CA, an expired certificate or one for another name): hyper-rustls wraps
            // rustls' error in an `io::Error`, which `cause::is_permanent` looks into.
            Ok(Err(err)) => {
                let permanent = accelfed_schemas::cause::is_permanent(&err);
                return Err(self.failed(path, error_chain(&err), !permanent));
            }
            Ok(Ok(text)) => text,
        };
        Ok(text)
    }

    fn failed(&self, path: &str, message: String, retryable: bool) -> PageError {
        PageError::Failed(KubernetesError::Request {
            cluster: self.cluster.clone(),
            path: path.to_owned(),
            message,
            retryable,
        })
    }
}

enum PageError {
    /// `410 Gone`: the continue token expired.
    Gone,
    Failed(KubernetesError),
}

/// The error and its causes, so a TLS failure says why (`invalid peer certificate:
/// UnknownIssuer`), each cause once.
fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    accelfed_schemas::cause::chain(err)
}

/// The DER certificates of a PEM bundle.
fn pem_certificates(pem: &str) -> Result<Vec<Vec<u8>>, String> {
    use base64::Engine;
    let mut certs = Vec::new();
    let mut current: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        match (line, current.as_mut()) {
            ("-----BEGIN CERTIFICATE-----", None) => current = Some(String::new()),
            ("-----END CERTIFICATE-----", Some(body)) => {
                let der = base64::engine::general_purpose::STANDARD
                    .decode(body.as_bytes())
                    .map_err(|err| {
                        format!("certificate {} is not base64: {err}", certs.len() + 1)
                    })?;
                certs.push(der);
                current = None;
            }
            (_, Some(body)) => body.push_str(line),
            _ => {}
        }
    }
    if certs.is_empty() {
        return Err("no PEM certificate in the file".to_owned());
    }
    Ok(certs)
}
