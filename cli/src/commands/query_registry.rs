//! `accelfed query`'s reading of the registry: the offer list, page by page, from the first of
//! `--url`'s instances that answers. The next instance is asked when one is unreachable, times out
//! or answers a server error; a refusal (401, 403, 404) or an answer that is not an offer list is
//! final, since every instance on the shared database would answer it alike.

use accelfed_schemas::offer::Offer;
use serde::Deserialize;

#[derive(Deserialize)]
struct Answer {
    offers: Vec<Offer>,
}

/// `--url`'s values (empty ones, as an unset `ACCELFED_REGISTRY_URL=` gives, left out), checked.
pub(super) fn registry_urls(given: &[String]) -> Result<accelfed_net::HttpsUrls, String> {
    let given: Vec<&String> = given.iter().filter(|url| !url.trim().is_empty()).collect();
    if given.is_empty() {
        return Err("give the registry's --url (or ACCELFED_REGISTRY_URL), or --ldap".to_owned());
    }
    let urls = given
        .iter()
        .map(|url| accelfed_net::HttpsUrl::parse(url.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| format!("--url: {err}"))?;
    accelfed_net::HttpsUrls::new(urls).map_err(|err| format!("--url: {err}"))
}

/// Why reading the offers from one registry URL failed, and whether the next may answer.
#[derive(Debug)]
struct Failure {
    message: String,
    /// Unreachable, timed out or a server error: another instance may answer. A refusal or an
    /// answer that is not an offer list would be the same from every instance.
    fail_over: bool,
}

impl Failure {
    fn stop(message: String) -> Self {
        Self {
            message,
            fail_over: false,
        }
    }
}

impl From<accelfed_publishers::registry::RegistryError> for Failure {
    fn from(err: accelfed_publishers::registry::RegistryError) -> Self {
        Self {
            fail_over: err.is_transient(),
            message: err.to_string(),
        }
    }
}

/// The offers from the first of `urls` that answers, each URL with the whole deadline; the
/// instances share one database, so a list is read from one of them, whole, from its first page.
pub(super) async fn from_first_answering(
    settings: &accelfed_net::ClientSettings,
    urls: &accelfed_net::HttpsUrls,
    parameters: &[(&'static str, String)],
) -> Result<Vec<Offer>, String> {
    let mut failures = Vec::new();
    for (at, url) in urls.as_slice().iter().enumerate() {
        match all_pages(settings, url.as_str(), parameters).await {
            Ok(offers) => return Ok(offers),
            Err(failure) if failure.fail_over => {
                if let Some(next) = urls.as_slice().get(at + 1) {
                    tracing::warn!(%next, "{}; asking the next registry URL", failure.message);
                }
                failures.push(failure.message);
            }
            Err(failure) => return Err(failure.message),
        }
    }
    Err(failures.join("; "))
}

/// The most pages followed: the registry's pages hold up to 10,000 offers, so this is far past
/// any federation; a registry whose `next` links never end is stopped here, as by the deadline.
const MAX_PAGES: usize = 1_000;

/// The offers of every page of `/offers`, from the first to the last one (`Link: rel="next"`),
/// within the settings' deadline in all (`--timeout-s`): a long list is no way to keep the
/// command waiting without end.
async fn all_pages(
    settings: &accelfed_net::ClientSettings,
    base_url: &str,
    parameters: &[(&'static str, String)],
) -> Result<Vec<Offer>, Failure> {
    use accelfed_publishers::registry::{client_with, get_page, page_url};
    let started = tokio::time::Instant::now();
    let deadline = settings.deadline;
    let client = client_with(settings)?;
    let mut next = Some(page_url(base_url, "/registry/v1/offers", parameters)?);
    let mut offers = Vec::new();
    let mut pages = 0;
    while let Some(url) = next {
        if pages == MAX_PAGES {
            return Err(Failure::stop(format!(
                "registry {base_url}: the offer list goes past {MAX_PAGES} pages ({} offers \
                 read); stopped",
                offers.len()
            )));
        }
        let page = tokio::time::timeout_at(started + deadline, get_page(&client, &url)).await;
        let Ok(page) = page else {
            return Err(Failure {
                fail_over: true,
                message: format!(
                    "registry {base_url}: timed out after {} s reading the offer list ({pages} \
                 pages, {} offers read); stopped",
                    deadline.as_secs(),
                    offers.len()
                ),
            });
        };
        let (body, link) = page?;
        let answer = serde_json::from_str::<Answer>(&body).map_err(|err| {
            Failure::stop(format!(
                "registry {url}: the answer is not an offer list: {err}"
            ))
        })?;
        offers.extend(answer.offers);
        pages += 1;
        next = link;
    }
    Ok(offers)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::Duration;

    use super::*;

    /// An offer's JSON, named `name`.
    fn offer(name: &str) -> String {
        format!(
            r#"{{"site":"SITE-A","service_id":"s","service_kind":"cloud","resource_id":"{name}",
            "resource_name":"{name}","gpus_each":1,"vendor":"NVIDIA","model":"A100",
            "memory_mb":null,"compute_capability":null,"sharing":"none","mig_profile":null,
            "cpus":null,"ram_mb":null,"free":1,"total":2,"vos":["atlas"],
            "expires":"2026-01-01T00:00:00Z","fresh":true}}"#
        )
    }

    /// A plain-HTTP registry on 127.0.0.1 whose `/registry/v1/offers` has `pages` pages of one
    /// offer each, linked by `Link: rel="next"` (relative, as the registry writes them), each
    /// answered after `delay`; its base URL.
    fn paged_registry(pages: usize, delay: Duration) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut request = Vec::new();
                let mut byte = [0u8; 1];
                while !request.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    request.push(byte[0]);
                }
                let request = String::from_utf8_lossy(&request);
                let page: usize = request
                    .split_once("page=")
                    .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                std::thread::sleep(delay);
                let body = format!(r#"{{"offers":[{}]}}"#, offer(&format!("flavor-{page}")));
                let link = if page < pages {
                    format!(
                        "link: </registry/v1/offers?vo=atlas&limit=1&page={}>; rel=\"next\"\r\n",
                        page + 1
                    )
                } else {
                    String::new()
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\n{link}\
                     content-length: {}\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(body.as_bytes());
            }
        });
        format!("http://{address}")
    }

    fn settings(deadline: Duration) -> accelfed_net::ClientSettings {
        accelfed_net::ClientSettings::new(accelfed_net::Trust::system(), deadline)
    }

    #[tokio::test]
    async fn every_page_is_read_to_the_last() {
        let url = paged_registry(5, Duration::ZERO);
        let parameters = [("vo", "atlas".to_owned())];
        let offers = all_pages(&settings(Duration::from_secs(30)), &url, &parameters)
            .await
            .unwrap();
        let names: Vec<&str> = offers.iter().map(|o| o.resource_name.as_str()).collect();
        assert_eq!(
            names,
            ["flavor-1", "flavor-2", "flavor-3", "flavor-4", "flavor-5"]
        );
    }

    #[tokio::test]
    async fn pages_past_the_deadline_stop_the_query_with_what_was_read() {
        let url = paged_registry(1_000, Duration::from_millis(200));
        let started = std::time::Instant::now();
        let err = all_pages(&settings(Duration::from_secs(1)), &url, &[])
            .await
            .unwrap_err();
        let err = err.message;
        assert!(started.elapsed() < Duration::from_secs(3), "{err}");
        assert!(err.contains("timed out after 1 s"), "{err}");
        assert!(err.contains("offers read"), "{err}");
    }
}
