//! The only IO of the OpenStack provider: reading `clouds.yaml` and the environment, and the API
//! calls. Independent listings run at once (`tokio::join!`), per-object follow-ups fan out under
//! `concurrency`; a failing optional service (Placement, Glance, a project's quota) degrades the
//! result instead of failing it, and is reported so the run exits 1.
//!
//! reqwest (rustls) rather than `openstack_sdk`: the SDK's generated crates (compute, identity,
//! placement, image...) take minutes to build on a 2-core machine and accelfed reads about a dozen
//! GETs; see docs/architecture.md.

pub mod actions;
mod compute;
mod listing;
mod page;
mod session;

use crate::backend_error::{BackendError, Retry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use listing::parse_version;
pub use page::{NovaItem, NovaPage, read_nova_page};
pub use session::Session;

use super::auth::{self, Credentials};
use super::config::OpenstackConfig;
use super::detect::Detector;
use super::error::OpenstackError;
use super::inventory::CloudState;
use super::vo::project_vo;

/// A cloud's listings and what failed while taking them.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub state: CloudState,
    /// Each names the service, URL and whether a retry helps; non-empty means exit status 1.
    pub failures: Vec<BackendError>,
}

/// Finds the credentials: the named or `OS_CLOUD` entry of `clouds.yaml` (with `secure.yaml`),
/// else `OS_*`; then applies the configuration's region, interface and CA.
pub fn credentials(config: &OpenstackConfig) -> Result<Credentials, OpenstackError> {
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("OS_"))
        .collect();
    let cloud = config
        .cloud
        .clone()
        .or_else(|| env.get("OS_CLOUD").cloned());
    let mut creds = match cloud {
        Some(name) => {
            let candidates: Vec<PathBuf> =
                match (&config.clouds_file, env.get("OS_CLIENT_CONFIG_FILE")) {
                    (Some(file), _) => vec![file.clone()],
                    (None, Some(file)) => vec![PathBuf::from(file)],
                    (None, None) => {
                        auth::search_path(std::env::var_os("HOME").as_deref().map(Path::new))
                    }
                };
            let file = candidates
                .into_iter()
                .find(|p| p.is_file())
                .ok_or_else(|| {
                    OpenstackError::Credentials(format!("cloud {name:?}: no clouds.yaml found"))
                })?;
            let read = |path: &Path| {
                std::fs::read_to_string(path).map_err(|err| {
                    OpenstackError::Credentials(format!("{}: {err}", path.display()))
                })
            };
            let clouds = read(&file)?;
            let secure_path = file.with_file_name("secure.yaml");
            let secure = secure_path
                .is_file()
                .then(|| read(&secure_path))
                .transpose()?;
            auth::from_clouds_yaml(&clouds, secure.as_deref(), &name, &file)
                .map_err(OpenstackError::Credentials)?
        }
        None => auth::from_env(&env).map_err(OpenstackError::Credentials)?,
    };
    if let Some(region) = &config.region {
        creds.region = Some(region.clone());
    }
    if let Some(interface) = &config.interface {
        creds.interface = interface.clone();
    }
    // The site's `ca` wins over `cacert`: a clouds.yaml is often shared with other tools, and the
    // site may trust the cloud through an IGTF folder it names here alone.
    if let Some(ca) = &config.ca {
        creds.ca_file = Some(ca.clone());
    }
    Ok(creds)
}

/// What a run reads of the cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing<'a> {
    /// The whole service, as `accelfed provide` publishes it: flavors with their access lists,
    /// servers, projects, Placement's providers, Glance's images and every project's quota.
    Service,
    /// What usage records and their capacity bound need and no more, as `accelfed meter` reads
    /// it: flavors, projects and servers, with those deleted since `changes_since` (RFC 3339), and
    /// Placement's providers with their inventories (the GPUs installed, and what one vGPU is of
    /// a physical GPU), without their usages. Glance, flavor access and quotas shape only the
    /// published service, and on a busy cloud they are most of the calls.
    Usage { changes_since: &'a str },
}

/// Lists what `listing` names. Fails only when nothing can be published: Keystone refuses, or
/// Nova's flavors or servers cannot be listed.
pub async fn fetch(
    config: &OpenstackConfig,
    creds: Credentials,
    listing: Listing<'_>,
) -> Result<Fetched, OpenstackError> {
    let session = Session::connect(
        creds,
        Duration::from_secs(config.timeout),
        config.concurrency,
    )
    .await?;
    fetch_with(config, &session, listing).await
}

/// [`fetch`] on an existing session.
pub async fn fetch_with(
    config: &OpenstackConfig,
    session: &Arc<Session>,
    listing: Listing<'_>,
) -> Result<Fetched, OpenstackError> {
    let compute = session.endpoint("compute").await?;
    let detector = Detector::new(config);
    let mut failures = Vec::new();
    let mut degraded = Vec::new();
    let (service, changes_since) = match listing {
        Listing::Service => (true, None),
        Listing::Usage { changes_since } => (false, Some(changes_since)),
    };

    // Every chain of calls that depend on each other runs beside the others: Nova's listings
    // (beside its version document, see [`compute`]), flavor access behind the flavors, quotas
    // behind the projects. On a cloud whose APIs answer slowly the run then takes its longest
    // chain, not their sum.
    let placement_url = session.endpoint("placement").await;
    let image_url = session.endpoint("image").await;
    let identity_url = session.endpoint("identity").await;
    let nova = compute::listings(session, &compute, service, changes_since);
    let keystone = async {
        let projects = match &identity_url {
            Ok(url) => listing::projects(session, url).await,
            Err(err) => Err(err.clone()),
        };
        let quotas = match (&projects, service) {
            (Ok(projects), true) => {
                // Only a VO's project becomes a share that publishes its quota.
                let ids = projects
                    .iter()
                    .filter(|p| p.enabled)
                    .filter(|p| {
                        matches!(
                            project_vo(p, &config.vo_property, &config.vo_map),
                            Ok(Some(_))
                        )
                    })
                    .map(|p| p.id.clone())
                    .collect();
                Some(listing::quotas(session, &compute, ids).await)
            }
            _ => None,
        };
        (projects, quotas)
    };
    let (nova, providers, (projects, quotas), images) = tokio::join!(
        nova,
        async {
            match &placement_url {
                Ok(url) => listing::providers(session, url, detector.devices(), service).await,
                Err(err) => Err(err.clone()),
            }
        },
        keystone,
        async {
            match (&image_url, config.images && service) {
                (Ok(url), true) => listing::images(session, url).await,
                (Err(err), true) => Err(err.clone()),
                (_, false) => Ok(Vec::new()),
            }
        },
    );
    let microversion = nova.microversion;
    let (flavors, flavor_access) = nova.flavors?;
    let servers = nova.servers?;
    let mut optional = |what: &str, err: OpenstackError| {
        degraded.push(format!("{what}: {err}"));
        failures.push(BackendError::from(err));
    };
    let providers = providers.unwrap_or_else(|err| {
        optional("placement", err);
        Vec::new()
    });
    let projects = projects.unwrap_or_else(|err| {
        optional("keystone projects", err);
        Vec::new()
    });
    let images = images.unwrap_or_else(|err| {
        optional("glance", err);
        Vec::new()
    });
    let flavor_access = match flavor_access {
        Some(Ok(access)) => access,
        Some(Err(err)) => {
            optional("flavor access", err);
            BTreeMap::new()
        }
        None => BTreeMap::new(),
    };
    let (quotas, project_errors) = quotas.unwrap_or_default();
    for (project, err) in &project_errors {
        failures.push(BackendError {
            message: format!("project {project}: {err}"),
            retry: Retry::of(err.retryable()),
        });
    }
    let project_errors: BTreeMap<String, String> = project_errors
        .into_iter()
        .map(|(project, err)| (project, err.to_string()))
        .collect();
    Ok(Fetched {
        state: CloudState {
            compute_url: compute,
            compute_microversion: microversion,
            flavors,
            flavor_access,
            projects,
            project_errors,
            servers,
            providers,
            images,
            quotas,
            degraded,
        },
        failures,
    })
}
