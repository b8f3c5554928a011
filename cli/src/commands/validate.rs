//! `accelfed validate`: parse and check a configuration, contacting nothing. A site file is also
//! rendered and checked as the federation registry would ([`super::validate_document`]).

use crate::site_file::SiteFile;

use crate::args::ValidateArgs;
use crate::exit::Outcome;

pub fn run(args: &ValidateArgs) -> Outcome {
    if let Some(central) = &args.central {
        return validate_central(central);
    }
    let Some(config) = &args.config else {
        tracing::error!("give --config (a site) or --central (the central service)");
        return Outcome::Config;
    };
    match SiteFile::load(config) {
        Ok(SiteFile { loaded, .. }) => {
            if let Err(why) = super::validate_document::check(&loaded.config) {
                tracing::error!("{}: {why}", config.display());
                return Outcome::Config;
            }
            let providers: Vec<&str> = loaded.config.providers().iter().map(|p| p.name()).collect();
            tracing::info!(
                "{}: valid (site {}, providers: {})",
                config.display(),
                loaded.config.site.name,
                if providers.is_empty() {
                    "none".to_owned()
                } else {
                    providers.join(", ")
                }
            );
            Outcome::Ok
        }
        Err(err) => {
            tracing::error!("{err}");
            Outcome::Config
        }
    }
}

/// `validate --central`: the file, its certificate and key, its token lines.
fn validate_central(path: &std::path::Path) -> Outcome {
    let loaded = match accelfed_central::CentralConfig::load(path) {
        Ok(loaded) => loaded,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    if let Err(err) = accelfed_central::check(&loaded) {
        tracing::error!("{}: {err}", path.display());
        return Outcome::Config;
    }
    tracing::info!(
        "{}: valid (sites: {}, registry: {}, database: {})",
        path.display(),
        loaded.config.sites.len(),
        if loaded.config.listen.https.is_some() {
            "yes"
        } else {
            "no"
        },
        if loaded.config.database.url.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        },
    );
    Outcome::Ok
}
