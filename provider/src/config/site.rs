//! The `[site]` table: the GLUE2 AdminDomain.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::names::{SiteName, Text};

use super::Problem;

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
    pub validity: Spanned<u64>,
    /// Where the site is.
    pub location: Option<LocationConfig>,
    /// Whom to contact.
    #[serde(default, rename = "contact")]
    pub contacts: Vec<ContactConfig>,
    /// Extra `key = "value"` facts published as the site's OtherInfo.
    #[serde(default)]
    pub other_info: BTreeMap<String, String>,
}

fn default_validity() -> Spanned<u64> {
    Spanned::new(0..0, 3600)
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
    pub latitude: Option<Spanned<f64>>,
    /// Degrees, -180..180.
    pub longitude: Option<Spanned<f64>>,
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
    /// Range checks that TOML types cannot express; the problem names the field (relative to
    /// `site`) and where its value is written.
    pub fn validate(&self) -> Result<(), Problem> {
        if let Some(location) = &self.location {
            for (field, value, limit) in [
                ("location.latitude", &location.latitude, 90.0),
                ("location.longitude", &location.longitude, 180.0),
            ] {
                if let Some(degrees) = value
                    .as_ref()
                    .filter(|d| !(-limit..=limit).contains(d.get_ref()))
                {
                    return Err(Problem::new(
                        degrees,
                        field,
                        format!(
                            "{} is not a number of degrees between -{limit} and {limit}",
                            degrees.get_ref()
                        ),
                    ));
                }
            }
        }
        if *self.validity.get_ref() == 0 {
            return Err(Problem::new(
                &self.validity,
                "validity",
                "must be at least one second",
            ));
        }
        Ok(())
    }
}
