//! The two ways the benchmark's clients ask, and the latency summary both report.
//!
//! * Closed loop: each client sends its next query as soon as the previous answer arrived. It
//!   shows what the server sustains; with 200 clients always waiting, latency is mostly queueing
//!   (Little's law: 200 / throughput).
//! * Open loop: each client sends on a fixed schedule, whatever the server does, and a query's
//!   latency counts from when it was due, not from when it could be sent. A slow answer delays the
//!   client's later sends, and that delay is counted in their latency (the correction for
//!   coordinated omission). It shows what 200 clients see at a given load.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

/// One client's keep-alive TLS connection, HTTP/1.1 straight on hyper: no pool, no URL parsing,
/// so the client's share of the two cores stays small beside the server's.
pub struct Connection {
    sender: SendRequest<Empty<Bytes>>,
}

/// A TLS connector that trusts the test CA.
pub fn connector(ca_pem: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(certificate.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

impl Connection {
    /// Connects and completes the TLS handshake (not part of any measurement).
    pub async fn open(address: SocketAddr, connector: &TlsConnector) -> Connection {
        let tcp = tokio::net::TcpStream::connect(address).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let name = ServerName::try_from("localhost").unwrap();
        let tls = connector.connect(name, tcp).await.unwrap();
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .unwrap();
        tokio::spawn(connection);
        Connection { sender }
    }

    /// GETs `path`, reads the body as bytes and checks the status and that it is an answer; the
    /// answer is not deserialised. Returns the body's length.
    pub async fn query(&mut self, path: &str) -> usize {
        self.sender.ready().await.unwrap();
        let request = hyper::Request::get(path)
            .header(hyper::header::HOST, "localhost")
            .body(Empty::new())
            .unwrap();
        let response = self
            .sender
            .send_request(request)
            .await
            .unwrap_or_else(|error| panic!("GET {path}: {error}"));
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|error| panic!("GET {path}: body: {error}"))
            .to_bytes();
        assert!(
            status.is_success() && body.starts_with(b"{\"generated_at\":") && body.ends_with(b"]}"),
            "GET {path}: {status} {}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        );
        body.len()
    }
}

/// A query form's request path for query number `n`.
pub type PathOf = fn(usize) -> String;

/// Latencies of one run and its wall time.
pub struct Run {
    pub latencies: Vec<Duration>,
    pub wall: Duration,
}

impl Run {
    pub fn summary(mut self) -> String {
        self.latencies.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let at = |p: f64| {
            let rank = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
            ms(self.latencies[rank.min(self.latencies.len() - 1)])
        };
        format!(
            "{} queries, {:.0} queries/s, p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.latencies.len(),
            self.latencies.len() as f64 / self.wall.as_secs_f64(),
            at(0.50),
            at(0.90),
            at(0.99),
            self.latencies.last().map_or(0.0, |&d| ms(d)),
        )
    }
}

/// Each client sends `per_client` queries back to back.
pub async fn closed(clients: Vec<Connection>, path: PathOf, per_client: usize) -> Run {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (index, mut client) in clients.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for query in 0..per_client {
                let target = path(index * per_client + query);
                let start = Instant::now();
                client.query(&target).await;
                latencies.push(start.elapsed());
            }
            latencies
        }));
    }
    collect(tasks, started).await
}

/// The clients together send `rate` queries per second for `duration`, each client every
/// `clients / rate` seconds, their schedules spread evenly over one period.
pub async fn open(clients: Vec<Connection>, path: PathOf, rate: f64, duration: Duration) -> Run {
    let count = clients.len();
    let period = Duration::from_secs_f64(count as f64 / rate);
    let per_client = (duration.as_secs_f64() * rate / count as f64).round() as usize;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (index, mut client) in clients.into_iter().enumerate() {
        let first = started + period.mul_f64(index as f64 / count as f64);
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::with_capacity(per_client);
            for query in 0..per_client {
                let due = first + period * query as u32;
                tokio::time::sleep_until(due).await;
                client.query(&path(index * per_client + query)).await;
                latencies.push(due.elapsed());
            }
            latencies
        }));
    }
    collect(tasks, started).await
}

async fn collect(tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>, started: Instant) -> Run {
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    Run {
        latencies,
        wall: started.elapsed(),
    }
}
