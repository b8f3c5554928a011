//! The web page's three answers in headless Chromium (Debian `chromium`), against the whole
//! service as `accelfed serve` assembles it:
//!
//! * where GPUs are free: the federation's free and total physical GPUs equal the totals worked
//!   out by hand from the test sites' documents, with a pool that two flavors share counted once
//!   and the stale site's GPUs apart;
//! * who used them: 50 VOs over 36 months draw a chart whose month labels do not overlap (their
//!   bounding boxes, as Chromium laid them out), a dozen colours and the rest, and whose CSV
//!   download is byte for byte what `accelfed report --format csv` prints for the same grouping;
//! * what sat idle: the idle GPU-hours of the VOs whose records report their active time;
//! * what a VO can get under its quotas: with 3 GPUs of quota headroom on a pool of 5 free, the
//!   VO's free count is the smaller, and the 4-GPU flavor is not offered to it;
//! * capacity and occupancy over time: the first and last rows of the charts' tables equal what
//!   the test's two pushes of the A100 site said, the stale site's GPUs counted apart.
//!
//! Screenshots of the pages are kept under the test's target directory (the path is printed).
//! Chromium runs through `accelfed_tests::browser`, as in `registry_web.rs` (its own temporary
//! profile, the test CA's certificate errors ignored). The boxes are measured in a copy of the
//! served page with a measuring script added, loaded from a file: the served page itself allows
//! no script.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_publishers::registry;
use accelfed_schemas::glue::Service;
use accelfed_schemas::glue::sample::snapshot;
use accelfed_schemas::gpu::{Capacity, GpuCount};
use accelfed_schemas::names::{LocalId, SiteName, VoName};
use accelfed_schemas::render::json;
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::browser::{page as load, screenshot, screenshots, web_service};
use chrono::{Datelike, Duration, Utc};

const A100_TOKEN: &str = "a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100a100";
const H100_TOKEN: &str = "4100410041004100410041004100410041004100410041004100410041004100";
const SITES: [&str; 3] = ["A100-SITE", "H100-SITE", "CESNET-MCC"];

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
/// A100s (`g1.a100x4` beside `g1.a100x2`), `cloud_used` of the pool's 8 in use, and the atlas
/// project's quota of 4 GPUs with 1 used (3 of headroom).
fn a100_document(cloud_used: u32) -> Vec<u8> {
    let mut site = snapshot("A100-SITE");
    site.creation_time = Utc::now();
    let whole = GpuCount::whole;
    for service in &mut site.services {
        if let Service::Cloud(cloud) = service {
            cloud.manager.accelerators[0].capacity =
                Capacity::from_usage(whole(8), whole(cloud_used), whole(0)).unwrap();
            cloud.shares[0].accelerators[0].capacity =
                Capacity::from_usage(whole(4), whole(1), whole(0)).unwrap();
            let mut four = cloud.instance_types[0].clone();
            four.local_id = LocalId::new("g1.a100x4").unwrap();
            four.name = accelfed_schemas::names::Text::new("g1.a100x4").unwrap();
            if let Some(accelerator) = &mut four.accelerator {
                accelerator.count = GpuCount::whole(4);
            }
            cloud.instance_types.push(four);
        }
    }
    json::render(&site)
}

/// The `free`, `total` and `stale` cells of the first and last rows of every capacity table but
/// those of `leave_out` models: (first row, last row), each (free, total, at stale sites).
fn capacity_rows(dom: &str, leave_out: &str) -> ((f64, f64, f64), (f64, f64, f64)) {
    let cell = |row: &str, class: &str| -> f64 {
        let start = row
            .find(&format!("class=\"n {class}\">"))
            .unwrap_or_else(|| panic!("no {class} in {row}"));
        let rest = &row[start..];
        let open = rest.find('>').unwrap() + 1;
        rest[open..open + rest[open..].find('<').unwrap()]
            .parse()
            .unwrap()
    };
    let mut sums = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0));
    for table in dom.split("<table class=\"capacity\"").skip(1) {
        let table = &table[..table.find("</table>").unwrap()];
        if table[..table.find('>').unwrap()].contains(leave_out) {
            continue;
        }
        let body = &table[table.find("<tbody>").unwrap()..];
        let rows: Vec<&str> = body.split("<tr>").skip(1).collect();
        for (sum, row) in [(&mut sums.0, rows[0]), (&mut sums.1, rows[rows.len() - 1])] {
            sum.0 += cell(row, "free");
            sum.1 += cell(row, "total");
            sum.2 += cell(row, "stale");
        }
    }
    sums
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_answers_where_who_and_idle_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    usage(&database).await;
    let (server, pki) = web_service(
        dir.path(),
        &database,
        &[("A100-SITE", A100_TOKEN), ("H100-SITE", H100_TOKEN)],
    );
    let client = registry::client(Some(pki.ca_pem.as_bytes())).unwrap();
    let url = server.url();
    // The A100 site pushes twice: 6 of its cloud's 8 GPUs in use, then 3.
    registry::push(&client, &url, A100_TOKEN, a100_document(6))
        .await
        .unwrap();
    registry::push(&client, &url, A100_TOKEN, a100_document(3))
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
    let page = load(base.clone()).await;

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
    let boxes = load(format!("file://{}", measured.display())).await;
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
    let vo_page = load(format!("{base}?vo=atlas")).await;
    assert!(vo_page.contains("<h1>VO atlas</h1>"));
    assert!(vo_page.contains("What VO atlas can get under its quotas"));
    // atlas's project has 3 GPUs of quota headroom on the cloud's pool of 5 free: it gets 3, and
    // the batch side's as before (6 and the MIG slots' 3 x 3/7), the smaller of each.
    let vo_free = 3.0 + 6.0 + 3.0 * 3.0 / 7.0;
    let vo_cards = section(&vo_page, "free-vo", "</section>");
    assert!(
        vo_cards.contains(&format!(">{vo_free:.3}<")),
        "atlas should get {vo_free:.3}: {vo_cards}"
    );
    // The 2-GPU flavor fits the headroom, the 4-GPU one does not and is not offered.
    let vo_offers = section(&vo_page, "offers", "</table>");
    assert!(vo_offers.contains("g1.a100x2"), "{vo_offers}");
    assert!(!vo_offers.contains("g1.a100x4"), "{vo_offers}");

    // Capacity over time, against the pushes: the first instant is the A100 site's first push
    // (2 of the cloud's 8 free), the last is now (5 free); the stale H100 site apart, in the last.
    let (first, last) = capacity_rows(&page, "H100");
    let first_free = 2.0 + 6.0 + 3.0 * 3.0 / 7.0;
    let round = |v: f64| (v * 1000.0).round() / 1000.0;
    assert_eq!(
        (round(first.0), round(first.1), first.2),
        (round(first_free), round(total), 0.0)
    );
    assert_eq!((round(last.0), round(last.1)), (round(free), round(total)));
    let (_, stale_last) = capacity_rows(&page, "A100");
    assert_eq!(
        round(stale_last.2),
        round(total),
        "the stale H100 site's GPUs"
    );
    assert!(page.contains("id=\"capacity-0\""), "no capacity chart");

    let shots = screenshots(env!("CARGO_TARGET_TMPDIR"));
    let (first, second, third) = (
        base.clone(),
        format!("{base}?site=A100-SITE"),
        format!("{base}?vo=atlas"),
    );
    tokio::task::spawn_blocking(move || {
        screenshot(&first, &shots.join("federation.png"), 4200);
        screenshot(&second, &shots.join("site.png"), 3000);
        screenshot(&third, &shots.join("vo.png"), 3000);
    })
    .await
    .unwrap();
    server.stop().unwrap();
}
