//! What a site with a valid token may cost the service (issue #30), through the whole service
//! started in-process: a `ship` call past the site's `max_message_bytes` is refused naming the
//! limit while a small one is stored; a push whose body trickles in is refused with 408 within the
//! grace period and its connection closed; an HTTP/2 client that floods PINGs is closed while one
//! that pings now and then is not; `/offers` answers in pages.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use accelfed_accounting::spool::Spool;
use accelfed_central::TokenHash;
use accelfed_schemas::glue::sample as glue_sample;
use accelfed_schemas::render::json;
use accelfed_schemas::usage::sample;
use accelfed_tests::central::{Server, ship_once};
use accelfed_tests::pki::Pki;
use accelfed_tests::tls_client::{self, H2_PING, H2_PREFACE};

const TOKEN: &str = "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b";
/// A site held to documents of 100 bytes.
const SMALL_TOKEN: &str = "7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c7c";
/// The site of the sample usage records.
const SITE: &str = "CESNET-MCC";

fn configuration(dir: &std::path::Path, pki: &Pki) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\npath = \"{}\"\n\
         [registry]\nmin_push_bytes_per_s = 1000\npush_grace_s = 1\n\
         [sites.{SITE}]\ntoken_sha256 = \"{}\"\nmax_message_bytes = 4096\n\
         [sites.SMALL-SITE]\ntoken_sha256 = \"{}\"\nmax_document_bytes = 100\n",
        dir.join("accounting.sqlite").display(),
        TokenHash::of(TOKEN).to_hex(),
        TokenHash::of(SMALL_TOKEN).to_hex()
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

async fn connect(
    pki: &Pki,
    alpn: &[u8],
    to: std::net::SocketAddr,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    tls_client::connect(&pki.ca_pem, alpn, to).await
}

/// Reads until the service closes the connection or `wait` passes; what was read, and whether it
/// closed.
async fn read_until_closed(
    stream: &mut (impl AsyncRead + Unpin),
    wait: Duration,
) -> (Vec<u8>, bool) {
    let deadline = Instant::now() + wait;
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Err(_) => return (read, false),
            Ok(Ok(0) | Err(_)) => return (read, true),
            Ok(Ok(n)) => read.extend_from_slice(&buffer[..n]),
        }
    }
}

async fn ship_records(
    dir: &std::path::Path,
    server: &Server,
    pki: &Pki,
    n: usize,
) -> Result<usize, String> {
    let mut spool = Spool::open(dir.join(format!("spool-{n}.sqlite"))).unwrap();
    let records: Vec<_> = (0..n)
        .map(|i| sample::record(&format!("vm-{n}-{i}")))
        .collect();
    spool.write_run(&records).unwrap();
    ship_once(&mut spool, server.grpc.port(), &pki.ca_pem, TOKEN)
        .await
        .map(|report| report.acknowledged)
        .map_err(|error| error.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sites_calls_pushes_and_frames_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki));

    // Messages: one record fits the site's 4 KiB, fifty do not, and the refusal names the limit.
    assert_eq!(ship_records(dir.path(), &server, &pki, 1).await, Ok(1));
    let refused = ship_records(dir.path(), &server, &pki, 50)
        .await
        .unwrap_err();
    assert!(refused.contains("limit of 4096"), "{refused}");
    assert!(refused.contains("max_message_bytes"), "{refused}");

    // A push of 1,000 bytes sent a byte every 2 s: 408 after the 1 s grace, connection closed.
    let https = server.https.unwrap();
    let mut trickle = connect(&pki, b"http/1.1", https).await;
    let head = format!(
        "PUT /registry/v1/document HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Length: 1000\r\n\r\n{{"
    );
    trickle.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut trickle, Duration::from_secs(5)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("arrived too slowly"), "{answer}");
    assert!(closed, "the connection is closed");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // PINGs: ten, a little apart, are answered; a flood of 300 closes the connection.
    let mut steady = connect(&pki, b"h2", server.grpc).await;
    steady.write_all(H2_PREFACE).await.unwrap();
    for _ in 0..10 {
        steady.write_all(H2_PING).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (_, closed) = read_until_closed(&mut steady, Duration::from_millis(500)).await;
    assert!(!closed, "a client pinging now and then stays");
    // Not kept open past its check: a connection in no call holds the service's stop until the
    // idle timeout.
    drop(steady);
    let mut flood = connect(&pki, b"h2", server.grpc).await;
    flood.write_all(H2_PREFACE).await.unwrap();
    let pings: Vec<u8> = H2_PING.repeat(300);
    let _ = flood.write_all(&pings).await;
    let (_, closed) = read_until_closed(&mut flood, Duration::from_secs(3)).await;
    assert!(closed, "a PING flood is closed");

    // /offers in pages.
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let pushed = client
        .put(format!("{}/registry/v1/document", server.url()))
        .bearer_auth(TOKEN)
        .body(json::render(&glue_sample::snapshot(SITE)))
        .send()
        .await
        .unwrap();
    assert_eq!(
        pushed.status().as_u16(),
        200,
        "{}",
        pushed.text().await.unwrap()
    );
    let first = client
        .get(format!(
            "{}/registry/v1/offers?limit=1&fresh=false",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 200);
    let total: usize = first.headers()["x-total-count"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(total >= 2, "the sample site has several offers: {total}");
    let link = first.headers()["link"].to_str().unwrap().to_owned();
    assert_eq!(
        link,
        "</registry/v1/offers?fresh=false&limit=1&page=2>; rel=\"next\""
    );
    let body: serde_json::Value = serde_json::from_str(&first.text().await.unwrap()).unwrap();
    assert_eq!(body["offers"].as_array().unwrap().len(), 1);
    let last = client
        .get(format!(
            "{}/registry/v1/offers?limit=1&page={total}",
            server.url()
        ))
        .send()
        .await
        .unwrap();
    assert!(last.headers().get("link").is_none());
    let refused = client
        .get(format!("{}/registry/v1/offers?limit=0", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("limit must be a whole number")
    );
    server.stop().unwrap();
}
