//! The report API under load: `ACCELFED_BENCH_API_RECORDS` records of [`crate::federation`] in a
//! repository (loaded in bulk through the floors' paths, with the summaries the repository keeps,
//! and kept between runs: a SQLite file under `target/tmp/`, a PostgreSQL database named after the
//! inputs), the whole central service started from a central.toml as `accelfed serve` runs it, and
//! `GET /accounting/v1/report` over HTTPS at `ACCELFED_BENCH_API_RATE` requests a second (open
//! loop, [`crate::api_load`]) with a mix of groupings and filters, anonymous and as VO managers
//! (OIDC access tokens signed here, checked against a JWKS file). Prints the percentiles per kind
//! of request and over all.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use accelfed_accounting::repository::Repository;
use accelfed_accounting::repository::floor::{PostgresFloor, PostgresFloorTable, SqliteFloor};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use crate::api_load::{Ask, Sample, drive, line, p99};
use crate::federation::{SHAPE, USERS_PER_VO, VOS, generated, periods, site_name, vo_name};
use crate::{Backend, Settings, total_records};

const ISSUER: &str = "https://issuer.bench.invalid";
const AUDIENCE: &str = "accelfed-reports";
const MANAGER: &str = "urn:mace:egi.eu:group:{vo}:role=manager#aai.egi.eu";

/// The repository for `backend` holding the `n` records, loaded unless a kept one holds them.
/// Returns where it is (what `[database]` names) and whether it was loaded now.
async fn repository(backend: Backend, n: usize) -> (String, bool) {
    let name = format!("report_api_{n}_{SHAPE}");
    let start = Instant::now();
    let location = match backend {
        Backend::Sqlite => {
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-report-api");
            std::fs::create_dir_all(&dir).expect("the kept databases' folder");
            let path = dir.join(format!("{name}.sqlite"));
            let location = path.to_str().expect("a UTF-8 path").to_owned();
            if path.exists() && holds(&location, n).await {
                return (location, false);
            }
            let loading = dir.join(format!("{name}.loading.sqlite"));
            for stale in [&path, &loading] {
                let _ = std::fs::remove_file(stale);
                for suffix in ["-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", stale.display()));
                }
            }
            let mut floor = SqliteFloor::open(&loading)
                .await
                .expect("the SQLite loader");
            let loaded = tokio::task::block_in_place(|| floor.load(generated(n)))
                .expect("loading the records");
            assert_eq!(loaded, n as u64);
            drop(floor);
            // Named only once complete, so an interrupted load is never taken for a kept one.
            std::fs::rename(&loading, &path).expect("naming the loaded repository");
            location
        }
        Backend::Postgres => {
            let server = accelfed_tests::postgres::BenchServer::from_env();
            let (database, existed) = server.kept(&name).await;
            if existed && holds(&database.url, n).await {
                return (database.url, false);
            }
            server.drop(database).await;
            let (database, _) = server.kept(&name).await;
            let mut floor =
                PostgresFloor::open(&database.url, PostgresFloorTable::Partitioned, &periods())
                    .await
                    .expect("the PostgreSQL loader");
            let loaded = floor.load(generated(n)).await.expect("loading the records");
            assert_eq!(loaded, n as u64);
            database.url
        }
    };
    println!(
        "{backend}: loaded {n} records with their summaries in {:.0} s (kept for the next run)",
        start.elapsed().as_secs_f64()
    );
    (location, true)
}

/// Whether the repository at `location` opens (migrating it as `serve` would) and counts `n`.
async fn holds(location: &str, n: usize) -> bool {
    match Repository::open(location).await {
        Ok(repository) => total_records(&repository).await == n as i64,
        Err(_) => false,
    }
}

/// A VO manager's access token for `vo`, signed ES256 with `key`.
fn token(key: &rcgen::KeyPair, vo: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs();
    let claims = json!({
        "iss": ISSUER, "aud": AUDIENCE, "sub": format!("manager-of-{vo}"),
        "iat": now, "nbf": now, "exp": now + 3_600,
        "eduperson_entitlement": [MANAGER.replace("{vo}", vo)],
    });
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    header.kid = Some("bench".to_owned());
    let signing = jsonwebtoken::EncodingKey::from_ec_der(&key.serialize_der());
    jsonwebtoken::encode(&header, &claims, &signing).expect("a signed token")
}

/// The JWKS of `key` (RFC 7518, 6.2.1: x and y of the uncompressed point).
fn jwks(key: &rcgen::KeyPair) -> String {
    let point = key.public_key_raw();
    json!({"keys": [{
        "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": "bench",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..]),
    }]})
    .to_string()
}

/// central.toml in `dir` for the repository at `location`. The load comes from one address
/// standing for many readers, so the per-address connection cap is the port's.
fn configuration(
    dir: &Path,
    pki: &accelfed_tests::pki::Pki,
    location: &str,
    cache_mib: usize,
) -> std::path::PathBuf {
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).expect(name);
    write("cert.pem", &pki.cert_pem);
    write("key.pem", &pki.key_pem);
    let database = if location.contains("://") {
        format!("url = \"{location}\"")
    } else {
        format!("path = \"{location}\"")
    };
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [listen.limits]\nmax_connections_per_address = 1024\nmax_connections_per_network = 1024\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\n{database}\nreport_cache_mib = {cache_mib}\n\
         [access]\n[access.oidc]\nissuer = \"{ISSUER}\"\naudience = \"{AUDIENCE}\"\n\
         jwks_file = \"jwks.json\"\n\
         [[access.roles]]\nentitlement = \"{MANAGER}\"\nrole = \"vo-manager\"\n"
    );
    write("central.toml", &text);
    dir.join("central.toml")
}

/// The mix: public aggregates over everything and over filters, the idle view, and each VO's
/// manager asking for their users (the records' GlobalUserName). One ask in three is a manager's.
fn asks(tokens: &[String]) -> Vec<Ask> {
    let anonymous = |kind, query: &str| Ask {
        kind,
        query: query.to_owned(),
        token: None,
    };
    let mut asks = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        let vo = vo_name(k);
        let site = site_name(k % 8);
        let year = 2024 + (k % 3) as i32;
        let public = [
            anonymous("by=vo", "by=vo"),
            anonymous("by=site", "by=site"),
            anonymous("by=model", "by=model"),
            anonymous("by=month", "by=month"),
            anonymous("by=vo,month", "by=vo,month"),
            anonymous(
                "by=vo&site=&from=&to=",
                &format!("by=vo&site={site}&from={year}-01&to={year}-06"),
            ),
            anonymous("by=site,month&model=H100", "by=site,month&model=H100"),
            anonymous("by=vo&idle=true&format=csv", "by=vo&idle=true&format=csv"),
        ];
        asks.extend(public);
        let token = Some(token.clone());
        asks.push(Ask {
            kind: "by=user&vo= (VO manager)",
            query: format!("by=user&vo={vo}"),
            token: token.clone(),
        });
        asks.push(Ask {
            kind: "by=user,month&vo=&from= (VO manager)",
            query: format!("by=user,month&vo={vo}&from={year}-01"),
            token: token.clone(),
        });
        asks.push(Ask {
            kind: "by=site,model&vo= (VO manager)",
            query: format!("by=site,model&vo={vo}"),
            token,
        });
    }
    asks
}

pub async fn run(settings: &Settings, backend: Backend) {
    let n = settings.api_records;
    let (location, _) = repository(backend, n).await;
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
    let pki = accelfed_tests::pki::Pki::generate();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("a key");
    std::fs::write(dir.path().join("jwks.json"), jwks(&key)).expect("jwks.json");
    let tokens: Vec<String> = (0..VOS).map(|k| token(&key, &vo_name(k))).collect();
    let server = accelfed_tests::central::Server::start(&configuration(
        dir.path(),
        &pki,
        &location,
        settings.api_cache_mib,
    ));
    let base = format!(
        "https://localhost:{}",
        server.https.expect("the HTTPS listener").port()
    );
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(
            reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).expect("the test CA"),
        )
        .build()
        .expect("a client");
    let asks = asks(&tokens);
    // Every ask once, unhurried: connections, the key cache and the database's pages warm.
    let warm = drive(&client, &base, &asks, 20.0, asks.len() as f64 / 20.0).await;
    assert!(
        warm.iter().all(|s| s.ok),
        "a request of the mix failed: {:?}",
        warm.iter().find(|s| !s.ok)
    );
    let (rate, seconds) = (settings.api_rate, settings.api_seconds);
    let samples = drive(&client, &base, &asks, rate, seconds).await;
    println!(
        "{backend}: report API over {n} records ({VOS} VOs x {USERS_PER_VO} users, {} months), \
         answer cache {} MiB, {rate}/s for {seconds} s: {}",
        periods().len(),
        settings.api_cache_mib,
        line(&samples)
    );
    let mut kinds: BTreeMap<&str, Vec<Sample>> = BTreeMap::new();
    for sample in &samples {
        kinds.entry(sample.kind).or_default().push(*sample);
    }
    for (kind, samples) in &kinds {
        println!("{backend}:   {kind}: {}", line(samples));
    }
    let p99 = p99(&samples);
    println!(
        "{backend}: p99 {:.2} ms: target (under 20 ms) {}",
        p99.as_secs_f64() * 1e3,
        if p99.as_millis() < 20 {
            "met"
        } else {
            "NOT met"
        }
    );
    server.stop().expect("the service stopped");
}
