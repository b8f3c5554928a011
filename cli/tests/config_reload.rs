//! `accelfed serve` reloads central.toml on SIGHUP (issue #31, item 5): a site added to the file
//! ships and reads after the signal, on a gRPC channel and an HTTP keep-alive connection both
//! opened before it; new handshakes get the renewed certificate; a broken file is refused with
//! its reason at error level and the configuration in force keeps serving.
//!
//! The renewed certificate is issued by another CA than the first, and the connections opened
//! before the signal trust only the first: had either been dropped and reopened, its handshake
//! would fail, so their working after the signal is the proof that they were kept.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use accelfed_accounting::wire::proto::SyncRequest;
use accelfed_accounting::wire::proto::accounting_client::AccountingClient;
use accelfed_tests::central::ServeProcess;
use accelfed_tests::pki::Pki;
use accelfed_tests::tls_client;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;

const TOKEN_A: &str = "a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7";
const TOKEN_B: &str = "b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8";

/// central.toml with the certificate and key files `identity` names and the sites `sites`.
fn write_config(dir: &Path, identity: &str, sites: &[(&str, &str)]) {
    let mut text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"{identity}.pem\"\nkey = \"{identity}.key\"\n\
         [database]\npath = \"accounting.sqlite\"\n"
    );
    for (site, token) in sites {
        text.push_str(&format!(
            "[sites.{site}]\ntoken_sha256 = \"{}\"\n",
            accelfed_central::TokenHash::of(token).to_hex()
        ));
    }
    std::fs::write(dir.join("central.toml"), text).unwrap();
}

fn write_identity(dir: &Path, name: &str, pki: &Pki) {
    std::fs::write(dir.join(format!("{name}.pem")), &pki.cert_pem).unwrap();
    std::fs::write(dir.join(format!("{name}.key")), &pki.key_pem).unwrap();
}

/// A gRPC channel trusting only `ca_pem`; `SyncCounts` with `token` on it.
async fn channel(port: u16, ca_pem: &str) -> tonic::transport::Channel {
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(ca_pem));
    tonic::transport::Channel::from_shared(format!("https://localhost:{port}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap()
}

async fn sync_counts(channel: &tonic::transport::Channel, token: &str) -> Result<(), tonic::Code> {
    let mut request = tonic::Request::new(SyncRequest {});
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    AccountingClient::new(channel.clone())
        .sync_counts(request)
        .await
        .map(|_| ())
        .map_err(|status| status.code())
}

/// One HTTP/1.1 keep-alive connection to the HTTPS port, trusting only `ca_pem`, with the
/// certificate the server presented on it.
async fn keep_alive(to: SocketAddr, ca_pem: &str) -> (SendRequest<Empty<Bytes>>, Vec<u8>) {
    let tls = tls_client::connect(ca_pem, b"http/1.1", to).await;
    let presented = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(connection);
    (sender, presented)
}

/// SITE-B's own report with `token`, on `sender`'s connection: the status.
async fn site_b_report(sender: &mut SendRequest<Empty<Bytes>>, token: &str) -> u16 {
    sender.ready().await.expect("the connection is still open");
    let request = hyper::Request::get("/accounting/v1/report?by=vo&site=SITE-B")
        .header(hyper::header::HOST, "localhost")
        .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Empty::new())
        .unwrap();
    let response = sender
        .send_request(request)
        .await
        .expect("an answer on the connection opened before");
    let status = response.status().as_u16();
    response.into_body().collect().await.unwrap();
    status
}

/// Sends SIGHUP and waits for the reload's outcome in the log; returns that line.
fn hang_up(serve: &ServeProcess) -> String {
    serve.signal("HUP");
    // The outcome, not a warning about a part that needs a restart.
    let outcome = |line: &str| {
        line.contains("configuration reloaded from")
            || line.contains("configuration reload refused")
    };
    let lines = serve.log_until(Duration::from_secs(20), outcome);
    lines
        .iter()
        .find(|line| outcome(line))
        .cloned()
        .unwrap_or_else(|| panic!("no reload in the log after SIGHUP:\n{}", lines.join("\n")))
}

fn metric(serve: &ServeProcess, line: &str) -> bool {
    serve.metrics().lines().any(|l| l == line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_site_works_after_sighup_on_connections_opened_before_and_a_broken_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (first, renewed) = (Pki::generate(), Pki::generate());
    write_identity(dir.path(), "first", &first);
    write_identity(dir.path(), "renewed", &renewed);
    write_config(dir.path(), "first", &[("SITE-A", TOKEN_A)]);
    let serve = ServeProcess::start(&dir.path().join("central.toml"));
    // SIGHUP is caught from this line on.
    serve.log_until(Duration::from_secs(20), |line| {
        line.contains("accelfed serve: listening")
    });
    let https = serve.https.unwrap();

    let grpc = channel(serve.grpc.port(), &first.ca_pem).await;
    let (mut http, presented) = keep_alive(https, &first.ca_pem).await;
    assert_eq!(presented, first.cert_der);
    assert_eq!(sync_counts(&grpc, TOKEN_A).await, Ok(()));
    assert_eq!(
        sync_counts(&grpc, TOKEN_B).await,
        Err(tonic::Code::Unauthenticated),
        "SITE-B is not configured yet"
    );
    assert_eq!(site_b_report(&mut http, TOKEN_B).await, 401);

    // SITE-B added and the certificate renewed (by another CA), in one edit.
    write_config(
        dir.path(),
        "renewed",
        &[("SITE-A", TOKEN_A), ("SITE-B", TOKEN_B)],
    );
    let reloaded = hang_up(&serve);
    assert!(reloaded.contains(" INFO "), "{reloaded}");
    assert!(
        reloaded.contains("added: SITE-B; removed: none"),
        "{reloaded}"
    );
    assert!(
        !reloaded.contains(TOKEN_B),
        "a token in the log: {reloaded}"
    );
    assert!(
        !reloaded.contains(&accelfed_central::TokenHash::of(TOKEN_B).to_hex()),
        "a token hash in the log: {reloaded}"
    );
    assert_eq!(sync_counts(&grpc, TOKEN_B).await, Ok(()));
    assert_eq!(site_b_report(&mut http, TOKEN_B).await, 200);
    let (mut renewed_http, presented) = keep_alive(https, &renewed.ca_pem).await;
    assert_eq!(
        presented, renewed.cert_der,
        "a new handshake gets the renewed certificate"
    );
    let renewed_grpc = channel(serve.grpc.port(), &renewed.ca_pem).await;
    assert_eq!(sync_counts(&renewed_grpc, TOKEN_B).await, Ok(()));

    // A broken file: refused, with its reason at error level, and the configuration in force kept.
    std::fs::write(dir.path().join("central.toml"), "[listen\ngrpc = 1\n").unwrap();
    let refused = hang_up(&serve);
    assert!(refused.contains(" ERROR "), "{refused}");
    assert!(
        refused.contains("configuration reload refused, the configuration in force is kept")
            && refused.contains("central.toml:1:"),
        "{refused}"
    );
    assert_eq!(sync_counts(&grpc, TOKEN_B).await, Ok(()));
    assert_eq!(site_b_report(&mut http, TOKEN_B).await, 200);
    assert_eq!(site_b_report(&mut renewed_http, TOKEN_B).await, 200);
    let (_, presented) = keep_alive(https, &renewed.ca_pem).await;
    assert_eq!(presented, renewed.cert_der);

    for line in [
        "accelfed_config_reloads_total{result=\"ok\"} 1",
        "accelfed_config_reloads_total{result=\"refused\"} 1",
        "accelfed_config_last_reload_successful 0",
        "accelfed_site_configured{site=\"SITE-B\"} 1",
    ] {
        assert!(
            metric(&serve, line),
            "missing {line:?} in\n{}",
            serve.metrics()
        );
    }
}
