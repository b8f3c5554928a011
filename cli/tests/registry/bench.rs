//! The registry's query latency at scale: 1,000 sites x 50 GPU flavors (plus each site's two batch
//! node types) in the index, the HTTPS API on loopback, 200 concurrent clients (one connection
//! each, keep-alive). Not a timed test: it is ignored and run explicitly, in release mode:
//!
//! `cargo test --release --workspace --locked --test registry -- --ignored --nocapture bench_`
//!
//! It prints the latency percentiles per query form; BENCHMARKS.md (## Registry) records them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use accelfed_central::auth::{TokenHash, Tokens};
use accelfed_central::registry::check::Checker;
use accelfed_central::registry::http::{ApiState, router};
use accelfed_central::registry::registry::Registry;
use accelfed_central::registry::store::DocumentStore;
use accelfed_schemas::glue::{Service, sample};
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{LocalId, SiteName, Text};
use accelfed_schemas::render::json;

const SITES: usize = 1_000;
const FLAVORS: usize = 50;
const CLIENTS: usize = 200;
const QUERIES_PER_CLIENT: usize = 50;

/// A query form: its label and the request path for a query number.
type Form = (&'static str, fn(usize) -> String);

/// A site like the sample, its cloud with 50 GPU flavors: 1, 2, 4 or 8 GPUs of three models.
fn document(site: usize) -> (String, Vec<u8>) {
    let name = format!("SITE-{site:04}");
    let mut snapshot = sample::snapshot(&name);
    let models = [
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA L40S",
    ];
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            let base = cloud.instance_types[0].clone();
            cloud.instance_types = (0..FLAVORS)
                .map(|j| {
                    let mut flavor = base.clone();
                    let id = format!("g{j}.x{}", 1 << (j % 4));
                    flavor.local_id = LocalId::new(id.clone()).expect("valid id");
                    flavor.name = Text::new(id).expect("valid name");
                    flavor.cpu = 8 * (1 << (j % 4));
                    if let Some(accelerator) = &mut flavor.accelerator {
                        accelerator.count = GpuCount::whole(1 << (j % 4));
                        accelerator.gpu.model =
                            GpuModel::new(models[(site + j) % 3]).expect("valid model");
                    }
                    flavor
                })
                .collect();
        }
    }
    (name, json::render(&snapshot))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[test]
#[ignore = "a benchmark: run explicitly in release mode (see the file's header)"]
fn bench_query_latency_1000_sites_200_clients() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let store = DocumentStore::open(dir.path().join("registry.sqlite").to_str().unwrap())
            .await
            .unwrap();
        let registry = Arc::new(
            Registry::open(store, Checker::new(64 << 20).unwrap(), 2)
                .await
                .unwrap(),
        );
        let loading = Instant::now();
        for site in 0..SITES {
            let (name, body) = document(site);
            registry.push(&name, &body, chrono::Utc::now()).await.unwrap();
        }
        let offers: usize = registry.index().sites().iter().map(|s| s.offers.len()).sum();
        println!(
            "loaded {SITES} sites, {offers} offers in {:.1} s (push = check + store + index swap)",
            loading.elapsed().as_secs_f64()
        );

        let pki_dir = tempfile::tempdir().unwrap();
        let pki = super::harness::pki(pki_dir.path());
        let acceptor = accelfed_central::registry::https::acceptor(
            &std::fs::read(&pki.cert).unwrap(),
            &std::fs::read(&pki.key).unwrap(),
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let tokens = Tokens::new([(SiteName::new("X").unwrap(), TokenHash::of("x"))]);
        let app = router(ApiState {
            registry,
            tokens: Arc::new(tokens),
            max_body: 64 << 20,
        });
        let server = tokio::spawn(accelfed_central::registry::https::serve(
            listener, acceptor, app, stop_rx,
        ));
        let ca = std::fs::read(&pki.ca).unwrap();
        let url = format!("https://localhost:{port}");

        let forms: [Form; 3] = [
            ("site-scoped: site=S&model=A100&min_gpus=4&vo=atlas", |i| {
                format!("/registry/v1/offers?site=SITE-{:04}&model=A100&min_gpus=4&vo=atlas", i % SITES)
            }),
            ("federation-wide, selective: model=L40S&min_gpus=8&vo=biomed&min_free=1000", |_| {
                "/registry/v1/offers?model=L40S&min_gpus=8&vo=biomed&min_free=1000".to_owned()
            }),
            ("broker: num_gpus=8&gpu_model=H100&vo=atlas (one flavor per site, ~1000 offers)", |_| {
                "/registry/v1/broker?num_gpus=8&gpu_model=H100&vo=atlas".to_owned()
            }),
        ];
        for (label, path) in forms {
            let mut tasks = Vec::new();
            for client_index in 0..CLIENTS {
                let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
                let url = url.clone();
                tasks.push(tokio::spawn(async move {
                    let mut latencies = Vec::with_capacity(QUERIES_PER_CLIENT);
                    // One warm-up call opens the connection (TLS handshake not measured).
                    accelfed_publishers::registry::get(&client, &url, &path(client_index), &[])
                        .await
                        .unwrap();
                    for query in 0..QUERIES_PER_CLIENT {
                        let target = path(client_index * QUERIES_PER_CLIENT + query);
                        let start = Instant::now();
                        let body = accelfed_publishers::registry::get(&client, &url, &target, &[])
                            .await
                            .unwrap();
                        latencies.push(start.elapsed());
                        assert!(body.starts_with("{\"generated_at\""));
                    }
                    latencies
                }));
            }
            let started = Instant::now();
            let mut all = Vec::new();
            for task in tasks {
                all.extend(task.await.unwrap());
            }
            let wall = started.elapsed();
            all.sort();
            println!(
                "{label}: {} queries, {CLIENTS} clients, {:.0} queries/s, p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                all.len(),
                all.len() as f64 / wall.as_secs_f64(),
                percentile(&all, 0.50).as_secs_f64() * 1e3,
                percentile(&all, 0.90).as_secs_f64() * 1e3,
                percentile(&all, 0.99).as_secs_f64() * 1e3,
                all.last().unwrap().as_secs_f64() * 1e3,
            );
        }
        let _ = stop_tx.send(true);
        let _ = server.await;
    });
}
