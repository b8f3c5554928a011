//! `[publish]`: where `accelfed provide --publish <name>` sends the document, so a cron line needs
//! no more than the flag. The table alone publishes nothing: without `--publish` the document still
//! goes to standard output (a BDII runs `accelfed provide` as its provider script and reads it
//! there). Flags (and their environment variables) override the table key by key. Relative paths
//! are relative to the configuration file.
//!
//! The table is the publishers' settings, so it lives in this crate; the binary reads it from the
//! same `site.toml` as the rest (`cli/src/site_file.rs`), so its errors keep their
//! `file:line:column`.

use std::path::PathBuf;

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

/// `[publish]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishConfig {
    /// The federation registry (`--publish registry`).
    #[serde(default)]
    pub registry: Option<RegistryPublishConfig>,
}

/// `[publish.registry]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryPublishConfig {
    /// The registry's base URL, `https://host[:port][/path]` (`--registry-url`). One of `url` and
    /// `urls` is given.
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// Several instances of the central service, `["https://a:8443", "https://b:8443"]`, tried
    /// in this order: the push goes to the next when one is unreachable or answers a server error
    /// (5xx), never when it refuses the token or the document.
    #[serde(default)]
    pub urls: Option<Spanned<Vec<String>>>,
    /// A file holding the site's token, from `accelfed token` at the central service
    /// (`--registry-token-file`). The token itself never goes into this file.
    pub token_file: PathBuf,
    /// A CA to trust besides the system's roots (`--registry-ca`): a PEM file, or a folder of
    /// them such as `/etc/grid-security/certificates`.
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// Seconds one push may take, whole: connecting, the TLS handshake, sending and the answer.
    #[serde(default = "sixty")]
    pub timeout_s: Spanned<u64>,
}

fn sixty() -> Spanned<u64> {
    Spanned::new(0..0, 60)
}

/// A value of `[publish]` that cannot be used: where it is in the file, its field path inside the
/// table, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub span: Range<usize>,
    pub field: &'static str,
    pub message: String,
}

impl PublishConfig {
    /// Checks what serde cannot: the registry URL's form (no network).
    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(registry) = &self.registry {
            registry.urls()?;
            if *registry.timeout_s.get_ref() == 0 {
                return Err(Invalid {
                    span: registry.timeout_s.span(),
                    field: "registry.timeout_s",
                    message: "must be at least 1 second".to_owned(),
                });
            }
        }
        Ok(())
    }
}

impl RegistryPublishConfig {
    /// `url`, or `urls` in their order, each checked (no network); exactly one of the keys.
    pub fn urls(&self) -> Result<accelfed_net::HttpsUrls, Invalid> {
        let (span, field, texts): (_, _, Vec<&String>) = match (&self.url, &self.urls) {
            (Some(url), None) => (url.span(), "registry.url", vec![url.get_ref()]),
            (None, Some(urls)) => (
                urls.span(),
                "registry.urls",
                urls.get_ref().iter().collect(),
            ),
            (Some(url), Some(_)) => {
                return Err(Invalid {
                    span: url.span(),
                    field: "registry.url",
                    message: "give url or urls, not both".to_owned(),
                });
            }
            (None, None) => {
                return Err(Invalid {
                    span: self.table_span(),
                    field: "registry.url",
                    message: "missing: give url = \"https://...\" (or urls = [...])".to_owned(),
                });
            }
        };
        let invalid = |message| Invalid {
            span: span.clone(),
            field,
            message,
        };
        let urls = texts
            .into_iter()
            .map(|text| check_registry_url(text))
            .collect::<Result<Vec<_>, String>>()
            .map_err(invalid)?;
        accelfed_net::HttpsUrls::new(urls).map_err(invalid)
    }

    /// Where the table is, roughly, for an error about a key it lacks: its timeout's value when
    /// written, else the start of the file.
    fn table_span(&self) -> Range<usize> {
        self.timeout_s.span()
    }
}

/// Whether `url` can be the registry's base URL; the same rule for the file and the flag, and
/// the same as every other endpoint's ([`accelfed_net::HttpsUrl`]).
///
/// Only `https://`: `accelfed serve` serves the registry over TLS alone, and the site's bearer
/// token must not cross the network in clear. No user or password (the URL appears in messages
/// and logs), no query or fragment (the API's paths are appended to it).
pub fn check_registry_url(url: &str) -> Result<accelfed_net::HttpsUrl, String> {
    accelfed_net::HttpsUrl::parse(url)
}

#[cfg(test)]
mod tests {
    //! The table read alone; that its errors are located in the whole file is `cli`'s
    //! `site_file` tests.

    use std::path::Path;

    use super::*;

    /// `[publish]` as the site file holds it.
    #[derive(Debug, Deserialize)]
    struct File {
        publish: Option<PublishConfig>,
    }

    fn parse(publish: &str) -> Result<Option<PublishConfig>, String> {
        let text = format!("[site]\nname = \"EXAMPLE-GPU\"\n\n{publish}");
        let file: File = toml::from_str(&text).map_err(|error| error.to_string())?;
        if let Some(publish) = &file.publish {
            publish.validate().map_err(|invalid| {
                let line = text[..invalid.span.start].matches('\n').count() + 1;
                format!("line {line}: {}: {}", invalid.field, invalid.message)
            })?;
        }
        Ok(file.publish)
    }

    #[test]
    fn the_registry_table_reads_with_and_without_a_ca() {
        let publish = parse(
            "[publish.registry]\nurl = \"https://registry.example.org:8443\"\n\
             token_file = \"registry.token\"\nca = \"/etc/accelfed/ca.pem\"\n",
        )
        .unwrap();
        let registry = publish.unwrap().registry.unwrap();
        assert_eq!(
            registry.urls().unwrap().to_string(),
            "https://registry.example.org:8443"
        );
        assert_eq!(registry.token_file, Path::new("registry.token"));
        assert_eq!(
            registry.ca.as_deref(),
            Some(Path::new("/etc/accelfed/ca.pem"))
        );

        let publish =
            parse("[publish.registry]\nurl = \"https://localhost:8443/\"\ntoken_file = \"t\"\n")
                .unwrap();
        assert!(publish.unwrap().registry.unwrap().ca.is_none());
        assert!(parse("").unwrap().is_none());
    }

    #[test]
    fn a_url_that_is_not_https_is_refused_at_its_value() {
        for (url, reason) in [
            (
                "http://registry.example.org:8443",
                "must be an https:// URL",
            ),
            ("registry.example.org:8443", "must be an https:// URL"),
            ("https://", "is not a URL"),
            (
                "https://user:secret@registry.example.org",
                "must not hold a user",
            ),
            ("https://registry.example.org/?x=1", "no query or fragment"),
        ] {
            let error = parse(&format!(
                "[publish.registry]\ntoken_file = \"t\"\nurl = \"{url}\"\n"
            ))
            .unwrap_err();
            assert!(
                error.starts_with("line 6: registry.url: "),
                "{url}: {error}"
            );
            assert!(error.contains(reason), "{url}: {error}");
            assert!(!error.contains("secret"), "{error}");
        }
    }

    #[test]
    fn several_urls_are_read_in_order_and_one_key_only() {
        let publish = parse(
            "[publish.registry]\nurls = [\"https://a:8443\", \"https://b:8443\"]\n\
             token_file = \"t\"\n",
        )
        .unwrap();
        let registry = publish.unwrap().registry.unwrap();
        assert_eq!(
            registry.urls().unwrap().to_string(),
            "https://a:8443, https://b:8443"
        );
        for (table, reason) in [
            (
                "urls = [\"https://a:1\", \"https://a:1\"]",
                "line 5: registry.urls: names https://a:1 twice",
            ),
            (
                "urls = [\"http://a:1\"]",
                "line 5: registry.urls: \"http://a:1\" must be an https:// URL",
            ),
            ("urls = []", "line 5: registry.urls: lists no URL"),
            (
                "url = \"https://a:1\"\nurls = [\"https://b:1\"]",
                "line 5: registry.url: give url or urls, not both",
            ),
        ] {
            let error = parse(&format!(
                "[publish.registry]\n{table}\ntoken_file = \"t\"\n"
            ))
            .unwrap_err();
            assert!(error.starts_with(reason), "{table}: {error}");
        }
        let error = parse("[publish.registry]\ntoken_file = \"t\"\n").unwrap_err();
        assert!(error.contains("registry.url: missing"), "{error}");
    }

    #[test]
    fn unknown_and_missing_keys_are_refused() {
        let error = parse(
            "[publish.registry]\nurl = \"https://r.example.org\"\ntoken_file = \"t\"\nca_file = \"x\"\n",
        )
        .unwrap_err();
        assert!(error.contains("line 7"), "{error}");
        assert!(error.contains("unknown field `ca_file`"), "{error}");
        assert!(error.contains("`ca`"), "{error}");

        let error = parse("[publish.registry]\nurl = \"https://r.example.org\"\n").unwrap_err();
        assert!(error.contains("missing field `token_file`"), "{error}");

        let error = parse("[publish.ldap]\nurl = \"ldap://x\"\n").unwrap_err();
        assert!(error.contains("unknown field `ldap`"), "{error}");
    }
}
