//! The registry's HTTP API against careless sites (issue #30), through the whole service started
//! in-process: a push whose `Authorization` scheme is spelled `bearer` is taken (RFC 9110: the
//! scheme is case-insensitive); a compressed push is refused with 415, a document with a key twice
//! with 400 naming the key and its line:column, a CreationTime a year ahead with 422; a history
//! asked for an 8,000-character site name answers 404 quoting an excerpt; a request head of 100 KB
//! or 500 KB is refused with 431.

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::time::Duration;

use accelfed_central::TokenHash;
use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;

const TOKEN: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";
const SITE: &str = "SITE-A";

fn configuration(dir: &std::path::Path, pki: &Pki) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\npath = \"{}\"\n\
         [sites.{SITE}]\ntoken_sha256 = \"{}\"\n",
        dir.join("accounting.sqlite").display(),
        TokenHash::of(TOKEN).to_hex()
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `PUT /registry/v1/document` with `headers`; the status and the body.
async fn put(
    client: &reqwest::Client,
    server: &Server,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String) {
    let mut request = client
        .put(format!("{}/registry/v1/document", server.url()))
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let answer = request.send().await.unwrap();
    (answer.status().as_u16(), answer.text().await.unwrap())
}

/// The answer's first line to a request whose head is `size` bytes, sent over plain TCP to the
/// metrics port (served by the same HTTP/1.1 layer as the registry). The head is written from a
/// thread of its own, since the service answers (and closes) before reading all of it.
fn status_line_for_head_of(address: std::net::SocketAddr, size: usize) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let head = format!(
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nX-Padding: {}\r\n\r\n",
        "p".repeat(size)
    );
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(head.as_bytes());
    });
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let _ = sender.join();
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn careless_pushes_and_requests_are_refused_with_their_status_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki));
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap();
    let document = json::render(&sample::snapshot(SITE));
    let lower_case = format!("bearer {TOKEN}");
    let auth = ("authorization", lower_case.as_str());

    let (status, body) = put(&client, &server, &[auth], document.clone()).await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = put(
        &client,
        &server,
        &[auth, ("content-encoding", "gzip")],
        document.clone(),
    )
    .await;
    assert_eq!(status, 415, "{body}");
    assert!(body.contains("Content-Encoding \\\"gzip\\\""), "{body}");
    let (status, body) = put(
        &client,
        &server,
        &[auth, ("content-encoding", "identity")],
        document.clone(),
    )
    .await;
    assert_eq!(status, 200, "identity is no coding: {body}");

    let text = String::from_utf8(document.clone()).unwrap();
    let twice = text.replacen("\"ID\":", "\"ID\": \"shadow\", \"ID\":", 1);
    // The place named is the second key's closing quote: its line and (1-based) column.
    let at = twice.find("\"shadow\", \"ID\"").unwrap() + "\"shadow\", \"ID\"".len();
    let line = twice[..at].matches('\n').count() + 1;
    let column = at - twice[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let (status, body) = put(&client, &server, &[auth], twice.into_bytes()).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body.contains(&format!(
            "duplicate key \\\"ID\\\" at {line}:{column} (line:column)"
        )),
        "{body}"
    );

    // Every entity's CreationTime moved to 2999: a clock (or a generator) gone wrong.
    let mut future = json::document(&sample::snapshot(SITE));
    for list in future.as_object_mut().unwrap().values_mut() {
        for entity in list.as_array_mut().unwrap() {
            entity["CreationTime"] = serde_json::Value::from("2999-01-01T00:00:00Z");
        }
    }
    let (status, body) = put(&client, &server, &[auth], future.to_string().into_bytes()).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body.contains("CreationTime 2999-01-01T00:00:00Z is in the future"),
        "{body}"
    );

    let long = "N".repeat(8000);
    let answer = client
        .get(format!("{}/registry/v1/sites/{long}/history", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 404);
    let body = answer.text().await.unwrap();
    assert!(body.len() < 300, "{} bytes: {}", body.len(), &body[..300]);
    assert!(body.contains(&format!("{}...", "N".repeat(40))), "{body}");

    // 100 KB is under hyper's own limit (about 400 KB) and over the service's 64 KiB.
    let metrics = server.metrics.unwrap();
    for size in [100_000, 500_000] {
        let refused = tokio::task::spawn_blocking(move || status_line_for_head_of(metrics, size))
            .await
            .unwrap();
        assert!(refused.starts_with("HTTP/1.1 431"), "{size}: {refused:?}");
    }
    let answered = tokio::task::spawn_blocking(move || status_line_for_head_of(metrics, 1000))
        .await
        .unwrap();
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered:?}");
}
