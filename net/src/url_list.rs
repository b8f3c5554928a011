//! `HttpsUrls`: one or several `https://` URLs of the same service, tried in order (a site that
//! lists two central instances fails over to the second when the first is unreachable). Read from
//! a configuration value that is either one URL (`endpoint = "https://a:8443"`, the form every
//! existing file has) or a list of them (`endpoints = ["https://a:8443", "https://b:8443"]`), each
//! checked as an [`HttpsUrl`]; an empty list or one that names a URL twice is refused where it is
//! written.

use std::fmt;

use crate::url::HttpsUrl;

/// A non-empty list of distinct HTTPS URLs, in the order they are to be tried.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct HttpsUrls {
    urls: Vec<HttpsUrl>,
}

impl HttpsUrls {
    /// The list, checked: at least one URL, none twice.
    pub fn new(urls: Vec<HttpsUrl>) -> Result<Self, String> {
        if urls.is_empty() {
            return Err("lists no URL; give at least one https:// URL".to_owned());
        }
        for (at, url) in urls.iter().enumerate() {
            if urls[..at].contains(url) {
                return Err(format!("names {url} twice"));
            }
        }
        Ok(Self { urls })
    }

    /// The first URL, the one tried first.
    pub fn first(&self) -> &HttpsUrl {
        // `new` refuses an empty list, and nothing else builds one.
        &self.urls[0]
    }

    pub fn as_slice(&self) -> &[HttpsUrl] {
        &self.urls
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    /// Never true (the list is never empty); here because clippy asks for it beside `len`.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
    }
}

impl From<HttpsUrl> for HttpsUrls {
    fn from(url: HttpsUrl) -> Self {
        Self { urls: vec![url] }
    }
}

/// The URLs joined by `, `, for messages.
impl fmt::Display for HttpsUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, url) in self.urls.iter().enumerate() {
            if at > 0 {
                f.write_str(", ")?;
            }
            fmt::Display::fmt(url, f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for HttpsUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.urls).finish()
    }
}

impl<'de> serde::Deserialize<'de> for HttpsUrls {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Visitor)
    }
}

struct Visitor;

impl<'de> serde::de::Visitor<'de> for Visitor {
    type Value = HttpsUrls;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an https:// URL or a list of them")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<HttpsUrls, E> {
        HttpsUrl::parse(text)
            .map(HttpsUrls::from)
            .map_err(E::custom)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<HttpsUrls, A::Error> {
        let mut urls = Vec::new();
        while let Some(url) = seq.next_element::<HttpsUrl>()? {
            urls.push(url);
        }
        HttpsUrls::new(urls).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct Table {
        #[serde(alias = "endpoint")]
        endpoints: HttpsUrls,
    }

    fn parse(text: &str) -> Result<HttpsUrls, String> {
        toml::from_str::<Table>(text)
            .map(|table| table.endpoints)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn one_url_or_a_list_in_order() {
        let one = parse("endpoint = \"https://a.example.org:8443/\"\n").unwrap();
        assert_eq!(one.to_string(), "https://a.example.org:8443");
        assert_eq!(one.len(), 1);
        let two = parse("endpoints = [\"https://b:8443\", \"https://a:8443\"]\n").unwrap();
        assert_eq!(two.to_string(), "https://b:8443, https://a:8443");
        assert_eq!(two.first(), &"https://b:8443");
    }

    #[test]
    fn bad_lists_are_refused_at_their_line() {
        for (text, reason) in [
            ("endpoints = []\n", "lists no URL"),
            (
                "endpoints = [\"https://a:1\", \"https://a:1/\"]\n",
                "names https://a:1 twice",
            ),
            (
                "endpoints = [\"https://a:1\", \"http://b:1\"]\n",
                "must be an https:// URL",
            ),
            ("endpoints = 8443\n", "an https:// URL or a list of them"),
        ] {
            let error = parse(&format!("\n{text}")).unwrap_err();
            assert!(error.contains("line 2"), "{text}: {error}");
            assert!(error.contains(reason), "{text}: {error}");
        }
        let error = parse("endpoint = \"https://a:1\"\nendpoints = [\"https://b:1\"]\n")
            .expect_err("both keys");
        assert!(error.contains("duplicate field"), "{error}");
    }
}
