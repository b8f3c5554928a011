//! One page of a Nova listing (`{"servers": [...], "servers_links": [...]}`), read straight from
//! the response bytes into its items: no intermediate `serde_json::Value`, which for 100,000
//! servers costs several times the parse itself (see BENCHMARKS.md, `## OpenStack`). Pure, so the
//! benchmark times exactly what a listing runs.

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A Nova page of flavors or servers; the item key names the listing.
#[derive(Debug, Deserialize)]
#[serde(bound = "T: DeserializeOwned")]
pub struct NovaPage<T> {
    #[serde(alias = "flavors", alias = "servers")]
    pub items: Vec<T>,
    #[serde(default, alias = "flavors_links", alias = "servers_links")]
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

/// Reads one page of a Nova listing.
pub fn read_nova_page<T: DeserializeOwned>(body: &[u8]) -> Result<NovaPage<T>, serde_json::Error> {
    serde_json::from_slice(body)
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
