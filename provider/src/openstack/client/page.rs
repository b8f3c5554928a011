//! One page of a Nova listing (`{"servers": [...], "servers_links": [...]}`), read straight from
//! the response bytes into its items with [`Scanner`]: no intermediate `serde_json::Value`, and
//! for servers no typed serde read either, whose per-key work was most of the meter's time (see
//! BENCHMARKS.md, `## OpenStack`). Pure, so the benchmark times exactly what a listing runs.

use serde::Deserialize;

use super::super::api::{Flavor, Server};
use crate::json::{ScanError, Scanner};

/// A Nova page of flavors or servers.
#[derive(Debug)]
pub struct NovaPage<T> {
    pub items: Vec<T>,
    links: Vec<Link>,
}

#[derive(Debug, Deserialize)]
struct Link {
    #[serde(default)]
    rel: String,
    #[serde(default)]
    href: String,
}

impl<T> NovaPage<T> {
    /// The `marker` of the `next` link, when Nova says there is more.
    pub fn next_marker(&self) -> Option<String> {
        let next = self.links.iter().find(|link| link.rel == "next")?;
        query_param(&next.href, "marker")
    }
}

/// An item of a Nova listing: how one is read from a page, and the page's keys.
pub trait NovaItem: Sized {
    /// `servers`, `flavors`: the key of the items, `<key>_links` that of the links.
    const KEY: &'static str;

    /// Reads one item at the scanner.
    fn scan(scanner: &mut Scanner<'_>) -> Result<Self, ScanError>;
}

impl NovaItem for Server {
    const KEY: &'static str = "servers";

    fn scan(scanner: &mut Scanner<'_>) -> Result<Self, ScanError> {
        super::super::server::scan(scanner)
    }
}

impl NovaItem for Flavor {
    const KEY: &'static str = "flavors";

    /// Flavors are few (hundreds) and small: serde reads each from its text.
    fn scan(scanner: &mut Scanner<'_>) -> Result<Self, ScanError> {
        scanner.peek();
        let at = scanner.offset();
        let text = scanner.skip_value()?;
        serde_json::from_slice(text).map_err(|err| scanner.error_at(at, format!("flavor: {err}")))
    }
}

/// Reads one page of a Nova listing.
pub fn read_nova_page<T: NovaItem>(body: &[u8]) -> Result<NovaPage<T>, ScanError> {
    let mut scanner = Scanner::new(body);
    let links_key = format!("{}_links", T::KEY);
    let (mut items, mut links) = (None, Vec::new());
    scanner.object("a Nova page", |s, key| {
        let key = s.key(key)?;
        if *key == *T::KEY.as_bytes() {
            let mut read = Vec::new();
            s.array(T::KEY, |s| {
                read.push(T::scan(s)?);
                Ok(())
            })?;
            items = Some(read);
        } else if *key == *links_key.as_bytes() {
            s.peek();
            let at = s.offset();
            let text = s.skip_value()?;
            links = serde_json::from_slice(text)
                .map_err(|err| s.error_at(at, format!("{links_key}: {err}")))?;
        } else {
            s.skip_value()?;
        }
        Ok(())
    })?;
    scanner.finish()?;
    let items = items.ok_or_else(|| scanner.error(format!("a Nova page without `{}`", T::KEY)))?;
    Ok(NovaPage { items, links })
}

/// The value of `name` in a URL's query.
pub fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| value.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openstack::api::{Flavor, Server};

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/openstack/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[test]
    fn recorded_pages_read_into_their_items() {
        let servers: NovaPage<Server> =
            read_nova_page(&fixture("nova-servers-detail-alltenants-2.93.json")).unwrap();
        assert_eq!(servers.items.len(), 6);
        assert_eq!(servers.next_marker(), None);
        let flavors: NovaPage<Flavor> =
            read_nova_page(&fixture("nova-flavors-detail-2.61.json")).unwrap();
        assert_eq!(flavors.items.len(), 4);
    }

    #[test]
    fn the_next_link_gives_the_marker() {
        let body = br#"{"servers": [], "servers_links": [{"rel": "next",
            "href": "http://proxy/v2.1/servers/detail?all_tenants=1&limit=2&marker=abc"}]}"#;
        let page: NovaPage<Server> = read_nova_page(body).unwrap();
        assert_eq!(page.next_marker(), Some("abc".into()));
        assert!(read_nova_page::<Server>(br#"{"servers_links": []}"#).is_err());
    }
}
