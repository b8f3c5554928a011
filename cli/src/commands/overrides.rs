//! The accounting commands' flags over the site file's `[accounting]` keys, key by key, as
//! `provide --registry-*` over `[publish.registry]`: `--spool` (meter, ship), `--observations`
//! (meter), `--endpoint`, `--token-file` and `--ca` (ship). A flag's path is relative to the
//! current folder, as on any command line; the file's paths stay relative to the file.

use std::path::{Path, PathBuf};

use accelfed_accounting::config::AccountingConfig;
use accelfed_accounting::ship::ShipConfig;

use crate::args::{ShipOverrides, SpoolOverride};

fn absolute(flag: &str, path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|err| format!("{flag} {}: {err}", path.display()))
}

/// `--spool` and, for meter, `--observations` into `accounting`.
pub(super) fn spool(
    spool: &SpoolOverride,
    observations: Option<&Path>,
    accounting: &mut AccountingConfig,
) -> Result<(), String> {
    if let Some(path) = &spool.path {
        accounting.spool = absolute("--spool", path)?;
    }
    if let Some(path) = observations {
        accounting.observations = Some(absolute("--observations", path)?);
    }
    Ok(())
}

/// `[accounting.ship]` with the flags applied; without the table, --endpoint and --token-file
/// make one. `config` names the file in messages.
pub(super) fn ship(
    flags: &ShipOverrides,
    table: Option<ShipConfig>,
    config: &Path,
) -> Result<ShipConfig, String> {
    let endpoints = match flags.endpoint.as_slice() {
        [] => None,
        listed => Some(
            accelfed_net::HttpsUrls::new(listed.to_vec())
                .map_err(|message| format!("--endpoint: {message}"))?,
        ),
    };
    let mut ship = match (table, &endpoints, &flags.token_file) {
        (Some(table), _, _) => table,
        (None, Some(endpoints), Some(token_file)) => {
            ShipConfig::new(endpoints.clone(), token_file.clone())
        }
        (None, _, _) => {
            return Err(format!(
                "{}: no [accounting.ship] table (it names the repository; see \
                 docs/configuration.md), and no --endpoint and --token-file",
                config.display()
            ));
        }
    };
    if let Some(endpoints) = endpoints {
        ship.endpoints = endpoints;
    }
    if let Some(path) = &flags.token_file {
        ship.token_file = absolute("--token-file", path)?;
    }
    if let Some(path) = &flags.ca {
        ship.ca = Some(absolute("--ca", path)?);
    }
    Ok(ship)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(endpoint: Option<&str>, token_file: Option<&str>) -> ShipOverrides {
        ShipOverrides {
            endpoint: endpoint
                .map(|urls| urls.split(',').map(|url| url.parse().unwrap()).collect())
                .unwrap_or_default(),
            token_file: token_file.map(PathBuf::from),
            ca: Some(PathBuf::from("ca.pem")),
        }
    }

    #[test]
    fn flags_make_or_override_the_ship_table() {
        let config = Path::new("/etc/accelfed/site.toml");
        let ship = super::ship(&flags(Some("https://c:9443"), Some("t")), None, config).unwrap();
        assert_eq!(ship.endpoints.to_string(), "https://c:9443");
        assert!(ship.token_file.is_absolute() && ship.token_file.ends_with("t"));
        assert!(ship.ca.unwrap().ends_with("ca.pem"));
        assert_eq!(ship.batch_size, 500, "the table's defaults");
        let old: accelfed_net::HttpsUrl = "https://old:1".parse().unwrap();
        let table = ShipConfig::new(old.into(), PathBuf::from("/old"));
        let ship = super::ship(&flags(None, None), Some(table.clone()), config).unwrap();
        assert_eq!(
            ship.endpoints.to_string(),
            "https://old:1",
            "a key without its flag stays"
        );
        let ship = super::ship(
            &flags(Some("https://a:1,https://b:1"), None),
            Some(table),
            config,
        )
        .unwrap();
        assert_eq!(ship.endpoints.to_string(), "https://a:1, https://b:1");
        let err =
            super::ship(&flags(Some("https://a:1,https://a:1"), None), None, config).unwrap_err();
        assert_eq!(err, "--endpoint: names https://a:1 twice");
        let err = super::ship(&flags(Some("https://c:9443"), None), None, config).unwrap_err();
        assert!(
            err.starts_with("/etc/accelfed/site.toml: no [accounting.ship]"),
            "{err}"
        );
    }
}
