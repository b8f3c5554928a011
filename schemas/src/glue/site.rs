//! The site (AdminDomain) and what every service has in common.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{CloudService, ComputingService};
use crate::names::{Fqan, LocalId, SiteName, Text, VoName};

/// Everything one site publishes at one moment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SiteSnapshot {
    pub domain: AdminDomain,
    pub services: Vec<Service>,
    /// When the information was gathered; every entity's `CreationTime`.
    pub creation_time: DateTime<Utc>,
    /// For how many seconds consumers may trust it; every entity's `Validity`.
    pub validity_s: u64,
}

/// GLUE2 AdminDomain: the site.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdminDomain {
    pub name: SiteName,
    pub description: Option<Text>,
    pub www: Option<Text>,
    /// The site's id in GOCDB (`1234G0`), which EGI's cloud-info-api keys sites by.
    pub gocdb_id: Option<Text>,
    pub location: Option<Location>,
    pub contacts: Vec<Contact>,
    pub other_info: BTreeMap<String, String>,
}

/// GLUE2 Location.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Location {
    pub place: Option<Text>,
    pub country: Option<Text>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
}

/// GLUE2 Contact.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contact {
    /// GLUE2 `ContactType_t`: `general`, `security`, `sysadmin`, `usersupport`.
    pub kind: Text,
    /// A URI: `mailto:...`, `https://...`.
    pub detail: Text,
}

/// A VO allowed somewhere, with the FQAN its members present (rules `VO:<name>` and `VOMS:<fqan>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct VoAccess {
    pub vo: VoName,
    pub fqan: Option<Fqan>,
}

impl VoAccess {
    pub fn new(vo: VoName) -> Self {
        Self { vo, fqan: None }
    }

    /// The GLUE2 policy rules for this VO.
    pub fn rules(&self) -> Vec<String> {
        let mut rules = vec![format!("VO:{}", self.vo)];
        if let Some(fqan) = &self.fqan {
            rules.push(format!("VOMS:{fqan}"));
        }
        rules
    }
}

/// A service of the site: a batch system or a cloud.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Service {
    Computing(ComputingService),
    Cloud(CloudService),
}

impl Service {
    pub fn local_id(&self) -> &LocalId {
        match self {
            Service::Computing(service) => &service.local_id,
            Service::Cloud(service) => &service.local_id,
        }
    }
}

/// GLUE2 Endpoint (ComputingEndpoint or CloudComputingEndpoint, by the service it belongs to).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Endpoint {
    pub local_id: LocalId,
    pub url: Text,
    /// `org.openstack.nova`, `org.ogf.bes`, `slurm`...
    pub interface_name: Text,
    pub interface_version: Option<Text>,
    pub implementation_name: Option<Text>,
    pub implementation_version: Option<Text>,
    pub technology: Text,
    pub quality_level: Text,
    pub serving_state: Text,
    /// GLUE2 `EndpointHealthState_t`: `ok`, `warning`, `critical`, `unknown`, `other`.
    pub health_state: Text,
    pub health_state_info: Option<Text>,
    pub capabilities: Vec<Text>,
    /// The VOs the AccessPolicy of this endpoint admits.
    pub access: Vec<VoAccess>,
}
