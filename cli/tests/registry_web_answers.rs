//! The web page's three answers in headless Chromium (Debian `chromium`), against the whole
//! service as `accelfed serve` assembles it:
//!
//! * where GPUs are free: the federation's free and total physical GPUs equal the totals worked
//!   out by hand from the test sites' documents, with a pool that two flavors share counted once
//!   and the stale site's GPUs apart;
//! * who used them: 50 VOs over 36 months draw a chart whose month labels do not overlap (their
//!   bounding boxes, as Chromium laid them out), a dozen colours and the rest, and whose CSV
//!   download is byte for byte what `accelfed report --format csv` prints for the same grouping;
//! * what sat idle: the idle GPU-hours of the VOs whose records report their active time.
//!
//! Screenshots of the pages are kept under the test's target directory (the path is printed).
//! Chromium runs as in `registry_web.rs` (its own temporary profile, the test CA's certificate
//! errors ignored). The boxes are measured in a copy of the served page with a measuring script
//! added, loaded from a file: the served page itself allows no script.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_central::TokenHash;
use accelfed_publishers::registry;
use accelfed_schemas::glue::Service;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::names::{LocalId, SiteName, VoName};
use accelfed_schemas::render::json;
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::central::Server;
use chrono::{Datelike, Duration, Utc};

const CHROMIUM: &str = "/usr/bin/chromium";
const A100_TOKEN: &str = "a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100";
const H100_TOKEN: &str = "4100410041004100410041004100410041004100410041004100410041004100";
const SITES: [&str; 3] = ["A100-SITE", "H100-SITE", "CESNET-MCC"];

fn chromium(args: &[String]) -> String {
    if !Path::new(CHROMIUM).exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{CHROMIUM} is missing and CI=true: apt-get install -y chromium (scripts/test does)"
        );
        let missing = || (!Path::new(CHROMIUM).exists()).then(|| CHROMIUM.to_owned());
        accelfed_tests::apt::install(&["chromium"], missing).unwrap();
    }
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--ignore-certificate-errors",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .expect("running chromium");
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn dom(url: &str) -> String {
    let text = chromium(&["--dump-dom".to_owned(), url.to_owned()]);
    assert!(text.contains("</html>"), "no page at {url}: {text}");
    text
}

/// A full-page screenshot of `url` at `path`.
fn screenshot(url: &str, path: &Path, height: u32) {
    chromium(&[
        format!("--window-size=1280,{height}"),
        format!("--screenshot={}", path.display()),
        url.to_owned(),
    ]);
    assert!(path.exists(), "no screenshot at {}", path.display());
    println!("screenshot: {}", path.display());
}

/// The text of the element with `id` (its first text node after the start tag).
fn text_of(dom: &str, id: &str) -> String {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let rest = &dom[start..];
    let open = rest.find('>').unwrap() + 1;
    rest[open..open + rest[open..].find('<').unwrap()].to_owned()
}

/// The inner HTML of the element with `id` up to the first `end`.
fn section<'d>(dom: &'d str, id: &str, end: &str) -> &'d str {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let rest = &dom[start..];
    &rest[..rest.find(end).unwrap()]
}

/// 50 VOs over the 36 months up to the one three days ago (the running month on most days), at
/// three sites; every third VO's records report their active time, half of it.
async fn usage(path: &Path) {
    let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
    let last = Utc::now() - Duration::days(3);
    let last = last.year() * 12 + last.month0() as i32;
    let months: Vec<Month> = (0..36)
        .map(|back| Month::new((last - back) / 12, ((last - back) % 12) as u32 + 1).unwrap())
        .collect();
    for (index, site) in SITES.iter().enumerate() {
        let mut batch: Vec<Submission> = Vec::new();
        for vo in (0..50).filter(|vo| vo % SITES.len() == index) {
            for month in &months {
                let hours = 1 + vo as u64;
                let mut r = sample::record(&format!("vm-{vo}-{month}"));
                r.site = SiteName::new(site).unwrap();
                r.vo = Some(VoName::new(format!("vo{vo:02}")).unwrap());
                r.month = *month;
                r.first_seen = month.start();
                r.available_duration = hours * 3_600;
                r.active_duration = (vo % 3 == 0).then_some(hours * 1_800);
                r.last_seen = r.first_seen + Duration::hours(hours as i64);
                batch.push(r.into());
            }
        }
        let count = batch.len();
        let options = IngestOptions {
            max_batch: 10_000,
            now: Utc::now(),
        };
        let report = repo
            .ingest(&SiteName::new(site).unwrap(), batch, options)
            .await
            .unwrap();
        assert_eq!(report.outcomes, vec![Outcome::Stored; count]);
    }
}

/// The sample site's document, gathered now, with a second flavor on the cloud's one pool of
/// A100s (`g1.a100x4` beside `g1.a100x2`).
fn a100_document() -> Vec<u8> {
    let mut site = snapshot("A100-SITE");
    site.creation_time = Utc::now();
    for service in &mut site.services {
        if let Service::Cloud(cloud) = service {
            let mut four = cloud.instance_types[0].clone();
            four.local_id = LocalId::new("g1.a100x4").unwrap();
            four.name = accelfed_schemas::names::Text::new("g1.a100x4").unwrap();
            cloud.instance_types.push(four);
        }
    }
    json::render(&site)
}

fn screenshots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("registry-web-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_answers_where_who_and_idle_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    usage(&database).await;
    let pki = accelfed_tests::pki::Pki::generate();
    std::fs::write(dir.path().join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), &pki.key_pem).unwrap();
    let config = dir.path().join("central.toml");
    std::fs::write(
        &config,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
             [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
             [database]\npath = \"{}\"\n\
             [sites.A100-SITE]\ntoken_sha256 = \"{}\"\n\
             [sites.H100-SITE]\ntoken_sha256 = \"{}\"\n",
            database.display(),
            TokenHash::of(A100_TOKEN).to_hex(),
            TokenHash::of(H100_TOKEN).to_hex()
        ),
    )
    .unwrap();
    let server = Server::start(&config);
    let client = registry::client(Some(pki.ca_pem.as_bytes())).unwrap();
    let url = server.url();
    registry::push(&client, &url, A100_TOKEN, a100_document())
        .await
        .unwrap();
    // The H100 site's document is the sample's, gathered long ago: stale.
    let h100 = String::from_utf8(json::render(&snapshot("H100-SITE")))
        .unwrap()
        .replace("A100", "H100");
    registry::push(&client, &url, H100_TOKEN, h100.into_bytes())
        .await
        .unwrap();
    let base = format!("{}/", url.trim_end_matches('/'));
    let page = {
        let url = base.clone();
        tokio::task::spawn_blocking(move || dom(&url))
            .await
            .unwrap()
    };

    // Where: the A100 site's pools, worked out from the sample: the cloud's 8 A100s, 5 free (its
    // two flavors draw on them: once), the batch node type's 16, 6 free, and the MIG node type's
    // 4 slots of 3g.40gb on 7-slice GPUs (4 x 3/7 GPUs), 3 free.
    let (free, total) = (5.0 + 6.0 + 3.0 * 3.0 / 7.0, 8.0 + 16.0 + 4.0 * 3.0 / 7.0);
    assert_eq!(text_of(&page, "free-all"), format!("{free:.3}"));
    assert_eq!(text_of(&page, "total-all"), format!("{total:.3}"));
    let federation = section(&page, "free-federation", "</div></div></div>");
    assert!(!federation.contains("H100"), "a stale site in the totals");
    assert!(section(&page, "free-stale", "</section>").contains("H100"));
    // Both flavors are listed, on one pool.
    let offers = section(&page, "offers", "</table>");
    assert!(offers.contains("g1.a100x2") && offers.contains("g1.a100x4"));

    // Who: 12 VOs by name and the other 38 as one, each colour once; months labelled apart.
    let table = section(&page, "usage-vo", "</table>");
    assert_eq!(table.matches("<tr class=\"series\">").count(), 13);
    assert!(table.contains("(38 others)"));
    let chart = section(&page, "chart-vo", "</svg>");
    assert_eq!(chart.matches("class=\"bar\"").count(), 36);
    let measured = dir.path().join("measure.html");
    std::fs::write(
        &measured,
        page.replace(
            "</body>",
            "<script>const b=[...document.querySelectorAll('#chart-vo .month-label')]\
             .map(t=>{const r=t.getBoundingClientRect();return [r.left,r.right,r.top,r.bottom]});\
             const p=document.createElement('pre');p.id='boxes';p.textContent=JSON.stringify(b);\
             document.body.appendChild(p);</script></body>",
        ),
    )
    .unwrap();
    let boxes = {
        let url = format!("file://{}", measured.display());
        tokio::task::spawn_blocking(move || dom(&url))
            .await
            .unwrap()
    };
    let boxes: Vec<[f64; 4]> = serde_json::from_str(&text_of(&boxes, "boxes")).unwrap();
    assert!(boxes.len() >= 10, "only {} month labels", boxes.len());
    for pair in boxes.windows(2) {
        assert!(pair[0][1] <= pair[1][0], "month labels overlap: {pair:?}");
        assert!(pair[0][1] > pair[0][0], "an empty label: {pair:?}");
    }

    // The CSV under the chart is `accelfed report`'s.
    let href = section(&page, "csv-vo", ">")
        .split("href=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&");
    assert!(
        href.starts_with("/accounting/v1/report?by=vo,month"),
        "{href}"
    );
    let downloaded = client
        .http()
        .get(format!("{}{href}", url.trim_end_matches('/')))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let printed = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(["report", "--database", database.to_str().unwrap()])
        .args(["--by", "vo,month", "--format", "csv"])
        .env_remove("ACCELFED_DATABASE")
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    assert_eq!(downloaded, String::from_utf8(printed.stdout).unwrap());
    assert!(downloaded.lines().count() > 50 * 36);

    // Idle: vo00 and every third VO report activity, half of it idle.
    let idle = section(&page, "idle-vo", "</table>");
    assert!(idle.contains(">vo48<"), "{idle}");
    assert!(!idle.contains(">vo49<"), "{idle}");
    // vo48: 36 months of 49 GPU-hours, half idle.
    assert!(
        idle.contains(&format!(">{:.1}<", 36.0 * 49.0 / 2.0)),
        "{idle}"
    );

    // A VO's page: its quota answer and its usage per site.
    let vo_page = {
        let url = format!("{base}?vo=atlas");
        tokio::task::spawn_blocking(move || dom(&url))
            .await
            .unwrap()
    };
    assert!(vo_page.contains("<h1>VO atlas</h1>"));
    assert!(vo_page.contains("What VO atlas can get under its quotas"));

    let shots = screenshots();
    let (first, second) = (base.clone(), format!("{base}?site=A100-SITE"));
    tokio::task::spawn_blocking(move || {
        screenshot(&first, &shots.join("federation.png"), 4200);
        screenshot(&second, &shots.join("site.png"), 3000);
    })
    .await
    .unwrap();
    server.stop().unwrap();
}
