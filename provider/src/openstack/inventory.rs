//! The listing of one cloud: what the client reads (`client/`) and the pure mapping (`map.rs`,
//! `holdings.rs`) turns into GLUE2 and VM usage. Its own file because both sides, and the
//! recorded-fixture tests, build it.

use std::collections::BTreeMap;

use super::api::{Flavor, GlanceImage, Project, ProjectQuota, ResourceProvider, Server};
use super::capacity::ProviderState;

/// Everything listed from one cloud.
#[derive(Debug, Clone, Default)]
pub struct CloudState {
    pub compute_url: String,
    /// The highest compute microversion both sides speak, e.g. `2.93`.
    pub compute_microversion: Option<String>,
    pub flavors: Vec<Flavor>,
    /// Private flavor id -> the projects it is shared with.
    pub flavor_access: BTreeMap<String, Vec<String>>,
    pub projects: Vec<Project>,
    /// Project id -> why something of that project could not be listed.
    pub project_errors: BTreeMap<String, String>,
    pub servers: Vec<Server>,
    pub providers: Vec<(ResourceProvider, ProviderState)>,
    pub images: Vec<GlanceImage>,
    pub quotas: BTreeMap<String, ProjectQuota>,
    /// Services that failed while listing (`placement: 503 ...`): the endpoint's health says so.
    pub degraded: Vec<String>,
}
