//! `HttpsUrl`: an `https://` URL, checked when the configuration is read (a serde `Deserialize`
//! whose error TOML places at the value's line and column, and a `FromStr` for flags), so no
//! client checks the scheme again by its text.

use std::fmt;
use std::str::FromStr;

/// An `https://host[:port][/path]` URL with no user information (the URL appears in messages and
/// logs, and tokens travel in headers) and no query or fragment (clients append their paths).
/// Kept as written, without a trailing `/`, so messages show what the operator wrote.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct HttpsUrl {
    text: String,
}

impl HttpsUrl {
    /// `text` checked; the error says what is wrong, quoting the URL (without a password).
    pub fn parse(text: &str) -> Result<Self, String> {
        let parsed = reqwest::Url::parse(text).map_err(|error| {
            format!("{text:?} is not a URL ({error}); expected https://host[:port]")
        })?;
        if parsed.scheme() != "https" {
            return Err(format!(
                "{text:?} must be an https:// URL (TLS only: tokens and records must not travel in clear)"
            ));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(format!("{text:?} names no host"));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            let mut shown = parsed.clone();
            let _ = shown.set_username("");
            let _ = shown.set_password(None);
            return Err(format!(
                "{:?} must not hold a user or password (a token file authenticates)",
                shown.as_str()
            ));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(format!(
                "{text:?} must have no query or fragment (the API's paths are appended to it)"
            ));
        }
        Ok(Self {
            text: text.trim_end_matches('/').to_owned(),
        })
    }

    /// As written, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `path` (starting with `/`) appended.
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.text)
    }
}

impl fmt::Display for HttpsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for HttpsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

impl FromStr for HttpsUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text)
    }
}

impl PartialEq<str> for HttpsUrl {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for HttpsUrl {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl<'de> serde::Deserialize<'de> for HttpsUrl {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table holding a URL, as a configuration file's (only its errors are looked at).
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Table {
        name: String,
        url: HttpsUrl,
    }

    #[test]
    fn an_https_url_is_kept_as_written() {
        let url = HttpsUrl::parse("https://registry.example.org:8443/").unwrap();
        assert_eq!(url.as_str(), "https://registry.example.org:8443");
        assert_eq!(
            url.join("/registry/v1/offers"),
            "https://registry.example.org:8443/registry/v1/offers"
        );
    }

    #[test]
    fn what_is_not_an_https_url_is_refused_at_its_line() {
        for (url, reason) in [
            ("http://registry.example.org", "must be an https:// URL"),
            ("registry.example.org:8443", "must be an https:// URL"),
            ("https://", "is not a URL"),
            (
                "https://user:secret@registry.example.org",
                "must not hold a user",
            ),
            ("https://registry.example.org/?x=1", "no query or fragment"),
        ] {
            let text = format!("name = \"x\"\nurl = \"{url}\"\n");
            let err = toml::from_str::<Table>(&text).unwrap_err().to_string();
            assert!(err.contains("line 2"), "{url}: {err}");
            assert!(err.contains(reason), "{url}: {err}");
        }
        // TOML quotes the line; the URL's own message never repeats a password.
        let err = HttpsUrl::parse("https://user:secret@registry.example.org").unwrap_err();
        assert!(!err.contains("secret"), "{err}");
    }
}
