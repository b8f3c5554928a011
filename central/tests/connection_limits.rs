//! The whole central service started in-process through `accelfed_central::run` (by
//! `accelfed_tests::central::Server`), attacked the way issue #23 found it exhausted, on all three
//! ports (gRPC, the registry's HTTPS, plain-HTTP metrics): connections that never start TLS, that
//! finish the handshake and say nothing, that send half a request's headers (all at once or a byte
//! at a time), an HTTP/2 client that only sends PINGs, more of them than one address may open, and
//! more than a port may hold. A site's normal calls are still answered within a second while only
//! the per-address limits are exceeded, every attacker is closed after the timeouts, and the log
//! stays a few lines.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;

use accelfed_accounting::wire::proto::SyncRequest;
use accelfed_accounting::wire::proto::accounting_client::AccountingClient;
use accelfed_central::TokenHash;
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;
use accelfed_tests::tls_client::{self, H2_PING, H2_PREFACE};

const TOKEN: &str = "9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d9d";
/// The limits the service runs with: small, so the attack is quick.
const MAX_CONNECTIONS: usize = 16;
const MAX_PER_ADDRESS: usize = 4;
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(1);
const IDLE_TIMEOUT: Duration = Duration::from_secs(2);

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

/// A connection of any kind an attacker holds.
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// A TCP connection to `to` from `source` (another loopback address than the site's).
async fn connect_from(source: &str, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(to).await.unwrap()
}

/// A connection from `source` that sends `first` and then nothing.
async fn silent(source: &str, to: SocketAddr, first: &[u8]) -> Box<dyn Io> {
    let mut stream = connect_from(source, to).await;
    stream.write_all(first).await.unwrap();
    Box::new(stream)
}

/// A connection from `source` that completes the TLS handshake, sends `first` and then nothing.
async fn after_handshake(
    tls: &TlsConnector,
    source: &str,
    to: SocketAddr,
    first: &[u8],
) -> Box<dyn Io> {
    let stream = connect_from(source, to).await;
    let name = ServerName::try_from("localhost").unwrap();
    let mut stream = tls.connect(name, stream).await.unwrap();
    stream.write_all(first).await.unwrap();
    stream.flush().await.unwrap();
    Box::new(stream)
}

/// Whether the service closed `stream` (end of file or an error) within `wait`.
async fn closed_within(stream: &mut Box<dyn Io>, wait: Duration) -> bool {
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

/// How long the service takes to close `stream` (`None`: not within 5 s), measured on a task of its
/// own so that many are measured at once.
fn time_to_close(mut stream: Box<dyn Io>) -> JoinHandle<Option<Duration>> {
    tokio::spawn(async move {
        let started = Instant::now();
        closed_within(&mut stream, Duration::from_secs(5))
            .await
            .then(|| started.elapsed())
    })
}

/// Keeps writing `chunks` to `stream`, one every 300 ms (a PING, a byte of a header), reading
/// whatever comes back, until the service closes it; the time that took.
fn keep_writing(mut stream: Box<dyn Io>, chunks: Vec<Vec<u8>>) -> JoinHandle<Duration> {
    tokio::spawn(async move {
        let started = Instant::now();
        let mut buffer = [0u8; 256];
        let mut tick = tokio::time::interval(Duration::from_millis(300));
        let mut chunks = chunks.into_iter().cycle();
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let chunk = chunks.next().unwrap();
                    if stream.write_all(&chunk).await.is_err() || stream.flush().await.is_err() {
                        return started.elapsed();
                    }
                }
                read = stream.read(&mut buffer) => {
                    if matches!(read, Ok(0) | Err(_)) {
                        return started.elapsed();
                    }
                }
            }
            assert!(started.elapsed() < Duration::from_secs(10), "never closed");
        }
    })
}

/// The service's configuration: all three ports, the small limits above.
fn configuration(dir: &std::path::Path, pki: &Pki) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\
         [listen.limits]\nmax_connections = {MAX_CONNECTIONS}\n\
         max_connections_per_address = {MAX_PER_ADDRESS}\n\
         handshake_timeout_s = {}\nidle_timeout_s = {}\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [sites.SITE-A]\ntoken_sha256 = \"{}\"\n",
        HANDSHAKE_TIMEOUT.as_secs(),
        IDLE_TIMEOUT.as_secs(),
        TokenHash::of(TOKEN).to_hex()
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The site's normal calls on the three ports: a gRPC SyncCounts, a registry query and a metrics
/// scrape, each on a fresh connection.
async fn site_calls(server: &Server, pki: &Pki) -> Result<(), String> {
    let endpoint = format!("https://localhost:{}", server.grpc.port());
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(&pki.ca_pem));
    let channel = tonic::transport::Channel::from_shared(endpoint)
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .map_err(|e| format!("gRPC connect: {e}"))?;
    let mut request = tonic::Request::new(SyncRequest {});
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    AccountingClient::new(channel)
        .sync_counts(request)
        .await
        .map_err(|e| format!("gRPC: {e}"))?;
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let https = server.https.unwrap();
    let sites = format!("https://localhost:{}/registry/v1/sites", https.port());
    let page = client.get(sites).send().await.map_err(|e| e.to_string())?;
    if !page.status().is_success() {
        return Err(format!("registry: {}", page.status()));
    }
    let metrics = format!("http://{}/metrics", server.metrics.unwrap());
    let scrape = client
        .get(metrics)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let text = scrape.text().await.map_err(|e| e.to_string())?;
    if !text.contains("accelfed_auth_failures_total") {
        return Err(format!("metrics: {text}"));
    }
    Ok(())
}

/// Per port, 20 connections from two addresses (8 admitted, the rest shed at once) that send half
/// a TLS record, or nothing on the plain metrics port.
async fn flood(server: &Server) -> Vec<Box<dyn Io>> {
    let half_record: &[u8] = &[0x16, 0x03, 0x01, 0x02];
    let mut attackers = Vec::new();
    for (port, first) in [
        (server.grpc, half_record),
        (server.https.unwrap(), half_record),
        (server.metrics.unwrap(), &b""[..]),
    ] {
        for i in 0..20 {
            let source = if i % 2 == 0 { "127.0.0.2" } else { "127.0.0.3" };
            attackers.push(silent(source, port, first).await);
        }
    }
    attackers
}

/// From a third address, within its limit on each port: connections that finished the TLS
/// handshake and say nothing, and half-sent request headers.
async fn quiet_after_connecting(server: &Server, pki: &Pki) -> Vec<Box<dyn Io>> {
    let (h2, http1) = (
        tls_client::connector(&pki.ca_pem, b"h2"),
        tls_client::connector(&pki.ca_pem, b"http/1.1"),
    );
    let https = server.https.unwrap();
    let half_headers = b"GET /registry/v1/sites HTTP/1.1\r\nHost: localhost\r\n";
    vec![
        after_handshake(&h2, "127.0.0.4", server.grpc, b"").await,
        after_handshake(&h2, "127.0.0.4", server.grpc, H2_PREFACE).await,
        after_handshake(&http1, "127.0.0.4", https, b"").await,
        after_handshake(&http1, "127.0.0.4", https, half_headers).await,
        silent(
            "127.0.0.4",
            server.metrics.unwrap(),
            b"GET /metrics HTTP/1.1\r\nHo",
        )
        .await,
    ]
}

/// From a third address: an HTTP/2 client that only pings, and a request header sent a byte at a
/// time; both keep bytes moving, so only the request count and the header-read timeout end them.
async fn busy_without_requests(server: &Server, pki: &Pki) -> Vec<JoinHandle<Duration>> {
    let h2 = tls_client::connector(&pki.ca_pem, b"h2");
    let pinger = after_handshake(&h2, "127.0.0.4", server.grpc, H2_PREFACE).await;
    let trickle = silent("127.0.0.4", server.metrics.unwrap(), b"").await;
    let header: Vec<Vec<u8>> = b"GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        .iter()
        .map(|byte| vec![*byte])
        .collect();
    vec![
        keep_writing(pinger, vec![H2_PING.to_vec()]),
        keep_writing(trickle, header),
    ]
}

/// Installs a global subscriber writing into the returned buffer; the service's tasks run on its
/// runtime's worker threads, so a thread-local one would miss them. One test in this file.
fn capture_log() -> Lines {
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_open_connections_past_the_limits_leave_the_site_served() {
    let lines = capture_log();
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki));

    let mut attackers = flood(&server).await;
    attackers.extend(quiet_after_connecting(&server, &pki).await);
    let busy = busy_without_requests(&server, &pki).await;

    // Past the per-address limits, the site is still answered on every port within a second.
    let started = Instant::now();
    site_calls(&server, &pki).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // Every attacker is closed: the shed ones at once, the others after the handshake or idle
    // timeout; none is left 2 s after that.
    for (i, stream) in attackers.iter_mut().enumerate() {
        let wait = IDLE_TIMEOUT + Duration::from_secs(2);
        assert!(closed_within(stream, wait).await, "attacker {i} still open");
    }
    // Bytes kept moving on these, yet they were closed once the timeout passed.
    for handle in busy {
        let open_for = handle.await.unwrap();
        assert!(
            open_for >= IDLE_TIMEOUT - Duration::from_millis(500)
                && open_for < IDLE_TIMEOUT + Duration::from_secs(2),
            "closed after {open_for:?}"
        );
    }

    the_port_total_is_enforced_and_freed(&server, &pki).await;

    server.stop().unwrap();
    let log = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let _ = std::io::stderr().write_all(log.as_bytes());
    assert!(
        log.lines().count() < 12,
        "a few lines, not one per refusal:\n{log}"
    );
    for reason in [
        "max_connections_per_address",
        "the port holds max_connections",
    ] {
        assert!(
            log.contains(reason),
            "the shedding is logged ({reason}):\n{log}"
        );
    }
}

/// More connections than the HTTPS port holds, from six addresses within their own limit: as many
/// as pass the port's total are closed at once (newcomers from addresses holding fewer take the
/// places of the oldest of those holding the most, the rest are refused; `listen::gate`), the
/// others after the handshake timeout, and then the site is answered again.
async fn the_port_total_is_enforced_and_freed(server: &Server, pki: &Pki) {
    let https = server.https.unwrap();
    let flooded = Instant::now();
    let mut attackers = Vec::new();
    for source in 10..16 {
        for _ in 0..MAX_PER_ADDRESS {
            let source = format!("127.0.0.{source}");
            attackers.push(silent(&source, https, &[0x16, 0x03, 0x01, 0x02]).await);
        }
    }
    let closing: Vec<JoinHandle<Option<Duration>>> =
        attackers.into_iter().map(time_to_close).collect();
    let mut at_once = 0;
    for handle in closing {
        let took = handle.await.unwrap().expect("every attacker is closed");
        assert!(
            took < HANDSHAKE_TIMEOUT + Duration::from_secs(1),
            "{took:?}"
        );
        if took < Duration::from_millis(300) {
            at_once += 1;
        }
    }
    assert_eq!(
        at_once,
        6 * MAX_PER_ADDRESS - MAX_CONNECTIONS,
        "shed at once"
    );
    site_calls(server, pki).await.unwrap();
    assert!(
        flooded.elapsed() < HANDSHAKE_TIMEOUT + Duration::from_secs(2),
        "{:?}",
        flooded.elapsed()
    );
}
