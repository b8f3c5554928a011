//! The per-site cap on distinct users a month (`[ingest] max_users_per_month`, issue #30), through
//! the whole service started in-process from its central.toml, on SQLite and on PostgreSQL (both
//! read the users from the repository's user index, schema 4): users past the cap are refused
//! record by record naming the setting, users already reported pass, records without a user are
//! not counted, and another month starts afresh.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tonic::Request;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

use accelfed_accounting::wire::convert::record_to_proto;
use accelfed_accounting::wire::encoded::EncodedSubmitRequest;
use accelfed_accounting::wire::proto::{self, accounting_client::AccountingClient};
use accelfed_central::TokenHash;
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::central::Server;
use accelfed_tests::pki::Pki;

const TOKEN: &str = "4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d";
/// The site of the sample usage records.
const SITE: &str = "CESNET-MCC";

fn configuration(dir: &std::path::Path, pki: &Pki, database: &str) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\n{database}\n\
         [ingest]\nmax_users_per_month = 2\n\
         [sites.{SITE}]\ntoken_sha256 = \"{}\"\n",
        TokenHash::of(TOKEN).to_hex(),
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A record of `user` (none for `None`) in month `month` of 2026.
fn of_user(id: &str, user: Option<&str>, month: u32) -> proto::UsageRecord {
    let record = sample::in_month(sample::record(id), Month::new(2026, month).unwrap());
    let mut record = record_to_proto(&record);
    record.global_user_name = user.map(str::to_owned);
    record
}

/// Submits `records`; the refusal kind of each ("" when stored) and the reasons.
async fn submit(channel: &Channel, records: Vec<proto::UsageRecord>) -> (Vec<String>, Vec<String>) {
    let mut request = Request::new(EncodedSubmitRequest::of(&records, None));
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let outcomes = AccountingClient::new(channel.clone())
        .submit(request)
        .await
        .unwrap()
        .into_inner()
        .outcomes;
    (
        outcomes.iter().map(|o| o.reason_kind.clone()).collect(),
        outcomes.iter().map(|o| o.reason.clone()).collect(),
    )
}

async fn users_past_the_cap_are_refused_record_by_record(database: &str) {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();
    let server = Server::start(&configuration(dir.path(), &pki, database));
    let channel = Channel::from_shared(format!("https://localhost:{}", server.grpc.port()))
        .unwrap()
        .tls_config(ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&pki.ca_pem)))
        .unwrap()
        .timeout(Duration::from_secs(10))
        .connect_lazy();

    // Two users fit; the third of the month is refused alone, naming the setting; a record
    // without a user is not counted.
    let (kinds, reasons) = submit(
        &channel,
        vec![
            of_user("vm-1", Some("alice"), 5),
            of_user("vm-2", Some("bob"), 5),
            of_user("vm-3", Some("invented-1"), 5),
            of_user("vm-4", None, 5),
            of_user("vm-5", Some("alice"), 5),
        ],
    )
    .await;
    assert_eq!(kinds, vec!["", "", "bad_field", "", ""], "{reasons:?}");
    assert!(
        reasons[2].contains("max_users_per_month = 2") && reasons[2].contains("2026-05"),
        "{}",
        reasons[2]
    );

    // A later call: the users are read back from the repository; known ones pass, a new one is
    // refused; another month has room of its own.
    let (kinds, reasons) = submit(
        &channel,
        vec![
            of_user("vm-6", Some("bob"), 5),
            of_user("vm-7", Some("invented-2"), 5),
            of_user("vm-8", Some("invented-2"), 4),
        ],
    )
    .await;
    assert_eq!(kinds, vec!["", "bad_field", ""], "{reasons:?}");
    server.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_users_past_the_cap_are_refused_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("accounting.sqlite");
    users_past_the_cap_are_refused_record_by_record(&format!("path = \"{}\"", path.display()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL on 127.0.0.1:5432"]
async fn postgres_users_past_the_cap_are_refused_record_by_record() {
    let database = accelfed_tests::postgres::TestDatabase::create().await;
    users_past_the_cap_are_refused_record_by_record(&format!("url = \"{}\"", database.url)).await;
}
