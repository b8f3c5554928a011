//! What can go wrong talking to a cloud. Each error names the service and URL and says whether
//! trying again later can help (a timeout or a 503 can; a 403 or a bad clouds.yaml cannot).

/// An OpenStack API failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenstackError {
    #[error("credentials: {0} (retry will not help)")]
    Credentials(String),
    #[error("keystone {url}: {message} ({})", retry_text(*retry))]
    Auth {
        url: String,
        message: String,
        retry: bool,
    },
    #[error("no {service} endpoint for interface {interface:?}{} in the catalog (retry will not help)", region.as_ref().map(|r| format!(" in region {r:?}")).unwrap_or_default())]
    NoEndpoint {
        service: String,
        interface: String,
        region: Option<String>,
    },
    #[error("{service} {url}: HTTP {status}: {message} ({})", retry_text(*retry))]
    Http {
        service: String,
        url: String,
        status: u16,
        message: String,
        retry: bool,
    },
    #[error("{service} {url}: {message} ({})", transport_retry_text(*retry))]
    Transport {
        service: String,
        url: String,
        message: String,
        /// False for a certificate the server does not pass or a port that does not speak TLS.
        retry: bool,
    },
    #[error("{service} {url}: unexpected response: {message} (retry will not help)")]
    Parse {
        service: String,
        url: String,
        message: String,
    },
}

/// A transport failure that no retry cures is one of TLS: say where to look.
fn transport_retry_text(retry: bool) -> &'static str {
    if retry {
        "retry may help"
    } else {
        "retry will not help: check the URL and the CA (ca of [[openstack]], else cacert in clouds.yaml or OS_CACERT)"
    }
}

fn retry_text(retry: bool) -> &'static str {
    if retry {
        "retry may help"
    } else {
        "retry will not help"
    }
}

impl OpenstackError {
    /// Whether the same request later may succeed.
    pub fn retryable(&self) -> bool {
        match self {
            Self::Auth { retry, .. } | Self::Http { retry, .. } | Self::Transport { retry, .. } => {
                *retry
            }
            Self::Credentials(_) | Self::NoEndpoint { .. } | Self::Parse { .. } => false,
        }
    }
}
