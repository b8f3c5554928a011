//! A crowd at the port limit (issue #30): 16 loopback addresses (127.0.0.2 to 127.0.0.17, which
//! Linux routes to lo like 127.0.0.1) keep 64 connections each way to the gRPC and the registry's
//! HTTPS ports, twice what a port holds, reconnecting as soon as one is closed, and each saying
//! half a TLS record and then nothing. Meanwhile, five times, a site ships records with `ship`'s
//! own client and a user asks the registry for its sites: both are answered within 2 s every time,
//! because a newcomer holding fewer connections than the crowd's addresses takes the place of one
//! of theirs (`listen::gate`). The whole service runs in-process through `accelfed_central::run`.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio::task::JoinHandle;

use accelfed_accounting::spool::Spool;
use accelfed_central::TokenHash;
use accelfed_schemas::usage::sample;
use accelfed_tests::central::{Server, ship_once};
use accelfed_tests::pki::Pki;

const TOKEN: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
const MAX_CONNECTIONS: usize = 32;
const MAX_PER_ADDRESS: usize = 8;
/// Connections each crowd address keeps trying to hold on each port.
const PER_ADDRESS: usize = 4;
const ROUNDS: usize = 5;
const WITHIN: Duration = Duration::from_secs(2);

/// Log lines, as the service writes them.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn configuration(dir: &std::path::Path, pki: &Pki) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\
         [listen.limits]\nmax_connections = {MAX_CONNECTIONS}\n\
         max_connections_per_address = {MAX_PER_ADDRESS}\n\
         max_connections_per_network = {MAX_CONNECTIONS}\nreserved_for_sites = 8\n\
         handshake_timeout_s = 2\nidle_timeout_s = 5\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [sites.CESNET-MCC]\ntoken_sha256 = \"{}\"\n",
        TokenHash::of(TOKEN).to_hex()
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One member of the crowd: connects from `source`, sends half a TLS record, waits until the
/// service closes the connection, and again, until `stop`; counts its connections.
fn member(
    source: String,
    to: SocketAddr,
    stop: Arc<AtomicBool>,
    connections: Arc<AtomicU64>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut buffer = [0u8; 64];
        while !stop.load(Ordering::Relaxed) {
            let socket = TcpSocket::new_v4().unwrap();
            socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
            if let Ok(mut stream) = socket.connect(to).await {
                connections.fetch_add(1, Ordering::Relaxed);
                if stream.write_all(&[0x16, 0x03, 0x01, 0x02]).await.is_ok() {
                    // Until closed (end of file or an error), looking at `stop` now and then.
                    loop {
                        let read = tokio::time::timeout(
                            Duration::from_millis(200),
                            stream.read(&mut buffer),
                        )
                        .await;
                        if matches!(read, Ok(Ok(0) | Err(_))) || stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// Ships five new records from a fresh spool and client (a new connection), and times it.
async fn ship_round(dir: &std::path::Path, server: &Server, pki: &Pki, round: usize) -> Duration {
    let mut spool = Spool::open(dir.join(format!("spool-{round}.sqlite"))).unwrap();
    let records: Vec<_> = (0..5)
        .map(|i| sample::record(&format!("vm-{round}-{i}")))
        .collect();
    spool.write_run(&records).unwrap();
    let started = Instant::now();
    let report = ship_once(&mut spool, server.grpc.port(), &pki.ca_pem, TOKEN).await;
    let took = started.elapsed();
    let report = report.unwrap_or_else(|err| panic!("round {round}: ship failed: {err}"));
    assert_eq!(report.acknowledged, 5, "round {round}: {report:?}");
    took
}

/// A user's query on a fresh connection, timed.
async fn query_round(server: &Server, pki: &Pki, round: usize) -> Duration {
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let url = format!(
        "https://localhost:{}/registry/v1/sites",
        server.https.unwrap().port()
    );
    let started = Instant::now();
    let answer = client.get(url).send().await;
    let took = started.elapsed();
    let answer = answer.unwrap_or_else(|err| panic!("round {round}: query failed: {err}"));
    assert!(answer.status().is_success(), "round {round}: {answer:?}");
    took
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_and_a_user_get_through_a_crowd_holding_the_ports_every_time() {
    let lines = Lines::default();
    let writer = lines.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::INFO)
            .finish(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki));

    let stop = Arc::new(AtomicBool::new(false));
    let connections = Arc::new(AtomicU64::new(0));
    let mut crowd = Vec::new();
    for port in [server.grpc, server.https.unwrap()] {
        for address in 2..=17 {
            for _ in 0..PER_ADDRESS {
                crowd.push(member(
                    format!("127.0.0.{address}"),
                    port,
                    stop.clone(),
                    connections.clone(),
                ));
            }
        }
    }
    // Let the crowd fill both ports.
    tokio::time::sleep(Duration::from_secs(1)).await;

    for round in 0..ROUNDS {
        let (shipped, queried) = tokio::join!(
            ship_round(dir.path(), &server, &pki, round),
            query_round(&server, &pki, round)
        );
        println!("round {round}: ship {shipped:?}, query {queried:?}");
        assert!(shipped < WITHIN, "round {round}: ship took {shipped:?}");
        assert!(queried < WITHIN, "round {round}: query took {queried:?}");
    }

    stop.store(true, Ordering::Relaxed);
    for member in crowd {
        member.await.unwrap();
    }
    server.stop().unwrap();
    let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let opened = connections.load(Ordering::Relaxed);
    // The crowd was at the limit: it opened far more than the ports hold, and newcomers took
    // places from it.
    assert!(opened > 4 * MAX_CONNECTIONS as u64, "{opened} connections");
    assert!(
        log.contains("closed to make room"),
        "the crowd gave way to newcomers:\n{log}"
    );
}
