//! The file-descriptor budget of `accelfed serve`: every connection a port may hold is a
//! descriptor, and so are the process's own files (listeners, database connections, SQLite files
//! and their journals, the log, the runtime's epoll and event descriptors). With limits that need
//! more than the process may open, a flood runs it into EMFILE, where it can accept nothing, not
//! even from a site (issue #30: two ports of 512 reached the default 1,024). So `serve` adds up what
//! its configuration may hold, raises its soft limit towards the hard one if that is short (as
//! systemd advises services to do), and refuses to start, with the numbers, when even the hard
//! limit is short.

use crate::config::ListenConfig;

/// Descriptors kept for the process's own files besides its connections: the database pool, the
/// SQLite files, the log, the LDAP sync and the runtime, with room for connections that were told
/// to give way to a newcomer and are still closing.
pub const OWN_FILES: u64 = 256;

/// What the configuration may hold open at once: each port's `max_connections` and
/// [`OWN_FILES`].
pub fn needed(listen: &ListenConfig) -> u64 {
    let ports = 1 + u64::from(listen.https.is_some()) + u64::from(listen.metrics.is_some());
    ports
        .saturating_mul(listen.limits.max_connections as u64)
        .saturating_add(OWN_FILES)
}

/// What to do about the soft limit (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// The soft limit holds what the configuration needs.
    Fits,
    /// Raise the soft limit to this (at most the hard limit).
    Raise(u64),
}

/// Why the limits cannot fit, with the numbers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "[listen.limits] needs {needed} file descriptors ({ports} x max_connections {max_connections} \
     + {OWN_FILES} for the service's own files), more than this process may open (soft limit \
     {soft}, hard limit {hard}): lower max_connections or raise LimitNOFILE (ulimit -n)"
)]
pub struct TooFew {
    pub needed: u64,
    pub ports: u64,
    pub max_connections: usize,
    pub soft: String,
    pub hard: String,
}

/// Whether `needed` fits under `soft` or can by raising it up to `hard` (`None`: unlimited).
pub fn plan(needed: u64, soft: Option<u64>, hard: Option<u64>) -> Option<Plan> {
    match (soft, hard) {
        (None, _) => Some(Plan::Fits),
        (Some(soft), _) if soft >= needed => Some(Plan::Fits),
        (Some(_), Some(hard)) if hard < needed => None,
        (Some(_), _) => Some(Plan::Raise(needed)),
    }
}

/// Checks this process's `RLIMIT_NOFILE` against `listen`, raising the soft limit if that is
/// enough; the limit in effect afterwards (`None`: unlimited), or why it cannot fit.
pub fn ensure(listen: &ListenConfig) -> Result<Option<u64>, TooFew> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let needed = needed(listen);
    let limit = getrlimit(Resource::Nofile);
    let too_few = |limit: &Rlimit| {
        let show =
            |value: Option<u64>| value.map_or_else(|| "unlimited".to_owned(), |v| v.to_string());
        TooFew {
            needed,
            ports: 1 + u64::from(listen.https.is_some()) + u64::from(listen.metrics.is_some()),
            max_connections: listen.limits.max_connections,
            soft: show(limit.current),
            hard: show(limit.maximum),
        }
    };
    match plan(needed, limit.current, limit.maximum) {
        None => Err(too_few(&limit)),
        Some(Plan::Fits) => Ok(limit.current),
        Some(Plan::Raise(to)) => {
            let raised = Rlimit {
                current: Some(to),
                maximum: limit.maximum,
            };
            match setrlimit(Resource::Nofile, raised) {
                Ok(()) => {
                    tracing::info!(
                        needed,
                        "raised the file-descriptor soft limit from {} to {to}",
                        limit.current.unwrap_or_default()
                    );
                    Ok(Some(to))
                }
                Err(error) => {
                    tracing::warn!(%error, "could not raise the file-descriptor soft limit");
                    Err(too_few(&limit))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_is_raised_when_the_hard_one_allows_and_refused_when_not() {
        assert_eq!(plan(3328, Some(8192), Some(8192)), Some(Plan::Fits));
        assert_eq!(
            plan(3328, Some(1024), Some(524_288)),
            Some(Plan::Raise(3328))
        );
        assert_eq!(plan(3328, Some(1024), None), Some(Plan::Raise(3328)));
        assert_eq!(plan(3328, None, None), Some(Plan::Fits));
        assert_eq!(plan(3328, Some(1024), Some(2048)), None);
    }

    #[test]
    fn the_defaults_fit_the_packaged_unit_with_room() {
        let listen: ListenConfig = toml::from_str(
            "grpc = \"0.0.0.0:9443\"\nhttps = \"0.0.0.0:8443\"\nmetrics = \"127.0.0.1:9464\"\n",
        )
        .unwrap();
        // packaging/systemd/accelfed-serve.service: LimitNOFILE=8192.
        assert_eq!(needed(&listen), 3 * 1024 + OWN_FILES);
        assert!(needed(&listen) * 2 <= 8192);
    }

    #[test]
    fn the_refusal_names_the_numbers() {
        let listen: ListenConfig =
            toml::from_str("grpc = \"0.0.0.0:9443\"\n[limits]\nmax_connections = 4000000000\n")
                .unwrap();
        let error = ensure(&listen).unwrap_err().to_string();
        assert!(
            error.contains("needs 4000000256 file descriptors"),
            "{error}"
        );
        assert!(error.contains("1 x max_connections 4000000000"), "{error}");
        assert!(error.contains("hard limit"), "{error}");
    }
}
