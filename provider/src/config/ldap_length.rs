//! IDs too long for a BDII, refused where the name they are built from is written.
//!
//! Every GLUE2 ID is built from the site name and local ids, and `SiteSnapshot::validate` refuses
//! a snapshot with an ID whose LDAP RDN passes `MAX_RDN_BYTES` (slapd refuses such entries). That
//! refusal names the entity, not the configuration; here the IDs that the file alone determines
//! (the site's Location, built from the site name twice, and each static service) are checked
//! first, so the error points at the name to shorten. IDs built from more names (a share, a GPU
//! kind) are still refused by the snapshot's check, which `accelfed validate` runs.

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use accelfed_schemas::glue::entity::Class;
use accelfed_schemas::glue::ids::{Ids, Kind};
use accelfed_schemas::glue::validate::too_long_for_ldap;

use super::{Config, ConfigError};

/// Only the site name, with its position: read again from the text with toml's spans (the parsed
/// [`super::SiteConfig`] keeps no position for it).
#[derive(Deserialize)]
struct SiteNameAt {
    site: NameAt,
}

#[derive(Deserialize)]
struct NameAt {
    name: Spanned<String>,
}

/// Refuses the first ID of the site's own entities or of a static service that is too long for
/// LDAP, at the name it is built from.
pub(super) fn check(config: &Config, path: &Path, source: &str) -> Result<(), ConfigError> {
    let ids = Ids::new(&config.site.name);
    let site = config.site.name.as_str();
    if config.site.location.is_some()
        && let Some(too_long) = too_long_for_ldap(Class::Location, &ids.id(Kind::Location, &[site]))
    {
        return Err(ConfigError::at(
            path,
            source,
            site_name_span(source),
            format!("site.name: {too_long}"),
        ));
    }
    let Some(statics) = &config.r#static else {
        return Ok(());
    };
    let services = statics
        .batch
        .iter()
        .enumerate()
        .map(|(index, batch)| {
            (
                format!("static.batch[{index}].id"),
                &batch.id,
                Class::ComputingService,
            )
        })
        .chain(statics.cloud.iter().enumerate().map(|(index, cloud)| {
            (
                format!("static.cloud[{index}].id"),
                &cloud.id,
                Class::CloudComputingService,
            )
        }));
    for (field, id, class) in services {
        let service_id = ids.id(Kind::Service, &[id.get_ref().as_str()]);
        if let Some(too_long) = too_long_for_ldap(class, &service_id) {
            return Err(ConfigError::at(
                path,
                source,
                Some(id.span()),
                format!("{field}: {too_long}"),
            ));
        }
    }
    Ok(())
}

fn site_name_span(source: &str) -> Option<Range<usize>> {
    toml::from_str::<SiteNameAt>(source)
        .ok()
        .map(|at| at.site.name.span())
}
