//! `site.toml` as the binary reads it: one file, three crates' settings.
//!
//! accelfed-provider reads the site and its backends ([`Config`]); accelfed-accounting reads
//! `[accounting]` (with `[accounting.ship]` and `[accounting.apel]`) and accelfed-publishers reads
//! `[publish]`. Each crate owns its settings type, and this file composes them: the provider's
//! parse runs first (it names the other tables only to keep the set of tables closed, so an
//! unknown table is still refused naming every known one), then [`Sections`] reads the other
//! crates' tables from the same text. Both are `toml` deserializations of the whole file, so every
//! error keeps its `file:line:column`; the only difference a user could see from one combined
//! parse is which error comes first in a file with several (the provider's are reported first).

use std::path::Path;

use serde::Deserialize;

use accelfed_accounting::config::AccountingConfig;
use accelfed_provider::config::{Config, ConfigError, LoadedConfig};
use accelfed_publishers::config::PublishConfig;

/// A site file that parsed and validated: the provider's configuration and the other crates'
/// tables.
#[derive(Debug, Clone)]
pub struct SiteFile {
    pub loaded: LoadedConfig,
    pub accounting: Option<AccountingConfig>,
    pub publish: Option<PublishConfig>,
}

/// The tables of the site file that are not the provider's. No `deny_unknown_fields` here: the
/// other tables are the provider's, which refuses unknown ones.
#[derive(Debug, Deserialize)]
struct Sections {
    #[serde(default)]
    accounting: Option<AccountingConfig>,
    #[serde(default)]
    publish: Option<PublishConfig>,
}

impl SiteFile {
    /// Reads, parses and validates the site file; see [`Config::load`] for the size limit.
    pub fn load(path: &Path) -> Result<SiteFile, ConfigError> {
        let loaded = Config::load(path)?;
        let Sections {
            accounting,
            publish,
        } = sections(path, &loaded.source)?;
        Ok(SiteFile {
            loaded,
            accounting,
            publish,
        })
    }
}

/// Reads and checks the other crates' tables of `source`; `path` is only used in messages.
fn sections(path: &Path, source: &str) -> Result<Sections, ConfigError> {
    let sections: Sections =
        toml::from_str(source).map_err(|err| ConfigError::from_toml(path, source, &err))?;
    if let Some(publish) = &sections.publish {
        publish.validate().map_err(|invalid| {
            ConfigError::at(
                path,
                source,
                Some(invalid.span),
                format!("publish.{}: {}", invalid.field, invalid.message),
            )
        })?;
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = "[site]\nname = \"EXAMPLE-GPU\"\n\n";

    fn parse(text: &str) -> Result<Sections, String> {
        let text = format!("{SITE}{text}");
        let path = Path::new("site.toml");
        Config::parse(path, &text).map_err(|error| error.to_string())?;
        sections(path, &text).map_err(|error| error.to_string())
    }

    #[test]
    fn publish_errors_point_at_the_value_in_the_whole_file() {
        let error = parse(
            "[publish.registry]\ntoken_file = \"t\"\nurl = \"http://registry.example.org\"\n",
        )
        .unwrap_err();
        assert!(
            error.starts_with("site.toml:6:7: publish.registry.url: "),
            "{error}"
        );
        let error = parse(
            "[publish.registry]\nurl = \"https://r.example.org\"\ntoken_file = \"t\"\nca_file = \"x\"\n",
        )
        .unwrap_err();
        assert!(error.starts_with("site.toml:7:1: "), "{error}");
        assert!(error.contains("unknown field `ca_file`"), "{error}");
        let error = parse("[publish.registry]\nurl = \"https://r.example.org\"\n").unwrap_err();
        assert!(error.starts_with("site.toml:4:1: "), "{error}");
        assert!(error.contains("missing field `token_file`"), "{error}");
    }

    #[test]
    fn accounting_errors_point_at_their_line_and_unknown_tables_name_every_table() {
        let error = parse("[accounting]\nspool = \"s\"\n[accounting.ship]\nendpoint = \"https://r:1\"\ntoken_file = \"t\"\nin_flight = 0\n")
            .unwrap_err();
        assert!(error.starts_with("site.toml:9:"), "{error}");
        assert!(error.contains("in_flight must be 1..=16"), "{error}");

        let error = parse("[accounting]\nspoll = \"s\"\n").unwrap_err();
        assert!(error.starts_with("site.toml:5:1: "), "{error}");
        assert!(error.contains("unknown field `spoll`"), "{error}");

        let error = parse("[acounting]\n").unwrap_err();
        assert!(error.contains("unknown field `acounting`"), "{error}");
        assert!(error.contains("`accounting`, `publish`"), "{error}");
    }

    #[test]
    fn the_sections_read_with_their_defaults() {
        let sections = parse("[accounting]\n").unwrap();
        let accounting = sections.accounting.unwrap();
        assert_eq!(
            accounting.spool,
            Path::new("/var/spool/accelfed/spool.sqlite")
        );
        assert!(sections.publish.is_none());
    }

    #[test]
    fn every_example_site_reads_whole() {
        // provider's own tests read the examples too, but skip the tables it only names.
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        for name in [
            "site.toml",
            "openstack-site.toml",
            "slurm-site.toml",
            "kubernetes-site.toml",
        ] {
            let file = SiteFile::load(&examples.join(name))
                .unwrap_or_else(|error| panic!("{name}: {error}"));
            if name == "site.toml" {
                assert!(file.accounting.is_some_and(|a| a.ship.is_some()));
                assert!(file.publish.is_some_and(|p| p.registry.is_some()));
            }
        }
    }
}
