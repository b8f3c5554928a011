//! The `[site]` table: the GLUE2 AdminDomain.

use std::collections::BTreeMap;

use serde::Deserialize;

use accelfed_schemas::names::{SiteName, Text};

/// The site as the federation knows it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteConfig {
    /// The site's name in the federation (GOCDB short name), e.g. `CESNET-MCC`.
    pub name: SiteName,
    /// The site's GOCDB id (`1234G0`); EGI's cloud-info-api keys sites by it.
    pub gocdb_id: Option<Text>,
    /// A sentence about the site.
    pub description: Option<Text>,
    /// The site's web page.
    pub www: Option<Text>,
    /// For how many seconds consumers may trust what is published (GLUE2 `Validity`). Set it to a
    /// little more than the cron interval.
    #[serde(default = "default_validity")]
    pub validity: u64,
    /// Where the site is.
    pub location: Option<LocationConfig>,
    /// Whom to contact.
    #[serde(default, rename = "contact")]
    pub contacts: Vec<ContactConfig>,
    /// Extra `key = "value"` facts published as the site's OtherInfo.
    #[serde(default)]
    pub other_info: BTreeMap<String, String>,
}

fn default_validity() -> u64 {
    3600
}

/// GLUE2 Location.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocationConfig {
    /// Town or campus.
    pub place: Option<Text>,
    /// ISO 3166 country code.
    pub country: Option<Text>,
    /// Degrees, -90..90.
    pub latitude: Option<f64>,
    /// Degrees, -180..180.
    pub longitude: Option<f64>,
}

/// GLUE2 Contact.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactConfig {
    /// `general`, `security`, `sysadmin` or `usersupport`.
    #[serde(rename = "type")]
    pub kind: Text,
    /// A URI: `mailto:...` or `https://...`.
    pub detail: Text,
}

impl SiteConfig {
    /// Range checks that TOML types cannot express; the error names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if let Some(location) = &self.location {
            if let Some(latitude) = location.latitude.filter(|l| !(-90.0..=90.0).contains(l)) {
                return Err((
                    "location.latitude",
                    format!("{latitude} is outside -90..90"),
                ));
            }
            if let Some(longitude) = location.longitude.filter(|l| !(-180.0..=180.0).contains(l)) {
                return Err((
                    "location.longitude",
                    format!("{longitude} is outside -180..180"),
                ));
            }
        }
        if self.validity == 0 {
            return Err(("validity", "must be at least one second".to_owned()));
        }
        Ok(())
    }
}
