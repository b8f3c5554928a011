//! Large gRPC messages without a token, sent in parallel to `accelfed serve`: refused from their
//! headers before the message is read, so the service's memory stays flat (issue #23: one 99.6 MB
//! unauthenticated `Submit` took it from 88 to 312 MB, and six at once to 542 MB).

use std::time::Duration;

use bytes::Bytes;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

use accelfed_accounting::wire::encoded::{EncodedSubmitRequest, SUBMIT_PATH, encode_record};
use accelfed_accounting::wire::proto::SubmitResponse;
use accelfed_schemas::usage::sample;

// `accelfed serve` runs as a process of its own here, not in-process: the service's own resident
// memory is what this test measures.
use accelfed_tests::central::ServeProcess as Server;
use accelfed_tests::pki::pki;

/// A message of about 30 MB: one encoded record repeated (the bytes are shared, not copied).
fn large_request() -> EncodedSubmitRequest {
    let record = Bytes::from(encode_record(&sample::record("flood")));
    let copies = 30 * 1024 * 1024 / record.len();
    EncodedSubmitRequest {
        records: vec![record; copies],
        spool_depth: None,
    }
}

async fn submit_without_token(channel: Channel) -> tonic::Code {
    let mut grpc = tonic::client::Grpc::new(channel).max_encoding_message_size(64 << 20);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<EncodedSubmitRequest, SubmitResponse>::default();
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(SUBMIT_PATH);
    match grpc
        .unary(tonic::Request::new(large_request()), path, codec)
        .await
    {
        Ok(_) => tonic::Code::Ok,
        Err(status) => status.code(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_unauthenticated_messages_are_refused_before_decoding_and_memory_stays_flat() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let config = dir.path().join("central.toml");
    // max_batch 50,000: the message limit (about 100 MB) lets 30 MB messages reach decoding.
    std::fs::write(
        &config,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\nmetrics = \"127.0.0.1:0\"\n\
             [tls]\ncertificate = \"{}\"\nkey = \"{}\"\n[ingest]\nmax_batch = 50000\n\
             [sites.SITE-A]\ntoken_sha256 = \"{}\"\n",
            pki.cert.display(),
            pki.key.display(),
            "ab".repeat(32),
        ),
    )
    .unwrap();
    let server = Server::start(&config);
    let channel = Channel::from_shared(server.endpoint())
        .unwrap()
        .tls_config(
            ClientTlsConfig::new()
                .ca_certificate(Certificate::from_pem(std::fs::read(&pki.ca).unwrap())),
        )
        .unwrap()
        .timeout(Duration::from_secs(60))
        .connect()
        .await
        .unwrap();
    // One refused call first, so the connection's buffers exist before the baseline.
    assert_eq!(
        submit_without_token(channel.clone()).await,
        tonic::Code::Unauthenticated
    );
    let before = server.resident_kib();
    for _ in 0..3 {
        let calls: Vec<_> = (0..6)
            .map(|_| tokio::spawn(submit_without_token(channel.clone())))
            .collect();
        for call in calls {
            assert_eq!(call.await.unwrap(), tonic::Code::Unauthenticated);
        }
    }
    let after = server.resident_kib();
    assert!(
        after < before + 20 * 1024,
        "resident memory grew from {before} KiB to {after} KiB"
    );
}
