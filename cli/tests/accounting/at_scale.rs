//! The authenticated floods of issue #30 at its own scale, against `accelfed serve` as a process:
//! a site with a valid token sends 70,000 distinct VO names (which once made the public page
//! 47.8 MB) and pushes a document of 9,000 flavors (which added 5.2 MB to every `/offers`
//! answer). Past its month's `max_vos_per_month` (1,000) each record is refused alone; the
//! document is refused past `[registry] max_entities` and one of 4,000 flavors stored; the page
//! stays under the size docs/operations.md documents (1 MiB); `/offers` answers in pages; and the
//! service's resident memory is back within 50 MiB of where it started.

use std::time::Duration;

use bytes::Bytes;
use tonic::transport::Channel;

use accelfed_accounting::wire::encoded::{EncodedSubmitRequest, encode_record};
use accelfed_schemas::glue::Service;
use accelfed_schemas::glue::sample as glue_sample;
use accelfed_schemas::names::{LocalId, VoName};
use accelfed_schemas::render::json;
use accelfed_schemas::usage::sample;

use accelfed_tests::central::ServeProcess as Server;
use accelfed_tests::pki::pki;

const TOKEN: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
const SITE: &str = "CESNET-MCC";
const VOS: usize = 70_000;
const FLAVORS: usize = 9_000;
const STORED_FLAVORS: usize = 4_000;
/// What docs/operations.md promises for the public page, whatever sites send.
const PAGE_BYTES: usize = 1 << 20;

/// Records `from..to`, each of a VO of its own.
fn records_of_distinct_vos(from: usize, to: usize) -> EncodedSubmitRequest {
    let records = (from..to)
        .map(|n| {
            let mut record = sample::record(&format!("vm-{n}"));
            record.vo = Some(VoName::new(format!("invented-vo-{n:05}")).unwrap());
            Bytes::from(encode_record(&record))
        })
        .collect();
    EncodedSubmitRequest {
        records,
        spool_depth: None,
        ..EncodedSubmitRequest::default()
    }
}

/// Submits one request; the reason kinds of its outcomes ("" for stored).
async fn submit(channel: Channel, body: EncodedSubmitRequest) -> Vec<String> {
    let answer = super::flood::submit_as(channel, TOKEN, body).await.unwrap();
    answer
        .outcomes
        .into_iter()
        .map(|outcome| outcome.reason_kind)
        .collect()
}

/// The sample site with its cloud's one GPU flavor copied into `flavors` flavors.
fn document_of_many_flavors(flavors: usize) -> Vec<u8> {
    let mut snapshot = glue_sample::snapshot(SITE);
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            let flavor = cloud.instance_types[0].clone();
            cloud.instance_types = (0..flavors)
                .map(|n| {
                    let mut copy = flavor.clone();
                    copy.local_id = LocalId::new(format!("g1.a100x2-{n}")).unwrap();
                    copy
                })
                .collect();
        }
    }
    json::render(&snapshot)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seventy_thousand_vos_and_nine_thousand_flavors_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let config = super::flood::site_config(dir.path(), &pki, SITE, TOKEN);
    let server = Server::start(&config);
    let ca = std::fs::read(&pki.ca).unwrap();
    let channel = super::flood::channel(&server, &pki.ca, Duration::from_secs(120)).await;
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap();
    let get = |path: &str| {
        let request = http.get(format!("{}{path}", server.url()));
        async move {
            let answer = request.send().await.unwrap();
            assert_eq!(answer.status().as_u16(), 200, "GET {}", answer.url());
            let headers = answer.headers().clone();
            (headers, answer.bytes().await.unwrap())
        }
    };
    // What the service keeps first: one call, a document of 4,000 flavors (a flavor and its GPU
    // are two entities, under the 10,000 a document may hold) and one page, so the repository,
    // the registry's index, caches and buffers exist. The floods come after.
    assert_eq!(
        submit(channel.clone(), records_of_distinct_vos(0, 10)).await,
        vec![""; 10]
    );
    let push = |flavors: usize| {
        let request = http
            .put(format!("{}/registry/v1/document", server.url()))
            .bearer_auth(TOKEN)
            .body(document_of_many_flavors(flavors));
        async move {
            let answer = request.send().await.unwrap();
            (answer.status().as_u16(), answer.text().await.unwrap())
        }
    };
    let (status, reason) = push(STORED_FLAVORS).await;
    assert_eq!(status, 200, "{reason}");
    get("/").await;
    let before = server.resident_kib();

    // 70,000 VOs in seven calls of 10,000: the first 1,000 VOs of the month are stored, every
    // record after them refused alone.
    let mut stored = 10;
    let mut refused = 0;
    for call in 0..7 {
        let from = 10 + call * 10_000;
        let to = (from + 10_000).min(VOS);
        for kind in submit(channel.clone(), records_of_distinct_vos(from, to)).await {
            match kind.as_str() {
                "" => stored += 1,
                "bad_field" => refused += 1,
                other => panic!("unexpected refusal {other}"),
            }
        }
    }
    assert_eq!((stored, refused), (1_000, VOS - 1_000));
    // 9,000 flavors: past `[registry] max_entities`, refused naming it; the stored one stays.
    let (status, reason) = push(FLAVORS).await;
    assert_eq!(status, 413, "{reason}");
    assert!(reason.contains("[registry] max_entities"), "{reason}");
    let after_floods = server.resident_kib();

    // Eight anonymous loads of the page at once: each under the documented size.
    let pages = futures_util::future::join_all((0..8).map(|_| get("/"))).await;
    for (_, page) in &pages {
        assert!(page.len() < PAGE_BYTES, "the page is {} bytes", page.len());
    }
    let page = String::from_utf8_lossy(&pages[0].1);
    assert!(page.contains("others)"), "the VO chart adds up the rest");
    // /offers: every flavor counted, a page of 100 holds 100.
    let (headers, offers) = get("/registry/v1/offers?fresh=false&limit=100").await;
    let total: usize = headers["x-total-count"].to_str().unwrap().parse().unwrap();
    assert!(total >= STORED_FLAVORS, "{total} offers");
    let offers: serde_json::Value = serde_json::from_slice(&offers).unwrap();
    assert_eq!(offers["offers"].as_array().unwrap().len(), 100);
    assert!(headers.contains_key("link"));

    // Freed pages go back to the system while the service idles.
    let mut after = server.resident_kib();
    for _ in 0..50 {
        if after < before + 50 * 1024 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = server.resident_kib();
    }
    println!(
        "serve's resident memory: {before} KiB before, {after_floods} KiB after the records and \
         the push, {after} KiB at the end; page {} bytes",
        pages[0].1.len()
    );
    assert!(
        after < before + 50 * 1024,
        "resident memory settled at {after} KiB, more than 50 MiB above the {before} KiB before"
    );
}
