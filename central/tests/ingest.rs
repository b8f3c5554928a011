//! The gRPC ingest of the whole service started in-process on port 0, over TLS, with the protocol's own client: bad records are
//! refused one by one with a reason naming the field while the rest of the batch is stored; records
//! past the batch limit are refused as such; a call without a known token is refused whole.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tonic::Request;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryQuery};
use accelfed_accounting::wire::convert::record_to_proto;
use accelfed_accounting::wire::encoded::EncodedSubmitRequest;
use accelfed_accounting::wire::proto::{self, Status, accounting_client::AccountingClient};
use accelfed_central::TokenHash;
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;

// Of `accelfed token`'s form (64 hex digits): other tokens are refused before hashing.
const TOKEN: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";

/// The tests run on a multi-threaded runtime: stopping the service blocks the test's thread while
/// it waits for the client's connection to close, which another worker closes.
struct Running {
    channel: Channel,
    repository: Repository,
    _server: Server,
    _dir: tempfile::TempDir,
}

/// The whole service, started in-process from a central.toml (through `run`, as `accelfed serve`
/// assembles it) with `ingest` as its `[ingest]` table and `site` added to the site's table.
async fn start(ingest: &str, site: &str) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    std::fs::write(dir.path().join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.path().join("key.pem"), &pki.key_pem).unwrap();
    let database = dir.path().join("accounting.sqlite");
    let config = dir.path().join("central.toml");
    std::fs::write(
        &config,
        format!(
            "[listen]\ngrpc = \"127.0.0.1:0\"\n\
             [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
             [database]\npath = \"{}\"\n\
             [ingest]\n{ingest}\n\
             [sites.CESNET-MCC]\ntoken_sha256 = \"{}\"\n{site}\n",
            database.display(),
            TokenHash::of(TOKEN).to_hex()
        ),
    )
    .unwrap();
    let server = Server::start(&config);
    let repository = Repository::open(database.to_str().unwrap()).await.unwrap();
    let channel = Channel::from_shared(format!("https://localhost:{}", server.grpc.port()))
        .unwrap()
        .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&pki.ca_pem)))
        .unwrap()
        .timeout(Duration::from_secs(10))
        .connect_lazy();
    Running {
        channel,
        repository,
        _server: server,
        _dir: dir,
    }
}

fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

async fn gpu_hours(repository: &Repository) -> f64 {
    repository
        .summaries(SummaryQuery {
            group_by: vec![Dimension::Vo],
            filter: SummaryFilter::default(),
        })
        .await
        .unwrap()
        .iter()
        .map(|row| row.totals.gpu_hours())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_records_are_refused_one_by_one_and_the_rest_is_stored() {
    let running = start("max_batch = 100", "").await;
    let mut client = AccountingClient::new(running.channel.clone());
    let good = record_to_proto(&sample::record("vm-good"));
    let mut month = record_to_proto(&sample::record("vm-month"));
    month.month = 13;
    let mut negative = record_to_proto(&sample::record("vm-negative"));
    negative.available_duration = -3600;
    let mut nan = record_to_proto(&sample::record("vm-nan"));
    nan.count = f64::NAN;
    // Seen times and all in 2999: a record that only named that month would be refused for its
    // seen times leaving it, before its date is looked at.
    let future = sample::in_month(sample::record("vm-future"), Month::new(2999, 1).unwrap());
    let future = record_to_proto(&future);
    let mut other_site = record_to_proto(&sample::record("vm-other"));
    other_site.site = "SOMEONE-ELSE".into();
    let mut garbage = record_to_proto(&sample::record("vm-garbage"));
    garbage.first_seen = "yesterday".into();
    let good2 = record_to_proto(&sample::record("vm-good-2"));

    let batch = vec![
        good, month, negative, nan, future, other_site, garbage, good2,
    ];
    let response = client
        .submit(with_token(EncodedSubmitRequest::of(&batch, Some(8)), TOKEN))
        .await
        .unwrap()
        .into_inner();
    let kinds: Vec<(i32, &str)> = response
        .outcomes
        .iter()
        .map(|o| (o.status, o.reason_kind.as_str()))
        .collect();
    let rejected = Status::Rejected as i32;
    assert_eq!(
        kinds,
        vec![
            (Status::Stored as i32, ""),
            (rejected, "bad_month"),
            (rejected, "bad_duration"),
            (rejected, "bad_count"),
            (rejected, "future"),
            (rejected, "wrong_site"),
            (rejected, "bad_field"),
            (Status::Stored as i32, ""),
        ]
    );
    assert!(response.outcomes[1].reason.contains("13"));
    assert!(response.outcomes[5].reason.contains("SOMEONE-ELSE"));
    assert!(
        response.outcomes[6].reason.contains("first_seen"),
        "{}",
        response.outcomes[6].reason
    );
    // the two good records: one GPU for ten days each
    assert_eq!(gpu_hours(&running.repository).await, 480.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_that_does_not_decode_is_refused_alone() {
    let running = start("max_batch = 10", "").await;
    let mut client = AccountingClient::new(running.channel.clone());
    let mut request = EncodedSubmitRequest::of(
        &[
            record_to_proto(&sample::record("vm-good")),
            record_to_proto(&sample::record("vm-utf8")),
            record_to_proto(&sample::record("vm-good-2")),
        ],
        None,
    );
    // Invalid UTF-8 in the second record's VM id, and a third entry that is no record at all.
    let mut bad = request.records[1].to_vec();
    let at = bad.windows(7).position(|w| w == b"vm-utf8").unwrap();
    bad[at + 3] = 0xc3;
    request.records[1] = bad.into();
    request.records.insert(2, vec![0xff, 0xff, 0xff].into());
    let response = client
        .submit(with_token(request, TOKEN))
        .await
        .unwrap()
        .into_inner();
    let kinds: Vec<&str> = response
        .outcomes
        .iter()
        .map(|o| o.reason_kind.as_str())
        .collect();
    assert_eq!(kinds, vec!["", "malformed", "malformed", ""]);
    assert!(
        response.outcomes[1].reason.contains("UTF-8"),
        "{}",
        response.outcomes[1].reason
    );
    // the two good records: one GPU for ten days each
    assert_eq!(gpu_hours(&running.repository).await, 480.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_past_the_batch_limit_are_refused_as_such() {
    // The site's own limit (3), not the service's (100).
    let running = start("max_batch = 100", "max_batch = 3").await;
    let mut client = AccountingClient::new(running.channel.clone());
    let records: Vec<_> = (0..4)
        .map(|i| record_to_proto(&sample::record(&format!("vm-{i}"))))
        .collect();
    let mut request = EncodedSubmitRequest::of(&records, None);
    // Past the limit, bytes that are no record: refused as past the limit like a record (the
    // service does not decode them; `ingest.rs`'s unit test shows that).
    request.records.push(vec![0xff, 0xff, 0xff].into());
    let response = client
        .submit(with_token(request, TOKEN))
        .await
        .unwrap()
        .into_inner();
    let kinds: Vec<&str> = response
        .outcomes
        .iter()
        .map(|o| o.reason_kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        vec!["", "", "", "batch_too_large", "batch_too_large"]
    );
    assert_eq!(gpu_hours(&running.repository).await, 720.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_without_a_known_token_are_refused() {
    let running = start("max_batch = 10", "").await;
    let mut client = AccountingClient::new(running.channel.clone());
    let request = || EncodedSubmitRequest::of(&[record_to_proto(&sample::record("vm-1"))], None);
    for token in ["wrong", "", TOKEN.to_uppercase().as_str()] {
        let status = client
            .submit(with_token(request(), token))
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{token:?}");
    }
    let status = client.submit(Request::new(request())).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    let status = client
        .sync_counts(with_token(proto::SyncRequest {}, "wrong"))
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    assert_eq!(gpu_hours(&running.repository).await, 0.0);

    let counts = client
        .sync_counts(with_token(proto::SyncRequest {}, TOKEN))
        .await
        .unwrap()
        .into_inner();
    assert!(counts.months.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_past_its_distinct_vos_a_month_is_refused_record_by_record() {
    let running = start(
        "max_batch = 100
max_vos_per_month = 2",
        "",
    )
    .await;
    let client = AccountingClient::new(running.channel.clone());
    let of_vo = |id: &str, vo: &str| {
        let mut record = record_to_proto(&sample::record(id));
        record.vo = Some(vo.to_owned());
        record
    };
    let submit = |records: Vec<_>| {
        let mut client = client.clone();
        async move {
            client
                .submit(with_token(EncodedSubmitRequest::of(&records, None), TOKEN))
                .await
                .unwrap()
                .into_inner()
                .outcomes
        }
    };
    // Two VOs fit; the third in the same month is refused alone, naming the setting.
    let outcomes = submit(vec![
        of_vo("vm-1", "atlas"),
        of_vo("vm-2", "cms"),
        of_vo("vm-3", "invented-1"),
        of_vo("vm-4", "atlas"),
    ])
    .await;
    let kinds: Vec<&str> = outcomes.iter().map(|o| o.reason_kind.as_str()).collect();
    assert_eq!(kinds, vec!["", "", "bad_field", ""]);
    assert!(
        outcomes[2].reason.contains("max_vos_per_month = 2"),
        "{}",
        outcomes[2].reason
    );
    // A later call: known VOs pass, a new one is refused (the count is read from the repository).
    let outcomes = submit(vec![of_vo("vm-5", "cms"), of_vo("vm-6", "invented-2")]).await;
    let kinds: Vec<&str> = outcomes.iter().map(|o| o.reason_kind.as_str()).collect();
    assert_eq!(kinds, vec!["", "bad_field"]);
}
