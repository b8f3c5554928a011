//! Why a `ship` failed, as a site administrator reads it: the cause of a transport failure is
//! named (connection refused, a certificate signed by an unknown CA, a port that does not speak
//! TLS), and a certificate problem is reported at once instead of retried: no wait cures it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};

use crate::auth::Tokens;
use crate::ingest::IngestService;
use crate::metrics::Metrics;
use accelfed_accounting::repository::Repository;
use accelfed_accounting::ship::{Backoff, Client, ClientSettings, ShipError, ShipOptions, ship};
use accelfed_accounting::spool::Spool;
use accelfed_accounting::wire::proto::accounting_server::AccountingServer;
use accelfed_schemas::usage::sample;
use accelfed_testkit::pki::Pki;

const TOKEN: &str = "3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c";

/// Ships one record to `endpoint` trusting `ca_pem`, with up to 4 attempts 200 ms apart.
async fn ship_once(endpoint: String, ca_pem: String) -> (Result<(), ShipError>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
    spool.write_run(&[sample::record("vm-1")]).unwrap();
    let mut client = Client::new(&ClientSettings {
        endpoint,
        fallbacks: Vec::new(),
        ca_pem: Some(ca_pem.into_bytes()),
        token: TOKEN.to_owned(),
        timeout: Duration::from_secs(5),
    })
    .unwrap();
    let options = ShipOptions {
        backoff: Backoff {
            attempts: 4,
            initial: Duration::from_millis(200),
            max: Duration::from_millis(200),
        },
        ..ShipOptions::default()
    };
    let started = Instant::now();
    let result = ship(&mut spool, &mut client, &options).await.map(|_| ());
    (result, started.elapsed())
}

/// A TLS gRPC server with `pki`'s certificate on a free port.
async fn tls_server(pki: &Pki, dir: &std::path::Path) -> u16 {
    let repository = Repository::open(dir.join("r.sqlite").to_str().unwrap())
        .await
        .unwrap();
    let service = IngestService {
        repository,
        tokens: Arc::new(Tokens::default()),
        metrics: Arc::new(Metrics::default()),
        batches: std::sync::Arc::new(crate::batch_limits::BatchLimits::uniform(10)),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::builder()
        .tls_config(
            ServerTlsConfig::new().identity(Identity::from_pem(&pki.cert_pem, &pki.key_pem)),
        )
        .unwrap()
        .add_service(AccountingServer::new(service))
        .serve_with_incoming(TcpIncoming::from(listener));
    tokio::spawn(server);
    port
}

#[tokio::test]
async fn an_unknown_certificate_authority_is_named_and_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let served = Pki::generate();
    let other = Pki::generate();
    let port = tls_server(&served, dir.path()).await;
    let (result, took) = ship_once(format!("https://localhost:{port}"), other.ca_pem).await;
    let error = result.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ShipError::Settings { .. }), "{error:?}");
    // Both test CAs have the same (empty) name, so rustls finds the issuer and the signature fails.
    assert!(text.contains("invalid peer certificate"), "{text}");
    assert_eq!(
        text.matches("invalid peer certificate").count(),
        1,
        "said once: {text}"
    );
    assert!(text.contains("retry will not help"), "{text}");
    assert!(took < Duration::from_millis(500), "no retries: {took:?}");
}

#[tokio::test]
async fn a_refused_connection_is_named_and_retried() {
    let pki = Pki::generate();
    // A port nothing listens on: bound, then closed.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (result, took) = ship_once(format!("https://localhost:{port}"), pki.ca_pem).await;
    let error = result.unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, ShipError::Unreachable { attempts: 4, .. }),
        "{error:?}"
    );
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(
        took >= Duration::from_millis(300),
        "it waited between attempts: {took:?}"
    );
}

#[tokio::test]
async fn a_port_that_does_not_speak_tls_is_named_and_not_retried() {
    let pki = Pki::generate();
    // A plain-HTTP server: answers whatever arrives with an HTTP/1.1 error and closes.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buffer = [0u8; 1024];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                    .await;
            });
        }
    });
    let (result, took) = ship_once(format!("https://localhost:{port}"), pki.ca_pem).await;
    let error = result.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ShipError::Settings { .. }), "{error:?}");
    assert!(
        text.contains("corrupt message") || text.contains("InvalidContentType"),
        "{text}"
    );
    assert!(took < Duration::from_millis(500), "no retries: {took:?}");
}

/// Ships to a TLS server holding `served`'s certificate, trusting `served`'s CA, and checks the
/// run stopped at once with an error that names `cause`.
async fn assert_named_and_not_retried(served: &Pki, cause: &str) {
    let dir = tempfile::tempdir().unwrap();
    let port = tls_server(served, dir.path()).await;
    let (result, took) =
        ship_once(format!("https://localhost:{port}"), served.ca_pem.clone()).await;
    let error = result.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ShipError::Settings { .. }), "{error:?}");
    assert!(text.contains(cause), "{cause} in {text}");
    assert!(text.contains("retry will not help"), "{text}");
    assert!(took < Duration::from_millis(500), "no retries: {took:?}");
}

#[tokio::test]
async fn an_expired_certificate_is_named_and_not_retried() {
    // Valid for the year 2020 only.
    let served = Pki::issued(
        "expired test CA",
        &["localhost"],
        Some(((2020, 1), (2021, 1))),
    );
    assert_named_and_not_retried(&served, "certificate expired").await;
}

#[tokio::test]
async fn a_certificate_for_another_name_is_named_and_not_retried() {
    let served = Pki::issued(
        "other-name test CA",
        &["repository.example.org"],
        Some(((2020, 1), (2100, 1))),
    );
    assert_named_and_not_retried(&served, "certificate not valid for name \"localhost\"").await;
}

#[tokio::test]
async fn plain_http_to_the_tls_port_is_refused_before_anything_is_sent() {
    // A site that writes http:// for the repository's TLS port: refused by the settings, with
    // what to write instead, rather than a failed handshake later.
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let port = tls_server(&pki, dir.path()).await;
    let error = Client::new(&ClientSettings {
        endpoint: format!("http://localhost:{port}"),
        fallbacks: Vec::new(),
        ca_pem: Some(pki.ca_pem.into_bytes()),
        token: TOKEN.to_owned(),
        timeout: Duration::from_secs(5),
    })
    .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ShipError::Settings { .. }), "{error:?}");
    assert!(text.contains("must be https://"), "{text}");
    assert!(text.contains(&format!("http://localhost:{port}")), "{text}");
}
