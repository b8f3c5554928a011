//! The whole central service started in-process through `accelfed_central::run` (by
//! `accelfed_tests::central::Server`), attacked the way
//! issue #23 found it exhausted: connections that never start TLS, connections that send half a
//! request and stop, more of them than the limits allow. A site's normal calls on both ports are
//! still answered within a second, the idle connections are closed after the timeouts, and the log
//! stays a few lines.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use accelfed_accounting::wire::proto::SyncRequest;
use accelfed_accounting::wire::proto::accounting_client::AccountingClient;
use accelfed_central::auth::TokenHash;
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;

const TOKEN: &str = "9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d";

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

/// A connection from `source` (another loopback address than the site's) that sends `first` and
/// then nothing.
async fn silent(source: &str, to: SocketAddr, first: &[u8]) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(to).await.unwrap();
    stream.write_all(first).await.unwrap();
    stream
}

/// Whether the service closed `stream` (end of file or reset) within `wait`.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 256];
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_open_connections_past_the_limits_leave_the_site_served() {
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::INFO)
        .finish();
    // Global: the service's tasks run on the runtime's worker threads. One test in this file.
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    std::fs::write(dir.path().join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [listen.limits]\nmax_connections = 16\nmax_connections_per_address = 4\n\
         handshake_timeout_s = 1\nidle_timeout_s = 2\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [sites.SITE-A]\ntoken_sha256 = \"{}\"\n",
        TokenHash::of(TOKEN).to_hex()
    );
    let path = dir.path().join("central.toml");
    std::fs::write(&path, text).unwrap();
    let server = Server::start(&path);
    let (grpc, https) = (server.grpc, server.https.unwrap());

    // 40 connections per port from two other addresses: TCP only, and half a TLS record.
    let mut attackers = Vec::new();
    for port in [grpc, https] {
        for i in 0..20 {
            let source = if i % 2 == 0 { "127.0.0.2" } else { "127.0.0.3" };
            attackers.push(silent(source, port, &[0x16, 0x03, 0x01, 0x02]).await);
        }
    }

    // The site is still answered, on both ports, within a second.
    let started = Instant::now();
    let channel =
        tonic::transport::Channel::from_shared(format!("https://localhost:{}", grpc.port()))
            .unwrap()
            .tls_config(
                tonic::transport::ClientTlsConfig::new()
                    .ca_certificate(tonic::transport::Certificate::from_pem(&pki.ca_pem)),
            )
            .unwrap()
            .connect()
            .await
            .unwrap();
    let mut request = tonic::Request::new(SyncRequest {});
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    AccountingClient::new(channel)
        .sync_counts(request)
        .await
        .unwrap();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let page = client
        .get(format!(
            "https://localhost:{}/registry/v1/sites",
            https.port()
        ))
        .send()
        .await
        .unwrap();
    assert!(page.status().is_success(), "{}", page.status());
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // Every attacker is closed: the shed ones at once, the admitted ones after the handshake
    // timeout (1 s); none is left after 4 s.
    for stream in &mut attackers {
        assert!(closed_within(stream, Duration::from_secs(4)).await);
    }

    server.stop().unwrap();
    let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let _ = std::io::stderr().write_all(log.as_bytes());
    assert!(
        log.lines().count() < 12,
        "a few lines, not one per refusal:\n{log}"
    );
    assert!(
        log.contains("connection closed"),
        "the shedding is logged:\n{log}"
    );
}
