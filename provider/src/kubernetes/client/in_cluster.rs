//! In-cluster service-account auth, as when accelfed runs in a pod: the API server from
//! `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`, the bearer token from the service
//! account's `token` file and the CA from its `ca.crt`.
//!
//! Built here rather than with `kube::Config::incluster()`, which reads a fixed folder
//! (`/var/run/secrets/kubernetes.io/serviceaccount`): accelfed takes the folder from its
//! configuration (`service_account_dir`), so a token projected elsewhere works, and so does a test
//! with a folder of its own. The environment is passed in as a lookup for the same reason.

use std::path::{Path, PathBuf};

use super::pem_certificates;

/// Where Kubernetes mounts a pod's service account.
pub const DEFAULT_SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The client configuration of the pod's service account in `dir` (default
/// [`DEFAULT_SERVICE_ACCOUNT_DIR`]), with the API server named by `env`'s
/// `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`. The error says what is missing where.
pub fn config(
    dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<kube::Config, String> {
    let dir = dir.map_or_else(
        || PathBuf::from(DEFAULT_SERVICE_ACCOUNT_DIR),
        Path::to_path_buf,
    );
    let url = server_url(env)?;
    // `http::Uri`, by inference: kube takes it, and accelfed needs no `http` dependency for it.
    let uri = url
        .parse()
        .map_err(|err| format!("API server URL {url:?} (from the environment): {err}"))?;
    let token_path = dir.join("token");
    let token = std::fs::read_to_string(&token_path)
        .map_err(|err| format!("service account token {}: {err}", token_path.display()))?;
    let token = token.trim();
    if token.is_empty() {
        return Err(format!(
            "service account token {} is empty",
            token_path.display()
        ));
    }
    let ca_path = dir.join("ca.crt");
    let pem = std::fs::read_to_string(&ca_path)
        .map_err(|err| format!("service account CA {}: {err}", ca_path.display()))?;
    let certs = pem_certificates(&pem)
        .map_err(|err| format!("service account CA {}: {err}", ca_path.display()))?;
    let mut config = kube::Config::new(uri);
    config.root_cert = Some(certs);
    config.auth_info.token = Some(token.to_owned().into());
    // The namespace file only sets the default namespace, and accelfed lists cluster-wide.
    if let Ok(namespace) = std::fs::read_to_string(dir.join("namespace"))
        && !namespace.trim().is_empty()
    {
        config.default_namespace = namespace.trim().to_owned();
    }
    Ok(config)
}

/// `https://<host>:<port>` from the service environment; an IPv6 host gets brackets.
fn server_url(env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let read = |name: &str| {
        env(name)
            .map(|value| value.trim().to_owned())
            .filter(|value| !value.is_empty())
            .ok_or_else(|| {
                format!("{name} is not set (in_cluster = true needs the pod's service environment)")
            })
    };
    let host = read("KUBERNETES_SERVICE_HOST")?;
    let port = read("KUBERNETES_SERVICE_PORT")?;
    if port.parse::<u16>().is_err() {
        return Err(format!(
            "KUBERNETES_SERVICE_PORT {port:?} is not a port number"
        ));
    }
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host
    };
    Ok(format!("https://{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn the_server_comes_from_the_service_environment() {
        let url = server_url(&env(&[
            ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
            ("KUBERNETES_SERVICE_PORT", "443"),
        ]));
        assert_eq!(url.unwrap(), "https://10.96.0.1:443");
        let v6 = server_url(&env(&[
            ("KUBERNETES_SERVICE_HOST", "fd00::1"),
            ("KUBERNETES_SERVICE_PORT", "6443"),
        ]));
        assert_eq!(v6.unwrap(), "https://[fd00::1]:6443");
    }

    #[test]
    fn a_missing_or_bad_variable_is_named() {
        let missing = server_url(&env(&[("KUBERNETES_SERVICE_PORT", "443")])).unwrap_err();
        assert!(
            missing.contains("KUBERNETES_SERVICE_HOST is not set"),
            "{missing}"
        );
        let bad = server_url(&env(&[
            ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
            ("KUBERNETES_SERVICE_PORT", "https"),
        ]))
        .unwrap_err();
        assert!(bad.contains("\"https\" is not a port number"), "{bad}");
    }

    #[test]
    fn missing_or_empty_files_are_named_with_their_path() {
        let dir = tempfile::tempdir().unwrap();
        let lookup = env(&[
            ("KUBERNETES_SERVICE_HOST", "127.0.0.1"),
            ("KUBERNETES_SERVICE_PORT", "6443"),
        ]);
        let err = config(Some(dir.path()), &lookup).unwrap_err();
        assert!(
            err.starts_with(&format!(
                "service account token {}",
                dir.path().join("token").display()
            )),
            "{err}"
        );
        std::fs::write(dir.path().join("token"), "\n").unwrap();
        let err = config(Some(dir.path()), &lookup).unwrap_err();
        assert!(err.ends_with("is empty"), "{err}");
        std::fs::write(dir.path().join("token"), "abc\n").unwrap();
        std::fs::write(dir.path().join("ca.crt"), "not a certificate").unwrap();
        let err = config(Some(dir.path()), &lookup).unwrap_err();
        assert!(err.contains("no PEM certificate"), "{err}");
    }
}
