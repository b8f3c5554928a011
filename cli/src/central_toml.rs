//! `central.toml` as the CLI writes it: the starting file of `accelfed init central`, and a site's
//! table added by `accelfed token --add-to` (edited with toml_edit, so the operator's comments
//! and layout stay). Every string is written with TOML's own quoting.

use std::net::SocketAddr;
use std::path::Path;

use accelfed_central::TokenHash;

/// What `init central` puts in the file.
#[derive(Debug)]
pub struct Settings<'a> {
    pub grpc: SocketAddr,
    pub https: SocketAddr,
    pub metrics: SocketAddr,
    pub certificate: &'a Path,
    pub key: &'a Path,
    /// A postgres:// URL, or an SQLite file's path.
    pub database: &'a str,
    /// Where the sites' CA certificate is, for the comment (a private CA).
    pub ca: Option<&'a Path>,
}

/// A TOML basic string holding `text`.
fn quoted(text: &str) -> String {
    toml_edit::Value::from(text).to_string()
}

fn path(path: &Path) -> String {
    quoted(&path.to_string_lossy())
}

/// The text of a new central.toml.
pub fn render(settings: &Settings<'_>) -> String {
    let database =
        if accelfed_schemas::database_url::DatabaseUrl::new(settings.database).is_postgres() {
            format!("url = {}", quoted(settings.database))
        } else {
            format!("path = {}", quoted(settings.database))
        };
    let ca = match settings.ca {
        Some(ca) => format!(
            "# Signed by the private CA {}: the sites trust that file (accounting.ship.ca,\n\
             # publish.registry.ca). Its key, beside it, signs nothing else: keep it offline.\n",
            ca.display()
        ),
        None => String::new(),
    };
    format!(
        "# accelfed serve: the federation's accounting repository and registry, written by\n\
         # `accelfed init central`. Check it with `accelfed validate --central FILE`; every key is in\n\
         # docs/configuration.md. Relative paths are relative to this file's folder.\n\
         \n[listen]\n\
         grpc = {grpc}       # gRPC over TLS: sites ship here\n\
         https = {https}      # the registry's HTTPS API (push and query), same certificate\n\
         metrics = {metrics}    # GET /metrics (Prometheus), plain HTTP: keep it private\n\
         \n[tls]\n{ca}certificate = {certificate}\nkey = {key}\n\
         \n[database]\n{database}\n\
         \n# One table per site below, each with the SHA-256 of its token, added by\n\
         # `accelfed token --site NAME --add-to THIS_FILE` (restart serve to take it).\n\
         [sites]\n",
        grpc = quoted(&settings.grpc.to_string()),
        https = quoted(&settings.https.to_string()),
        metrics = quoted(&settings.metrics.to_string()),
        certificate = path(settings.certificate),
        key = path(settings.key),
    )
}

/// Whether `text` gives any site a real token hash (not the examples' placeholder). Text that is
/// not TOML counts as configured: nothing can tell it is only an example.
pub fn configures_a_site(text: &str) -> bool {
    let Ok(document) = text.parse::<toml_edit::DocumentMut>() else {
        return true;
    };
    let Some(sites) = document
        .get("sites")
        .and_then(|sites| sites.as_table_like())
    else {
        return false;
    };
    sites.iter().any(|(_, site)| {
        site.get("token_sha256")
            .and_then(|hash| hash.as_str())
            .is_some_and(|hash| TokenHash::parse(hash).is_ok())
    })
}

/// `text` with `[sites.<site>] token_sha256 = <hash>`. A table for the site whose hash is not a
/// hash (the examples' placeholder) gets the new one; a real hash is refused, since replacing
/// it would lock the site out without a word.
pub fn add_site(text: &str, site: &str, hash: TokenHash) -> Result<String, String> {
    let mut document: toml_edit::DocumentMut =
        text.parse().map_err(|err| format!("not TOML: {err}"))?;
    let sites = document
        .entry("sites")
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or("`sites` is not a table")?;
    if let Some(entry) = sites.get(site) {
        let current = entry.get("token_sha256").and_then(|item| item.as_str());
        if current.is_some_and(|hash| TokenHash::parse(hash).is_ok()) {
            return Err(format!(
                "sites.{site} already has a token hash; to give the site a new token, delete its \
                 table and run this again (its old token then stops working when serve restarts)"
            ));
        }
    }
    let entry = sites
        .entry(site)
        .or_insert_with(|| {
            let mut table = toml_edit::Table::new();
            table.decor_mut().set_prefix("\n");
            toml_edit::Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| format!("sites.{site} is not a table"))?;
    entry.insert("token_sha256", toml_edit::value(hash.to_hex()));
    Ok(document.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_central::CentralConfig;

    fn hash(seed: &str) -> TokenHash {
        TokenHash::of(seed)
    }

    fn parse(text: &str) -> CentralConfig {
        CentralConfig::parse(Path::new("central.toml"), text)
            .unwrap_or_else(|e| panic!("{text}\n{e}"))
    }

    fn rendered() -> String {
        render(&Settings {
            grpc: "0.0.0.0:9443".parse().unwrap(),
            https: "[::]:8443".parse().unwrap(),
            metrics: "127.0.0.1:9464".parse().unwrap(),
            certificate: Path::new("tls/service \"a\".pem"),
            key: Path::new("tls/service.key"),
            database: "/var/lib/accelfed/accounting.sqlite",
            ca: Some(Path::new("/etc/accelfed/ca/ca.pem")),
        })
    }

    #[test]
    fn the_rendered_file_reads_back_as_written() {
        let config = parse(&rendered());
        assert_eq!(config.listen.https, Some("[::]:8443".parse().unwrap()));
        assert_eq!(config.tls.certificate, Path::new("tls/service \"a\".pem"));
        assert!(config.sites.is_empty());
    }

    #[test]
    fn sites_are_added_and_comments_kept() {
        let text = add_site(&rendered(), "SITE-A", hash("a")).unwrap();
        let text = add_site(&text, "site with space", hash("b")).unwrap();
        assert!(text.contains("# gRPC over TLS"), "{text}");
        assert!(text.ends_with("[sites]\n\n[sites.SITE-A]\ntoken_sha256 = \"ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb\"\n\n[sites.\"site with space\"]\ntoken_sha256 = \"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d\"\n"), "{text}");
        let config = parse(&text);
        assert_eq!(config.sites.len(), 2);
        let err = add_site(&text, "SITE-A", hash("c")).unwrap_err();
        assert!(
            err.contains("sites.SITE-A already has a token hash"),
            "{err}"
        );
    }

    #[test]
    fn the_examples_placeholder_is_replaced() {
        let example = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/central.toml"),
        )
        .unwrap();
        let text = add_site(&example, "EXAMPLE-GPU", hash("a")).unwrap();
        let config = parse(&text);
        assert_eq!(config.sites.len(), 1);
        assert_eq!(text.matches("[sites.EXAMPLE-GPU]").count(), 1, "{text}");
    }

    #[test]
    fn only_a_real_token_hash_configures_a_site() {
        let example = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/central.toml"),
        )
        .unwrap();
        assert!(!configures_a_site(&example), "the example's placeholder");
        assert!(
            !configures_a_site(&rendered()),
            "init's own file, before any token"
        );
        assert!(configures_a_site(
            &add_site(&example, "EXAMPLE-GPU", hash("a")).unwrap()
        ));
        assert!(
            configures_a_site("[listen"),
            "not TOML: not known to be an example"
        );
    }

    #[test]
    fn a_file_that_is_not_toml_is_refused() {
        assert!(
            add_site("[listen", "A", hash("a"))
                .unwrap_err()
                .starts_with("not TOML")
        );
        assert!(add_site("sites = 1", "A", hash("a")).is_err());
    }
}
