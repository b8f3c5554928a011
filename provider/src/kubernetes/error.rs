//! What can go wrong reading a cluster. Every message names the cluster and the API path, and says
//! whether running again can help (a timeout or an unreachable server may pass; a refused token or a
//! missing kubeconfig context will not).

/// Why the Kubernetes provider or meter could not read the cluster.
#[derive(Debug, thiserror::Error)]
pub enum KubernetesError {
    #[error(
        "kubernetes {cluster:?}: cannot set up the client: {message} (fix the configuration; a retry will not help)"
    )]
    Setup { cluster: String, message: String },
    #[error("kubernetes {cluster:?}: GET {path}: {message} ({})", retry_text(*.retryable))]
    Request {
        cluster: String,
        path: String,
        message: String,
        retryable: bool,
    },
    #[error("kubernetes {cluster:?}: GET {path}: no answer within {seconds} s (a retry may help)")]
    Timeout {
        cluster: String,
        path: String,
        seconds: u64,
    },
    #[error(
        "kubernetes {cluster:?}: GET {path}: the list expired (410 Gone) {restarts} times while it was read (a retry may help)"
    )]
    Expired {
        cluster: String,
        path: String,
        restarts: u32,
    },
    #[error(
        "kubernetes {cluster:?}: GET {path}: the answer is not a list: {message} (a retry will not help)"
    )]
    Decode {
        cluster: String,
        path: String,
        message: String,
    },
    #[error("prometheus {url}: {message} ({})", retry_text(*.retryable))]
    Prometheus {
        url: String,
        message: String,
        retryable: bool,
    },
}

impl KubernetesError {
    /// Whether running again later may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Self::Setup { .. } | Self::Decode { .. } => false,
            Self::Timeout { .. } | Self::Expired { .. } => true,
            Self::Request { retryable, .. } | Self::Prometheus { retryable, .. } => *retryable,
        }
    }
}

fn retry_text(retryable: bool) -> &'static str {
    if retryable {
        "a retry may help"
    } else {
        "a retry will not help"
    }
}
