//! Every client call has an end: a repository or registry that accepts the connection and then
//! never answers the TLS ClientHello, or completes the handshake and then stays silent, ends
//! `accelfed ship`, `accelfed query` and `accelfed provide --publish registry` within their
//! deadline (`timeout_s` x attempts), with exit status 1 and a message naming the endpoint and
//! "timed out after N s".

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use accelfed_tests::central::TOKEN_A;
use accelfed_tests::pki::{Pki, PkiFiles};

/// The deadline the tests configure, in seconds.
const DEADLINE_S: u64 = 2;
/// The calls `ship` makes per batch before it gives up.
const ATTEMPTS: u64 = 2;

/// A listener on 127.0.0.1 that accepts every connection and holds it open without reading or
/// writing a byte: a TLS client's ClientHello is never answered. Its port.
async fn never_answers_the_handshake() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    port
}

/// A listener on 127.0.0.1 that completes the TLS handshake with `pki`'s certificate and then
/// holds the connection open in silence. Its port.
async fn silent_after_the_handshake(pki: &Pki) -> u16 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs = vec![rustls::pki_types::CertificateDer::from(
        pki.cert_der.clone(),
    )];
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(pki.key_der.clone().into());
    let mut tls = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    // gRPC clients ask for h2, HTTPS clients for http/1.1: offer both, answer neither.
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(stream) = acceptor.accept(stream).await {
                    // Held until the client gives up; the task ends with the runtime.
                    std::future::pending::<()>().await;
                    drop(stream);
                }
            });
        }
    });
    port
}

fn accelfed() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_accelfed"));
    command
        .env_remove("RUST_LOG")
        .env_remove("ACCELFED_CONFIG")
        .env_remove("ACCELFED_REGISTRY_URL")
        .env_remove("ACCELFED_REGISTRY_CA")
        .env_remove("ACCELFED_REGISTRY_TOKEN_FILE")
        .env_remove("ACCELFED_QUERY_TIMEOUT_S");
    command
}

/// A site folder whose spool holds one record, shipping to `https://localhost:{port}`.
fn site_with_a_record(dir: &Path, pki: &PkiFiles, port: u16) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let token = dir.join("token");
    std::fs::write(&token, format!("{TOKEN_A}\n")).unwrap();
    std::fs::set_permissions(&token, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    std::fs::write(
        dir.join("usage.jsonl"),
        r#"{"resource": "node-1", "model": "A100-SXM4-80GB", "count": 1, "vo": "atlas", "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T10:00:00Z"}"#
            .to_owned()
            + "\n",
    )
    .unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-A\"\n\n[accounting]\nspool = \"spool.sqlite\"\n\
             observations = \"usage.jsonl\"\n\n[accounting.ship]\n\
             endpoint = \"https://localhost:{port}\"\ntoken_file = \"token\"\nca = \"{}\"\n\
             attempts = {ATTEMPTS}\nbackoff_initial_ms = 50\nbackoff_max_ms = 50\n\
             timeout_s = {DEADLINE_S}\n",
            pki.ca.display()
        ),
    )
    .unwrap();
    let metered = accelfed()
        .args(["meter", "--since", "2025-12-01", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(
        metered.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&metered.stderr)
    );
    config
}

/// The example site's file with `[publish.registry]` pushing to `https://localhost:{port}` within
/// the deadline.
fn site_publishing(dir: &Path, pki: &PkiFiles, port: u16) -> std::path::PathBuf {
    let example = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml"),
    )
    .unwrap();
    // The site and its services; the example's accounting and publish tables name paths of a
    // real installation.
    let services = &example[..example.find("\n[accounting]\n").unwrap()];
    let config = dir.join("publish.toml");
    std::fs::write(
        &config,
        format!(
            "{services}\n[publish.registry]\nurl = \"https://localhost:{port}\"\n\
             token_file = \"token\"\nca = \"{}\"\ntimeout_s = {DEADLINE_S}\n",
            pki.ca.display()
        ),
    )
    .unwrap();
    config
}

/// Runs `command`; its output and how long it took. A run past `limit` (the hang this file is
/// about) is killed, so the test fails instead of hanging and leaves no process behind.
fn timed(command: &mut Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let (sender, receiver) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let output = match receiver.recv_timeout(limit) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            let output = receiver.recv().unwrap().unwrap();
            panic!(
                "still running after {limit:?}, killed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    };
    waiter.join().unwrap();
    (output, started.elapsed())
}

/// Three deadlines per call: the deadline with room for a loaded machine's start-up and backoff.
fn bound(calls: u64) -> Duration {
    Duration::from_secs(3 * DEADLINE_S * calls)
}

/// Exit 1, within three deadlines per call, and a message naming the endpoint and the deadline.
fn assert_ended(what: &str, output: &Output, took: Duration, calls: u64, endpoint: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{what}: {stderr}");
    let bound = bound(calls);
    assert!(
        took < bound,
        "{what} took {took:?} (bound {bound:?}): {stderr}"
    );
    assert!(
        stderr.contains(&format!("timed out after {DEADLINE_S} s")),
        "{what}: {stderr}"
    );
    assert!(stderr.contains(endpoint), "{what}: {stderr}");
    assert!(
        !stderr.contains(TOKEN_A),
        "{what}: the token is never shown"
    );
}

#[test]
fn ship_query_and_publish_end_at_their_deadline_whatever_the_peer_withholds() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let files = pki.write(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let silent_handshake = runtime.block_on(never_answers_the_handshake());
    let silent_after = runtime.block_on(silent_after_the_handshake(&pki));

    for (case, port) in [
        ("no handshake", silent_handshake),
        ("silent after the handshake", silent_after),
    ] {
        let endpoint = format!("https://localhost:{port}");
        let site = site_with_a_record(&dir.path().join(port.to_string()), &files, port);
        let (output, took) = timed(
            accelfed().arg("ship").arg("--config").arg(&site),
            bound(ATTEMPTS),
        );
        assert_ended(&format!("ship, {case}"), &output, took, ATTEMPTS, &endpoint);
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("gave up after 2 attempts"),
            "ship, {case}: {}",
            String::from_utf8_lossy(&output.stderr)
        );

        let (output, took) = timed(
            accelfed()
                .args(["query", "--url", &endpoint, "--ca"])
                .arg(&files.ca)
                .args(["--timeout-s", &DEADLINE_S.to_string()]),
            bound(1),
        );
        assert_ended(&format!("query, {case}"), &output, took, 1, &endpoint);

        let config = site_publishing(&dir.path().join(port.to_string()), &files, port);
        let (output, took) = timed(
            accelfed()
                .args(["provide", "--publish", "registry", "--config"])
                .arg(&config),
            bound(1),
        );
        assert_ended(
            &format!("provide --publish, {case}"),
            &output,
            took,
            1,
            &endpoint,
        );
    }
}
