//! The registry's web page in a real browser: headless Chromium (Debian `chromium`) loads the page
//! over the registry's HTTPS listener and the test reads what a person would see, from the DOM
//! Chromium built: filtering for A100 shows the A100 site and not the H100 site, both sites'
//! freshness is listed, the accounting chart is drawn, and a flavor named `<script>...` is text,
//! not a script that ran.
//!
//! Chromium runs through `accelfed_tests::browser` (its own temporary profile, the test CA's
//! certificate errors ignored, installed with apt-get when missing off CI).

#![allow(clippy::unwrap_used)]

use std::path::Path;

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_publishers::registry;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::render::json;
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::browser::{ensure_chromium, page, web_service};
use chrono::{TimeZone, Utc};

// Of `accelfed token`'s form (64 hex digits).
const A100_TOKEN: &str = "a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100";
const H100_TOKEN: &str = "4100410041004100410041004100410041004100410041004100410041004100";

/// The texts of the `<td class="site">` cells of the table with `id`.
fn site_cells(dom: &str, id: &str) -> Vec<String> {
    let start = dom
        .find(&format!("<table id=\"{id}\""))
        .unwrap_or_else(|| panic!("no table {id} in {dom}"));
    let table = &dom[start..];
    let table = &table[..table.find("</table>").unwrap()];
    let mut out: Vec<String> = table
        .split("<td class=\"site\">")
        .skip(1)
        .map(|cell| cell[..cell.find("</td>").unwrap()].to_owned())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// An accounting repository with GPU-hours of two VOs.
async fn repository(path: &Path) -> Repository {
    let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
    let batch: Vec<Submission> = [("vm-1", "atlas", 1), ("vm-2", "cms", 2)]
        .iter()
        .map(|(resource, vo, month)| {
            let mut r = sample::record(resource);
            r.vo = Some(VoName::new(*vo).unwrap());
            r.month = Month::new(2026, *month).unwrap();
            r.first_seen = Utc.with_ymd_and_hms(2026, *month, 1, 0, 0, 0).unwrap();
            r.last_seen = r.first_seen + chrono::Duration::days(10);
            r.into()
        })
        .collect();
    let options = IngestOptions {
        max_batch: 100,
        now: Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap(),
    };
    let report = repo
        .ingest(&SiteName::new("CESNET-MCC").unwrap(), batch, options)
        .await
        .unwrap();
    assert_eq!(report.outcomes, vec![Outcome::Stored; 2]);
    repo
}

/// The sample site's document with every A100 an H100 and one node type named like a script.
fn h100_document() -> Vec<u8> {
    let text = String::from_utf8(json::render(&snapshot("H100-SITE"))).unwrap();
    assert!(text.contains("\"A100 nodes\""), "the sample changed");
    text.replace("A100", "H100")
        .replace(
            "\"H100 nodes\"",
            "\"<script>document.title='pwned'</script>H100 nodes\"",
        )
        .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_for_a100_in_chromium_shows_the_a100_site_only() {
    ensure_chromium();
    let dir = tempfile::tempdir().unwrap();
    // The accounting chart's GPU-hours are in the repository before the service opens it.
    let database = dir.path().join("accounting.sqlite");
    drop(repository(&database).await);

    // The whole service as `accelfed serve` assembles it (through `run`: its listeners, limits
    // and token checks), the documents pushed as sites push them.
    let (server, pki) = web_service(
        dir.path(),
        &database,
        &[("A100-SITE", A100_TOKEN), ("H100-SITE", H100_TOKEN)],
    );
    let client = registry::client(Some(pki.ca_pem.as_bytes())).unwrap();
    // The A100 site pushes what it gathered just now; the H100 site's document is the sample's,
    // gathered long ago, so it is stale.
    let mut fresh_a100 = snapshot("A100-SITE");
    fresh_a100.creation_time = Utc::now();
    let url = server.url();
    registry::push(&client, &url, A100_TOKEN, json::render(&fresh_a100))
        .await
        .unwrap();
    registry::push(&client, &url, H100_TOKEN, h100_document())
        .await
        .unwrap();
    let base = format!("{}/", url.trim_end_matches('/'));

    let everything = page(base.clone()).await;
    assert_eq!(
        site_cells(&everything, "offers"),
        ["A100-SITE", "H100-SITE"]
    );
    assert_eq!(site_cells(&everything, "sites"), ["A100-SITE", "H100-SITE"]);
    let sites_table = &everything[everything.find("<table id=\"sites\"").unwrap()..];
    assert!(sites_table.contains("A100-SITE</td>"));
    assert_eq!(sites_table.matches("class=\"fresh\">fresh</td>").count(), 1);
    assert_eq!(sites_table.matches("class=\"stale\">stale for ").count(), 1);
    // The accounting chart is there, inline, with both VOs in its legend.
    assert!(everything.contains("<svg"), "no chart");
    assert!(everything.contains(">atlas<") && everything.contains(">cms<"));
    // The script-like name is shown as text and did not run.
    assert!(everything.contains("&lt;script&gt;document.title="));
    assert!(!everything.contains("pwned</title>"));
    assert!(everything.contains("<title>accelfed: GPUs across the federation</title>"));

    let a100 = page(format!("{base}?model=A100&fresh=on")).await;
    assert_eq!(site_cells(&a100, "offers"), ["A100-SITE"]);
    assert!(a100.contains("value=\"A100\""), "the form keeps the filter");
    // Sites stay listed whatever the filter.
    assert_eq!(site_cells(&a100, "sites"), ["A100-SITE", "H100-SITE"]);

    let h100_four = page(format!("{base}?model=h100&min_gpus=4&vo=atlas")).await;
    assert_eq!(site_cells(&h100_four, "offers"), ["H100-SITE"]);

    let bad = page(format!("{base}?min_gpus=four")).await;
    assert!(bad.contains("class=\"problem\">minimum GPUs: \"four\" is not a number"));

    server.stop().unwrap();
}
