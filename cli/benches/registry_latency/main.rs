//! The registry's query latency at scale: 1,000 sites x 50 GPU flavors (plus each site's two batch
//! node types) in the index, the HTTPS API on loopback, 200 concurrent clients (one keep-alive TLS
//! connection each). A `cargo bench` target without a harness:
//!
//! `cargo bench --workspace --locked --bench registry_latency`
//!
//! Each query form is measured twice (see `loops`): closed loop (every client sends its next query
//! as soon as it has the answer: what the server sustains) and open loop (the clients together
//! send a fixed number of queries per second, latency counted from when each query was due). The
//! server runs on its own tokio runtime, the clients on another, both in this process; the
//! environment can change the split and the loads:
//!
//! * `ACCELFED_BENCH_SERVER_THREADS` (default 2), `ACCELFED_BENCH_CLIENT_THREADS` (default 2);
//! * `ACCELFED_BENCH_RATE` (default 2000): the open loop's offered load of the offers forms, q/s;
//! * `ACCELFED_BENCH_BROKER_RATE` (default 100): the broker form's (its answer is ~1,000 offers).
//!
//! The index is loaded once and no push comes during the queries, so the broker form is answered
//! from the offers kept for its question (a push or an offer expiry would select again); the
//! in-process figures show the selection's own cost.
//!
//! BENCHMARKS.md (## Registry) records the figures.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

mod loops;
use loops::PathOf;

use accelfed_central::auth::{TokenHash, Tokens};
use accelfed_central::registry::Registry;
use accelfed_central::registry::check::Checker;
use accelfed_central::registry::http::{ApiState, router};
use accelfed_central::registry::index::{BrokerRequest, Index, SiteView, answer};
use accelfed_central::registry::store::DocumentStore;
use accelfed_schemas::glue::{Service, sample};
use accelfed_schemas::gpu::{GpuCount, GpuModel};
use accelfed_schemas::names::{LocalId, SiteName, Text};
use accelfed_schemas::offer::Filter;
use accelfed_schemas::render::json;

const SITES: usize = 1_000;
const FLAVORS: usize = 50;
const CLIENTS: usize = 200;
const QUERIES_PER_CLIENT: usize = 50;

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

/// Each form's cost inside the server, without HTTP: selecting and writing the answer bytes.
fn direct_costs(index: &Index) {
    let now = chrono::Utc::now();
    let site_scoped = Filter {
        site: Some("SITE-0500".into()),
        model: Some("A100".into()),
        min_gpus: Some(GpuCount::whole(4)),
        vo: Some("atlas".into()),
        ..Filter::default()
    };
    let federation = Filter {
        model: Some("L40S".into()),
        min_gpus: Some(GpuCount::whole(8)),
        vo: Some("biomed".into()),
        min_free: Some(GpuCount::whole(1000)),
        ..Filter::default()
    };
    let broker = BrokerRequest {
        num_gpus: 8.0,
        gpu_model: Some("H100".into()),
        vo: Some("atlas".into()),
        ..BrokerRequest::default()
    };
    let time = |label: &str, run: &dyn Fn() -> usize| {
        let rounds = 2_000;
        let start = Instant::now();
        let mut bytes = 0;
        for _ in 0..rounds {
            bytes += run();
        }
        println!(
            "in-process {label}: {:.1} us per query ({} bytes)",
            start.elapsed().as_secs_f64() * 1e6 / rounds as f64,
            bytes / rounds
        );
    };
    time("site-scoped", &|| {
        answer(now, &index.select(&site_scoped, now)).len()
    });
    time("federation-wide", &|| {
        answer(now, &index.select(&federation, now)).len()
    });
    time("broker", &|| {
        answer(now, &index.broker_select(&broker, now)).len()
    });
    time("broker, selecting only", &|| {
        index.broker_select(&broker, now).len()
    });
    // What the HTTP API answers: the same question's offers kept while no offer changes freshness.
    time("broker, kept answer", &|| {
        index.broker_answer(&broker, now).len()
    });
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        bench_query_latency_1000_sites_200_clients();
    }
}

fn bench_query_latency_1000_sites_200_clients() {
    let server_threads = env_number("ACCELFED_BENCH_SERVER_THREADS", 2.0) as usize;
    let client_threads = env_number("ACCELFED_BENCH_CLIENT_THREADS", 2.0) as usize;
    let server_runtime = runtime(server_threads, "registry-server");
    let client_runtime = runtime(client_threads, "bench-client");
    let dir = tempfile::tempdir().unwrap();
    let pki_dir = tempfile::tempdir().unwrap();
    let pki = accelfed_tests::pki::pki(pki_dir.path());
    let (address, stop_tx, server) = server_runtime.block_on(async {
        let store = DocumentStore::open(dir.path().join("registry.sqlite").to_str().unwrap())
            .await
            .unwrap();
        let registry = Arc::new(
            Registry::open(store, Checker::new(64 << 20).unwrap(), 2)
                .await
                .unwrap(),
        );
        let loading = Instant::now();
        let mut swaps = Duration::ZERO;
        for site in 0..SITES {
            let (name, body) = document(site);
            registry
                .push(&name, &body, chrono::Utc::now())
                .await
                .unwrap();
            // What the index part of a push costs at this size: the site's view (offers, posting
            // lists, rendered answers) and the new index around it.
            if site + 1 == SITES {
                let parsed = accelfed_schemas::glue::from_json::parse(&body).unwrap();
                let start = Instant::now();
                let view = SiteView::new(name, chrono::Utc::now(), parsed);
                let _next = registry.index().with(view);
                swaps = start.elapsed();
            }
        }
        let offers: usize = registry
            .index()
            .sites()
            .iter()
            .map(|s| s.offers.len())
            .sum();
        println!(
            "loaded {SITES} sites, {offers} offers in {:.1} s (push = check + store + index swap); \
             the index part of one push at {SITES} sites: {:.2} ms",
            loading.elapsed().as_secs_f64(),
            swaps.as_secs_f64() * 1e3,
        );
        direct_costs(&registry.index());
        let acceptor = accelfed_central::listen::tls::acceptor(
            &std::fs::read(&pki.cert).unwrap(),
            &std::fs::read(&pki.key).unwrap(),
            b"http/1.1",
        )
        .unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let tokens = Tokens::new([(SiteName::new("X").unwrap(), TokenHash::of("x"))]);
        let app = router(ApiState {
            registry,
            tokens: Arc::new(tokens),
            max_body: 64 << 20,
            body_rate: Default::default(),
            site_max_body: Default::default(),
        });
        // Every client comes from 127.0.0.1: the per-address and per-network bounds are the
        // whole port's.
        let limits = accelfed_central::listen::ConnectionLimits {
            max_connections_per_address: 512,
            max_connections_per_network: 512,
            ..Default::default()
        };
        let connections = accelfed_central::listen::incoming(
            "https",
            listener,
            acceptor,
            accelfed_central::listen::Gate::new(limits),
            stop_rx,
        );
        let server = tokio::spawn(accelfed_central::registry::https::serve(
            connections,
            app,
            limits.idle_timeout(),
        ));
        (address, stop_tx, server)
    });
    let connector = loops::connector(&std::fs::read(&pki.ca).unwrap());
    println!(
        "server runtime {server_threads} threads, client runtime {client_threads} threads, \
         {} cores; {CLIENTS} clients",
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
    let _ = stop_tx.send(true);
    let _ = server_runtime.block_on(server);
}
