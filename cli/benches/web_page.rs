//! The web page at 1,000 sites: `GET /` (the federation), `GET /?vo=vo07` (a VO's page with its
//! quota answer) and `GET /?site=SITE-0001` (a site's page) over HTTPS from the whole service as
//! `accelfed serve` assembles it, one request at a time on one keep-alive connection, timed from
//! the request to the last byte of the page: built (a site pushed just before, so the page is built
//! anew) and kept (served again from the page cache, `central/src/registry/web/page_cache.rs`).
//!
//! Each site is the sample site with 10 GPU flavors on its cloud's one pool of A100s, H100s or
//! L40S (its two batch node types beside), 12,000 offers in all; the accounting repository holds 50
//! VOs over 36 months at the 1,000 sites (1,800 records), so every chart is drawn. Results in
//! BENCHMARKS.md ("Web page").

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::Submission;
use accelfed_central::TokenHash;
use accelfed_publishers::registry;
use accelfed_schemas::glue::Service;
use accelfed_schemas::glue::sample;
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{LocalId, SiteName, Text, VoName};
use accelfed_schemas::render::json;
use accelfed_schemas::usage::{Month, sample as usage_sample};
use accelfed_tests::central::Server;
use accelfed_tests::pki::PkiFiles;
use chrono::{Datelike, Utc};

const SITES: usize = 1_000;
const FLAVORS: usize = 10;
const ROUNDS: usize = 50;

fn site_name(site: usize) -> String {
    format!("SITE-{site:04}")
}

fn token(site: usize) -> String {
    format!("{:064x}", site + 1)
}

/// The sample site with `FLAVORS` flavors of 1, 2, 4 or 8 GPUs on its cloud's one pool.
fn document(site: usize) -> Vec<u8> {
    let mut snapshot = sample::snapshot(&site_name(site));
    snapshot.creation_time = Utc::now();
    let models = [
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA L40S",
    ];
    let model = GpuModel::new(models[site % 3]).unwrap();
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            for accelerator in &mut cloud.manager.accelerators {
                accelerator.gpu.model = model.clone();
            }
            for share in &mut cloud.shares {
                for accelerator in &mut share.accelerators {
                    accelerator.gpu.model = model.clone();
                }
            }
            let base = cloud.instance_types[0].clone();
            cloud.instance_types = (0..FLAVORS)
                .map(|j| {
                    let mut flavor = base.clone();
                    let id = format!("g{j}.x{}", 1 << (j % 4));
                    flavor.local_id = LocalId::new(id.clone()).unwrap();
                    flavor.name = Text::new(id).unwrap();
                    if let Some(accelerator) = &mut flavor.accelerator {
                        accelerator.count = GpuCount::whole(1 << (j % 4));
                        accelerator.gpu.model = model.clone();
                    }
                    flavor
                })
                .collect();
        }
    }
    json::render(&snapshot)
}

fn central_config(dir: &Path, pki: &PkiFiles) -> PathBuf {
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\n\
         [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n\n[database]\npath = \"{}\"\n",
        pki.cert.display(),
        pki.key.display(),
        dir.join("accounting.sqlite").display(),
    );
    for site in 0..SITES {
        text.push_str(&format!(
            "\n[sites.{}]\ntoken_sha256 = \"{}\"\n",
            site_name(site),
            TokenHash::of(&token(site)).to_hex()
        ));
    }
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// 50 VOs over 36 months, each VO's records at one of the sites.
async fn usage(path: &Path) {
    let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
    let now = Utc::now() - chrono::Duration::days(3);
    let last = now.year() * 12 + now.month0() as i32;
    for vo in 0..50usize {
        let site = SiteName::new(site_name(vo * 17 % SITES)).unwrap();
        let batch: Vec<Submission> = (0..36)
            .map(|back| {
                let month =
                    Month::new((last - back) / 12, ((last - back) % 12) as u32 + 1).unwrap();
                let mut r = usage_sample::record(&format!("vm-{vo}-{month}"));
                r.site = site.clone();
                r.vo = Some(VoName::new(format!("vo{vo:02}")).unwrap());
                r.month = month;
                r.first_seen = month.start();
                r.available_duration = 3_600 * (1 + vo as u64);
                r.last_seen = r.first_seen + chrono::Duration::hours(1 + vo as i64);
                r.into()
            })
            .collect();
        let options = IngestOptions {
            max_batch: 100,
            now: Utc::now(),
        };
        repo.ingest(&site, batch, options).await.unwrap();
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index].as_secs_f64() * 1e3
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pki = accelfed_tests::pki::pki(dir.path());
    runtime.block_on(usage(&dir.path().join("accounting.sqlite")));
    let server = Server::start(&central_config(dir.path(), &pki));
    let url = server.url();
    let ca = std::fs::read(&pki.ca).unwrap();
    runtime.block_on(async {
        let client = registry::client(Some(&ca)).unwrap();
        for site in 0..SITES {
            registry::push(&client, &url, &token(site), document(site))
                .await
                .unwrap();
        }
        let base = url.trim_end_matches('/').to_owned();
        // Each page twice: built (a site pushes again before each request, untimed, so the
        // page kept from the last request is of an old index) and served again (kept).
        for (label, path) in [
            ("federation", "/"),
            ("VO page", "/?vo=vo07"),
            ("site page", "/?site=SITE-0001"),
        ] {
            for built in [true, false] {
                let mut times = Vec::with_capacity(ROUNDS);
                let mut bytes = 0;
                for round in 0..=ROUNDS {
                    if built {
                        let site = round % SITES;
                        registry::push(&client, &url, &token(site), document(site))
                            .await
                            .unwrap();
                    }
                    let started = Instant::now();
                    let response = client
                        .http()
                        .get(format!("{base}{path}"))
                        .send()
                        .await
                        .unwrap();
                    assert!(
                        response.status().is_success(),
                        "{label}: {}",
                        response.status()
                    );
                    bytes = response.bytes().await.unwrap().len();
                    // The first request warms the connection and the caches.
                    if round > 0 {
                        times.push(started.elapsed());
                    }
                }
                times.sort();
                println!(
                    "{label:<10} {}: {SITES} sites: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms, {} kB",
                    if built { "built" } else { "kept " },
                    percentile(&times, 0.5),
                    percentile(&times, 0.99),
                    percentile(&times, 1.0),
                    bytes / 1024,
                );
            }
        }
    });
    server.stop().unwrap();
}
