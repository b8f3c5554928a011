//! The registry's query latency at scale: 1,000 sites x 50 GPU flavors (plus each site's two batch
//! node types) in the index, the HTTPS API on loopback, 200 concurrent clients (one keep-alive TLS
//! connection each). A `cargo bench` target without a harness:
//!
//! `cargo bench -p accelfed --locked --bench registry_latency`
//!
//! The service is the whole of `accelfed serve`, started through `central::run` by the test
//! harness (`accelfed_tests::central::Server`: run's listeners, connection limits and
//! authentication, on a runtime of two worker threads), and the sites push their documents over
//! HTTPS with their own tokens, as `accelfed provide --publish registry` does. Each query form is
//! measured twice (see `loops`): closed loop (every client sends its next query as soon as it has
//! the answer: what the server sustains) and open loop (the clients together send a fixed number
//! of queries per second, latency counted from when each query was due). The clients run on a
//! runtime of their own in this process; the environment can change it and the loads:
//!
//! * `ACCELFED_BENCH_CLIENT_THREADS` (default 2);
//! * `ACCELFED_BENCH_RATE` (default 2000): the open loop's offered load of the offers forms, q/s;
//! * `ACCELFED_BENCH_BROKER_RATE` (default 100): the broker form's (its answer is ~1,000 offers).
//!
//! No push comes during the queries, so the broker form is answered from the offers kept for its
//! question (a push or an offer expiry would select again).
//!
//! BENCHMARKS.md (## Registry) records the figures.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod loops;
use loops::PathOf;

use accelfed_central::TokenHash;
use accelfed_publishers::registry;
use accelfed_schemas::glue::{Service, sample};
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{LocalId, Text};
use accelfed_schemas::render::json;
use accelfed_tests::central::{Server, sha256_hex};
use accelfed_tests::pki::PkiFiles;

const SITES: usize = 1_000;
const FLAVORS: usize = 50;
const CLIENTS: usize = 200;
const QUERIES_PER_CLIENT: usize = 50;

fn site_name(site: usize) -> String {
    format!("SITE-{site:04}")
}

/// A site's token, of `accelfed token`'s form (64 hex digits).
fn token(site: usize) -> String {
    sha256_hex(&site_name(site))
}

/// A site like the sample, its cloud with 50 GPU flavors: 1, 2, 4 or 8 GPUs of three models.
fn document(site: usize) -> Vec<u8> {
    let mut snapshot = sample::snapshot(&site_name(site));
    snapshot.creation_time = chrono::Utc::now();
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
    json::render(&snapshot)
}

/// central.toml: gRPC and the registry on free ports, the test PKI, SQLite in `dir`, the 1,000
/// sites with their tokens. Every client comes from 127.0.0.1, so the per-address and
/// per-network bounds are raised to hold the 200 clients (with room for the connections of the
/// previous loop still closing); the rest is the defaults.
fn central_config(dir: &Path, pki: &PkiFiles) -> PathBuf {
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\n\
         [listen.limits]\nmax_connections_per_address = 512\nmax_connections_per_network = 512\n\n\
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

fn env_number(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn runtime(threads: usize, name: &str) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name(name)
        .enable_all()
        .build()
        .unwrap()
}

/// A query form: its label, its request path for a query number, its open-loop load (q/s).
struct Form {
    label: &'static str,
    path: PathOf,
    rate: f64,
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        bench_query_latency_1000_sites_200_clients();
    }
}

fn bench_query_latency_1000_sites_200_clients() {
    let client_threads = env_number("ACCELFED_BENCH_CLIENT_THREADS", 2.0) as usize;
    let client_runtime = runtime(client_threads, "bench-client");
    let dir = tempfile::tempdir().unwrap();
    let pki = accelfed_tests::pki::pki(dir.path());
    let server = Server::start(&central_config(dir.path(), &pki));
    let url = server.url();
    let address = server.https.expect("the registry's address");
    let ca = std::fs::read(&pki.ca).unwrap();
    client_runtime.block_on(async {
        let client = registry::client(Some(&ca)).unwrap();
        let documents: Vec<Vec<u8>> = (0..SITES).map(document).collect();
        let loading = Instant::now();
        for (site, body) in documents.into_iter().enumerate() {
            registry::push(&client, &url, &token(site), body)
                .await
                .unwrap_or_else(|error| panic!("push of {}: {error}", site_name(site)));
        }
        let loaded = loading.elapsed();
        // A push that replaces a site at 1,000 sites, end to end: check, store, new index.
        let last = SITES - 1;
        let body = document(last);
        let replacing = Instant::now();
        registry::push(&client, &url, &token(last), body)
            .await
            .unwrap();
        println!(
            "pushed {SITES} sites over HTTPS one after another in {:.1} s; one replacing push at \
             {SITES} sites: {:.1} ms",
            loaded.as_secs_f64(),
            replacing.elapsed().as_secs_f64() * 1e3,
        );
    });
    let connector = loops::connector(&ca);
    println!(
        "server: the whole service through central::run (2 worker threads), client runtime \
         {client_threads} threads, {} cores; {CLIENTS} clients",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let offers_rate = env_number("ACCELFED_BENCH_RATE", 2000.0);
    let broker_rate = env_number("ACCELFED_BENCH_BROKER_RATE", 100.0);
    let forms = [
        Form {
            label: "site-scoped: site=S&model=A100&min_gpus=4&vo=atlas",
            path: |i| {
                format!(
                    "/registry/v1/offers?site=SITE-{:04}&model=A100&min_gpus=4&vo=atlas",
                    i % SITES
                )
            },
            rate: offers_rate,
        },
        Form {
            label: "federation-wide, selective: model=L40S&min_gpus=8&vo=biomed&min_free=1000",
            path: |_| {
                "/registry/v1/offers?model=L40S&min_gpus=8&vo=biomed&min_free=1000".to_owned()
            },
            rate: offers_rate,
        },
        Form {
            label: "broker: num_gpus=8&gpu_model=H100&vo=atlas (one flavor per site)",
            path: |_| "/registry/v1/broker?num_gpus=8&gpu_model=H100&vo=atlas".to_owned(),
            rate: broker_rate,
        },
    ];
    client_runtime.block_on(async {
        for form in &forms {
            let connect = || async {
                let mut clients = Vec::with_capacity(CLIENTS);
                for _ in 0..CLIENTS {
                    clients.push(loops::Connection::open(address, &connector).await);
                }
                clients
            };
            let mut probe = connect().await.pop().unwrap();
            let bytes = probe.query(&(form.path)(0)).await;
            println!("{}: answer {bytes} bytes", form.label);
            let closed = loops::closed(connect().await, form.path, QUERIES_PER_CLIENT).await;
            println!("  closed loop: {}", closed.summary());
            // As many queries as the closed loop, but no longer than 10 s (the broker's low load).
            let duration = Duration::from_secs_f64(
                ((CLIENTS * QUERIES_PER_CLIENT) as f64 / form.rate).min(10.0),
            );
            let open = loops::open(connect().await, form.path, form.rate, duration).await;
            println!(
                "  open loop at {:.0} q/s offered: {}",
                form.rate,
                open.summary()
            );
        }
    });
    server.stop().unwrap();
}
