//! `accelfed export` to ARGO AMS, against a local HTTPS server that checks the shape of AMS's
//! publish call: `POST /v1/projects/{project}/topics/{topic}:publish?key=...`, a JSON body
//! `{"messages": [{"attributes": {"empaid": ...}, "data": <base64>}]}` whose data is an APEL
//! accelerator message, answered `{"messageIds": [...]}`. A 503 is retried; a refused key fails
//! the run without moving the watermark, so the next run sends everything.
//!
//! Each message is signed with the site's host certificate as ssmsend signs it; the server checks
//! every signature with `openssl smime -verify` against the test CA (as APEL's receiver does) and
//! that no request exceeds the configured limit once signed and base64-encoded. Every message
//! received is held against APEL's accelerator record v0.1 rules (`accelfed_tests::apel_record`).

#![allow(clippy::unwrap_used)]

mod request_limits;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use accelfed_tests::apel_record::assert_accelerator_messages;
use accelfed_tests::pki::{PkiFiles, pki};
use base64::Engine as _;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const KEY: &str = "s3cr3t+key/1";
const RECORDS: usize = 1_200;

#[derive(Default)]
struct Seen {
    /// APEL messages received, decoded.
    messages: Vec<serde_json::Value>,
    /// Bytes of each publish request that carried a message.
    request_bytes: Vec<usize>,
    requests: usize,
    /// Answer the next request with 503 once.
    fail_next: bool,
    /// The CA to verify signatures against; `None`: messages are expected unsigned.
    ca: Option<std::path::PathBuf>,
}

/// The content of a signed message, verified as APEL's receiver verifies it; panics if the
/// signature does not verify.
fn verified(signed: &[u8], ca: &Path) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("signed.txt");
    std::fs::write(&file, signed).unwrap();
    let output = Command::new("openssl")
        .args(["smime", "-verify", "-purpose", "any", "-CAfile"])
        .arg(ca)
        .arg("-in")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "signature does not verify: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    // `-text` signing puts a text/plain header before the message, as SSM's messages have.
    let (header, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(header.contains("text/plain"), "{header}");
    body.as_bytes().to_vec()
}

/// Serves AMS's publish call on a free port of 127.0.0.1 until the runtime stops.
async fn fake_ams(pki: &PkiFiles, seen: Arc<Mutex<Seen>>) -> u16 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = vec![rustls::pki_types::CertificateDer::from(pem_der(
        &std::fs::read_to_string(&pki.cert).unwrap(),
    ))];
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(
        pem_der(&std::fs::read_to_string(&pki.key).unwrap()).into(),
    );
    let tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(tls));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let acceptor = acceptor.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(stream).await else {
                    return;
                };
                while let Some((head, body)) = read_request(&mut stream).await {
                    let (status, answer) = answer(&head, &body, &seen);
                    let response = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                        answer.len()
                    );
                    stream.write_all(response.as_bytes()).await.unwrap();
                }
            });
        }
    });
    port
}

fn pem_der(pem: &str) -> Vec<u8> {
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap()
}

/// One HTTP/1.1 request: the head (request line and headers) and the body.
async fn read_request<S: tokio::io::AsyncRead + Unpin>(
    stream: &mut S,
) -> Option<(String, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buffer[..end].to_vec()).unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .unwrap_or(0);
    let mut body = buffer[end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((head, body))
}

/// Checks one request against AMS's publish call and records the message it carries.
fn answer(head: &str, body: &[u8], seen: &Mutex<Seen>) -> (&'static str, String) {
    let mut seen = seen.lock().unwrap();
    seen.requests += 1;
    let request_line = head.lines().next().unwrap();
    let path = "/v1/projects/accounting/topics/gLite-APEL:publish";
    let expected = format!("POST {path}?key=s3cr3t%2Bkey%2F1 HTTP/1.1");
    if request_line != expected {
        let wrong_key = request_line.starts_with(&format!("POST {path}?key="));
        assert!(wrong_key, "not AMS's publish call: {request_line}");
        return (
            "401 Unauthorized",
            r#"{"error":{"code":401,"message":"Unauthorized","status":"UNAUTHORIZED"}}"#.into(),
        );
    }
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    if seen.fail_next {
        seen.fail_next = false;
        return ("503 Service Unavailable", "{}".into());
    }
    let value: serde_json::Value = serde_json::from_slice(body).unwrap();
    let messages = value["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "one APEL message per request");
    let message = &messages[0];
    assert_eq!(
        message.as_object().unwrap().keys().collect::<Vec<_>>(),
        vec!["attributes", "data"]
    );
    let empaid = message["attributes"]["empaid"].as_str().unwrap();
    assert_eq!(empaid.len(), 8 + 1 + 14, "{empaid}");
    let data = base64::engine::general_purpose::STANDARD
        .decode(message["data"].as_str().unwrap())
        .unwrap();
    let data = match &seen.ca {
        Some(ca) => {
            assert!(
                data.starts_with(b"MIME-Version") && !data.starts_with(b"{"),
                "a signed S/MIME message"
            );
            verified(&data, ca)
        }
        None => data,
    };
    assert!(data.is_ascii() && data.len() < 1_000_000);
    seen.request_bytes.push(body.len());
    seen.messages.push(serde_json::from_slice(&data).unwrap());
    let id = seen.messages.len();
    ("200 OK", format!(r#"{{"messageIds":["{id}"]}}"#))
}

/// How the site signs, as its `[accounting.apel.ams]` lines say it.
fn signing(pki: &PkiFiles) -> String {
    format!(
        "certificate = \"{}\"\nkey = \"{}\"\n",
        pki.cert.display(),
        pki.key.display()
    )
}

fn site(dir: &Path, port: u16, pki: &PkiFiles, key: &str) -> std::path::PathBuf {
    site_with(dir, port, pki, key, &signing(pki), "", "")
}

/// A site with `extra` lines in `[accounting.apel.ams]`, `apel` lines in `[accounting.apel]` and
/// `user` as every record's user.
fn site_with(
    dir: &Path,
    port: u16,
    pki: &PkiFiles,
    key: &str,
    extra: &str,
    apel: &str,
    user: &str,
) -> std::path::PathBuf {
    let usage: String = (0..RECORDS)
        .map(|i| {
            let user = if user.is_empty() {
                String::new()
            } else {
                format!(r#""user": "{user}-{i}", "#)
            };
            format!(
                r#"{{"resource": "vm-{i:05}", "model": "H100", "count": 0.5, "vo": "cms", {user}"start": "2026-02-01T00:00:00Z", "end": "2026-02-01T02:00:00Z"}}"#
            ) + "\n"
        })
        .collect();
    std::fs::write(dir.join("usage.jsonl"), usage).unwrap();
    std::fs::write(dir.join("ams.key"), format!("{key}\n")).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-B\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.apel]\n{apel}\n[accounting.apel.ams]\n\
             endpoint = \"https://localhost:{port}\"\nproject = \"accounting\"\n\
             topic = \"gLite-APEL\"\ntoken_file = \"ams.key\"\nca = \"{}\"\nattempts = 3\n\
             timeout_s = 10\n{extra}",
            pki.ca.display()
        ),
    )
    .unwrap();
    config
}

fn accelfed(args: &[&str], config: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .args(args)
        .arg("--config")
        .arg(config)
        .output()
        .unwrap()
}

/// Holds every message received against APEL's accelerator record v0.1 rules
/// (`accelfed_tests::apel_record`); returns the number of records, each key counted once.
fn all_valid_for_apel(messages: &[serde_json::Value]) -> usize {
    assert_accelerator_messages(
        messages
            .iter()
            .enumerate()
            .map(|(n, message)| (format!("message {n}"), message)),
    )
}

#[test]
fn export_publishes_every_record_to_ams_in_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let seen = Arc::new(Mutex::new(Seen {
        ca: Some(pki.ca.clone()),
        ..Seen::default()
    }));
    let port = runtime.block_on(fake_ams(&pki, seen.clone()));

    // A refused key: exit 1, nothing accepted, the watermark stays.
    let config = site(dir.path(), port, &pki, "wrong-key");
    assert!(
        accelfed(&["meter", "--since", "2026-01-01"], &config)
            .status
            .success()
    );
    let refused = accelfed(&["export"], &config);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("refused") && stderr.contains("401"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("wrong-key"),
        "the key is never logged: {stderr}"
    );
    assert!(seen.lock().unwrap().messages.is_empty());

    // The right key, and a 503 on the first call: retried, everything arrives once.
    let config = site(dir.path(), port, &pki, KEY);
    seen.lock().unwrap().fail_next = true;
    let exported = accelfed(&["export"], &config);
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.messages.len(), 2, "1,200 records: two messages");
    assert_eq!(seen.requests, 1 + 1 + 2, "refused, 503, two messages");
    assert_eq!(all_valid_for_apel(&seen.messages), RECORDS);
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for message in &seen.messages {
        for record in message["UsageRecords"].as_array().unwrap() {
            assert_eq!(record["SiteName"], "SITE-B");
            assert_eq!(record["Count"], 0.5);
            assert_eq!(record["AvailableDuration"], 7_200);
            assert_eq!(record["MeasurementMonth"], 2);
            *found
                .entry(record["AssociatedRecord"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    assert_eq!(found.len(), RECORDS);
    assert!(found.values().all(|&n| n == 1));
}
