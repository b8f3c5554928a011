//! Which data version to ask slurmrestd for, when the configuration does not fix one. Each
//! slurmrestd serves the versions of the `data_parser` plugins it loaded (a 22.05 server only
//! v0.0.38, a 25.05 server v0.0.41 to v0.0.43...) and describes them in its OpenAPI document
//! (`GET /openapi/v3`): every path carries its version (`/slurm/v0.0.40/nodes/`,
//! `/slurmdb/v0.0.40/jobs/`), either in the path or in a `servers` URL the paths sit under.
//! accelfed takes the newest version both sides know, per API (`slurm` for nodes and partitions,
//! `slurmdb` for jobs: a slurmrestd started without accounting serves only the first). Pure.

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;

use super::version::{DataVersion, KNOWN_MINORS};

/// The two APIs accelfed reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Api {
    /// `/slurm/vX/nodes`, `/slurm/vX/partitions` (slurmctld).
    Slurm,
    /// `/slurmdb/vX/jobs` (slurmdbd).
    Slurmdb,
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Api::Slurm => "slurm",
            Api::Slurmdb => "slurmdb",
        })
    }
}

#[derive(Deserialize)]
struct OpenApi {
    #[serde(default)]
    servers: Vec<Server>,
    #[serde(default)]
    paths: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
struct Server {
    #[serde(default)]
    url: String,
}

/// The `(api, minor)` versions an OpenAPI document's paths name, known to accelfed or not.
pub fn offered(openapi: &[u8]) -> Result<BTreeSet<(Api, u8)>, String> {
    let document: OpenApi =
        serde_json::from_slice(openapi).map_err(|err| format!("not an OpenAPI document: {err}"))?;
    let mut found = BTreeSet::new();
    let bases: Vec<&str> = if document.servers.is_empty() {
        vec![""]
    } else {
        document.servers.iter().map(|s| s.url.as_str()).collect()
    };
    for base in bases {
        for path in document.paths.keys() {
            let full = format!(
                "{}/{}",
                base.trim_end_matches('/'),
                path.trim_start_matches('/')
            );
            found.extend(version_in(&full));
        }
    }
    Ok(found)
}

/// `(api, minor)` of a path such as `/slurmdb/v0.0.41/jobs/`.
fn version_in(path: &str) -> Option<(Api, u8)> {
    let mut parts = path.split('/').filter(|p| !p.is_empty());
    let api = match parts.next()? {
        "slurm" => Api::Slurm,
        "slurmdb" => Api::Slurmdb,
        _ => return None,
    };
    let minor = parts.next()?.strip_prefix("v0.0.")?.parse().ok()?;
    Some((api, minor))
}

/// The newest version of `api` that both the server (`offered`) and accelfed know; when none,
/// a message naming the versions on each side.
pub fn pick(offered: &BTreeSet<(Api, u8)>, api: Api) -> Result<DataVersion, String> {
    let served: Vec<u8> = offered
        .iter()
        .filter(|(a, _)| *a == api)
        .map(|(_, minor)| *minor)
        .collect();
    if let Some(minor) = served.iter().rev().find(|m| KNOWN_MINORS.contains(m)) {
        return Ok(DataVersion::from_minor(*minor));
    }
    let theirs = if served.is_empty() {
        format!("no /{api}/ paths")
    } else {
        served
            .iter()
            .map(|m| format!("v0.0.{m}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(format!(
        "slurmrestd serves {theirs} for /{api}/; accelfed reads v0.0.{} to v0.0.{}: no version in common (run a slurmrestd with a data_parser plugin accelfed knows, or an accelfed that knows the server's)",
        KNOWN_MINORS.start(),
        KNOWN_MINORS.end()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_versions_in_them_or_in_the_server_url() {
        // 23.02+ layout: full paths, several versions side by side
        let modern = br#"{"openapi":"3.0.3","servers":[{"url":"/"}],"paths":{
            "/openapi/v3":{},"/slurm/v0.0.39/nodes/":{},"/slurm/v0.0.40/nodes/":{},
            "/slurm/v0.0.40/partitions/":{},"/slurmdb/v0.0.39/jobs/":{},"/slurm/v0.0.45/nodes/":{}}}"#;
        let offered = offered(modern).unwrap();
        assert_eq!(pick(&offered, Api::Slurm), Ok(DataVersion::Modern(40)));
        assert_eq!(pick(&offered, Api::Slurmdb), Ok(DataVersion::Modern(39)));
        // older layout: the version in `servers`, paths relative to it
        let old = br#"{"servers":[{"url":"/slurm/v0.0.36/"}],"paths":{"/nodes/":{},"/ping/":{}}}"#;
        let offered_old = super::offered(old).unwrap();
        assert!(offered_old.contains(&(Api::Slurm, 36)));
        let err = pick(&offered_old, Api::Slurm).unwrap_err();
        assert!(err.contains("serves v0.0.36"), "{err}");
        assert!(err.contains("accelfed reads v0.0.38 to v0.0.44"), "{err}");
        let err = pick(&offered_old, Api::Slurmdb).unwrap_err();
        assert!(err.contains("no /slurmdb/ paths"), "{err}");
        assert!(super::offered(b"<html>").is_err());
    }
}
