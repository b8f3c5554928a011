//! `accelfed ship` with several batches on the wire at once, against the real ingest service (TLS,
//! token, SQLite repository) behind a gate that fails one call. What the repository answered
//! before the failed batch is acknowledged in the spool, in order, and nothing from it on; the
//! next run delivers the rest, and records the repository had already stored from the abandoned
//! batches come back "unchanged": the totals are exact, nothing lost, nothing counted twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tonic::{Request, Response, Status};

use crate::auth::{TokenHash, Tokens};
use crate::ingest::IngestService;
use crate::metrics::Metrics;
use accelfed_accounting::repository::{Dimension, Repository, SummaryFilter, SummaryQuery};
use accelfed_accounting::ship::{
    Backoff, Client, ClientSettings, ShipError, ShipOptions, ShipReport, ship,
};
use accelfed_accounting::spool::{ShipLimits, Spool};
use accelfed_accounting::wire::encoded::EncodedSubmitRequest;
use accelfed_accounting::wire::proto::accounting_server::{Accounting, AccountingServer};
use accelfed_accounting::wire::proto::{SubmitResponse, SyncRequest, SyncResponse};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::{LocalId, SiteName};
use accelfed_schemas::usage::{UsageRecord, sample};
use accelfed_testkit::pki::Pki;

// Of `accelfed token`'s form (64 hex digits): other tokens are refused before hashing.
const TOKEN: &str = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a";
const RECORDS: usize = 60;
const BATCH: usize = 5;

/// The real service, except that the call numbered `fail_at` (in arrival order) is answered
/// "unavailable" without reaching the repository.
struct Gate {
    inner: IngestService,
    calls: AtomicUsize,
    fail_at: AtomicUsize,
}

#[tonic::async_trait]
impl Accounting for Gate {
    async fn submit(
        &self,
        request: Request<EncodedSubmitRequest>,
    ) -> Result<Response<SubmitResponse>, Status> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if call == self.fail_at.load(Ordering::SeqCst) {
            return Err(Status::unavailable("the gate failed this call"));
        }
        self.inner.submit(request).await
    }

    async fn sync_counts(
        &self,
        request: Request<SyncRequest>,
    ) -> Result<Response<SyncResponse>, Status> {
        self.inner.sync_counts(request).await
    }
}

fn records() -> Vec<UsageRecord> {
    (0..RECORDS)
        .map(|i| {
            let mut record = sample::record(&format!("vm-{i:03}"));
            record.associated_record = LocalId::new(format!("vm-{i:03}")).unwrap();
            record.count = GpuCount::whole(1 + (i % 4) as u32);
            record
        })
        .collect()
}

async fn gpu_seconds(repository: &Repository) -> (i64, f64) {
    let rows = repository
        .summaries(SummaryQuery {
            group_by: vec![Dimension::Vo],
            filter: SummaryFilter::default(),
        })
        .await
        .unwrap();
    (
        rows.iter().map(|row| row.totals.records).sum(),
        rows.iter().map(|row| row.totals.gpu_hours() * 3600.0).sum(),
    )
}

async fn run(spool: &mut Spool, client: &mut Client) -> Result<ShipReport, ShipError> {
    let options = ShipOptions {
        limits: ShipLimits {
            max_records: BATCH,
            ..ShipLimits::default()
        },
        backoff: Backoff {
            attempts: 1,
            initial: Duration::from_millis(1),
            max: Duration::from_millis(1),
        },
        in_flight: 4,
    };
    ship(spool, client, &options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_batch_stops_the_run_in_order_and_the_next_run_counts_everything_once() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::generate();

    let repository = Repository::open(dir.path().join("r.sqlite").to_str().unwrap())
        .await
        .unwrap();
    let gate = Arc::new(Gate {
        inner: IngestService {
            repository: repository.clone(),
            tokens: Arc::new(Tokens::new([(
                SiteName::new("CESNET-MCC").unwrap(),
                TokenHash::of(TOKEN),
            )])),
            metrics: Arc::new(Metrics::default()),
            batches: std::sync::Arc::new(crate::batch_limits::BatchLimits::uniform(1_000)),
        },
        calls: AtomicUsize::new(0),
        fail_at: AtomicUsize::new(4),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::builder()
        .tls_config(
            ServerTlsConfig::new().identity(Identity::from_pem(&pki.cert_pem, &pki.key_pem)),
        )
        .unwrap()
        .add_service(AccountingServer::from_arc(gate.clone()))
        .serve_with_incoming(TcpIncoming::from(listener));
    let server = tokio::spawn(server);

    let mut spool = Spool::open(dir.path().join("spool.sqlite")).unwrap();
    let records = records();
    spool.write_run(&records).unwrap();
    let enqueued: Vec<_> = spool
        .pending(RECORDS)
        .unwrap()
        .iter()
        .map(|p| p.id.clone())
        .collect();
    let mut client = Client::new(&ClientSettings {
        endpoint: format!("https://localhost:{port}"),
        fallbacks: Vec::new(),
        ca_pem: Some(pki.ca_pem.into_bytes()),
        token: TOKEN.to_owned(),
        timeout: Duration::from_secs(10),
    })
    .unwrap();

    // First run: the fifth call fails, so the run stops there.
    let failed = run(&mut spool, &mut client).await;
    assert!(
        matches!(failed, Err(ShipError::Unreachable { .. })),
        "{failed:?}"
    );
    let pending: Vec<_> = spool
        .pending(RECORDS)
        .unwrap()
        .iter()
        .map(|p| p.id.clone())
        .collect();
    let acknowledged = RECORDS - pending.len();
    assert_eq!(acknowledged % BATCH, 0, "whole batches are acknowledged");
    assert!(
        acknowledged < RECORDS,
        "the failed batch is not acknowledged"
    );
    assert_eq!(
        pending,
        enqueued[acknowledged..],
        "what is acknowledged is the oldest records, in order"
    );
    let (stored, _) = gpu_seconds(&repository).await;
    assert!(
        stored as usize >= acknowledged,
        "the repository holds at least what was acknowledged ({stored} < {acknowledged})"
    );

    // Second run: nothing fails; every record is delivered, none counted twice.
    gate.fail_at.store(usize::MAX, Ordering::SeqCst);
    let report = run(&mut spool, &mut client).await.unwrap();
    assert_eq!(report.acknowledged, RECORDS - acknowledged);
    assert!(report.rejected.is_empty(), "{:?}", report.rejected);
    assert_eq!(spool.depth().unwrap(), 0);
    let expected: f64 = records.iter().map(UsageRecord::gpu_seconds).sum();
    let (stored, seconds) = gpu_seconds(&repository).await;
    assert_eq!(stored as usize, RECORDS);
    assert!(
        (seconds - expected).abs() < 1e-3,
        "{seconds} GPU-seconds stored, {expected} expected"
    );
    server.abort();
}
