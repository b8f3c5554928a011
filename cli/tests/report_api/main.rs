//! The report API (`GET /accounting/v1/report`) through the whole service started in-process from
//! its central.toml: the same documents as `accelfed report` on the same repository (JSON and CSV,
//! one and two dimensions, filters), and who may read what (`roles`): site tokens, OIDC access
//! tokens signed with keys made here and checked against a JWKS served over TLS by a local server.

#![allow(clippy::unwrap_used)]

mod cache;
mod oidc;
mod roles;
mod rsa;

use std::path::Path;
use std::process::Command;

use accelfed_accounting::repository::{IngestOptions, Repository};
use accelfed_accounting::wire::{Outcome, Submission};
use accelfed_schemas::names::{SiteName, VoName};
use accelfed_schemas::usage::{Month, sample};
use accelfed_tests::pki::Pki;
use chrono::{Datelike, TimeZone, Utc};

/// The token of SITE-A (of `accelfed token`'s form).
pub const SITE_A_TOKEN: &str = "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a";

/// A repository with atlas and cms at two sites over January, February and the month running now
/// (so the partial month shows), some records with an active time and some without.
pub async fn repository(path: &Path) {
    let repo = Repository::open(path.to_str().unwrap()).await.unwrap();
    let now = Utc::now();
    let current = Month::new(now.year(), now.month()).unwrap();
    for (site, records) in [
        (
            "SITE-A",
            vec![
                ("a-1", "atlas", Some(1)),
                ("a-2", "atlas", Some(2)),
                ("a-3", "cms", None),
            ],
        ),
        (
            "SITE-B",
            vec![("b-1", "cms", Some(2)), ("b-2", "atlas", Some(1))],
        ),
    ] {
        let batch: Vec<Submission> = records
            .iter()
            .map(|(resource, vo, month)| {
                let mut r = sample::record(resource);
                r.site = SiteName::new(site).unwrap();
                r.vo = Some(VoName::new(*vo).unwrap());
                match month {
                    Some(month) => {
                        r.month = Month::new(2026, *month).unwrap();
                        r.first_seen = Utc.with_ymd_and_hms(2026, *month, 1, 0, 0, 0).unwrap();
                        r.last_seen = r.first_seen + chrono::Duration::days(10);
                    }
                    None => {
                        r.month = current;
                        r.first_seen = Utc
                            .with_ymd_and_hms(now.year(), now.month(), 1, 0, 0, 0)
                            .unwrap();
                        r.last_seen = now;
                        let seconds = (now - r.first_seen).num_seconds().max(1) as u64;
                        r.available_duration = seconds;
                        r.active_duration = Some(seconds.min(3_600));
                    }
                }
                r.global_user_name = Some(
                    accelfed_schemas::names::Text::new(format!("user-{}", &resource[..1])).unwrap(),
                );
                if *resource == "a-2" {
                    // A record without an active time: its idle time is unknown, not zero.
                    r.active_duration = None;
                }
                r.into()
            })
            .collect();
        let expected = vec![Outcome::Stored; batch.len()];
        let options = IngestOptions {
            max_batch: 100,
            now,
        };
        let site = SiteName::new(site).unwrap();
        let report = repo.ingest(&site, batch, options).await.unwrap();
        assert_eq!(report.outcomes, expected);
    }
}

/// central.toml for the repository at `database`, listening for HTTPS, with SITE-A and SITE-B and
/// the `[access]` text given.
pub fn configuration(dir: &Path, pki: &Pki, database: &Path, access: &str) -> std::path::PathBuf {
    configuration_with(
        dir,
        pki,
        &format!("path = \"{}\"", database.display()),
        access,
    )
}

/// [`configuration`] with `database` the `[database]` table's line (`url = ...` for PostgreSQL).
pub fn configuration_with(
    dir: &Path,
    pki: &Pki,
    database: &str,
    access: &str,
) -> std::path::PathBuf {
    std::fs::write(dir.join("cert.pem"), &pki.cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.key_pem).unwrap();
    let hash = |token: &str| accelfed_central::TokenHash::of(token).to_hex();
    let text = format!(
        "[listen]\ngrpc = \"127.0.0.1:0\"\nhttps = \"127.0.0.1:0\"\n\
         [tls]\ncertificate = \"cert.pem\"\nkey = \"key.pem\"\n\
         [database]\n{database}\n\
         [sites.SITE-A]\ntoken_sha256 = \"{}\"\n\
         [sites.SITE-B]\ntoken_sha256 = \"{}\"\n{access}",
        hash(SITE_A_TOKEN),
        hash("b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7"),
    );
    let path = dir.join("central.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A client trusting the test CA.
pub fn client(pki: &Pki) -> reqwest::Client {
    reqwest::Client::builder()
        .use_rustls_tls()
        .add_root_certificate(reqwest::Certificate::from_pem(pki.ca_pem.as_bytes()).unwrap())
        .build()
        .unwrap()
}

/// `accelfed report --database <database> <args>`'s standard output.
fn accelfed_report(database: &Path, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_accelfed"))
        .arg("report")
        .arg("--database")
        .arg(database)
        .args(args)
        .env_remove("ACCELFED_DATABASE")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "accelfed report {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_answers_what_accelfed_report_prints() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    let server =
        accelfed_tests::central::Server::start(&configuration(dir.path(), &pki, &database, ""));
    let base = format!("https://localhost:{}", server.https.unwrap().port());
    let client = client(&pki);
    let asks: [(&str, &[&str]); 8] = [
        ("by=vo", &["--by", "vo"]),
        ("by=vo,month", &["--by", "vo,month"]),
        ("by=site,model", &["--by", "site,model"]),
        ("by=month&vo=atlas", &["--by", "month", "--vo", "atlas"]),
        (
            "by=site&from=2026-02&to=2026-02",
            &["--by", "site", "--from", "2026-02", "--to", "2026-02"],
        ),
        (
            "by=vo,site&model=A100",
            &["--by", "vo,site", "--model", "A100"],
        ),
        ("by=vo,month&idle=true", &["--by", "vo,month", "--idle"]),
        (
            "by=site&idle=true&vo=atlas",
            &["--by", "site", "--vo", "atlas", "--idle"],
        ),
    ];
    for (query, args) in asks {
        for format in ["json", "csv"] {
            let url = format!("{base}/accounting/v1/report?{query}&format={format}");
            let response = client.get(&url).send().await.unwrap();
            assert_eq!(response.status(), 200, "{url}");
            let api = response.text().await.unwrap();
            let mut cli_args = args.to_vec();
            cli_args.extend(["--format", format]);
            assert_eq!(api, accelfed_report(&database, &cli_args), "{url}");
        }
    }
    // The numbers themselves: atlas's months, the running month marked, idle time only where
    // records carry an active time.
    let url = format!("{base}/accounting/v1/report?by=vo,month");
    let text = client.get(&url).send().await.unwrap().text().await.unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows = json["rows"].as_array().unwrap();
    let now = Utc::now();
    let current = format!("{:04}-{:02}", now.year(), now.month());
    assert_eq!(json["partial_month"], current.as_str());
    let cms_now = rows
        .iter()
        .find(|row| row["vo"] == "cms" && row["month"] == current.as_str())
        .unwrap();
    assert_eq!(cms_now["partial"], true);
    let atlas_feb = rows
        .iter()
        .find(|row| row["vo"] == "atlas" && row["month"] == "2026-02")
        .unwrap();
    assert_eq!(atlas_feb["partial"], false);
    assert_eq!(atlas_feb["idle_gpu_hours"], serde_json::Value::Null);
    let atlas_jan = rows
        .iter()
        .find(|row| row["vo"] == "atlas" && row["month"] == "2026-01")
        .unwrap();
    let available = atlas_jan["active_available_gpu_hours"].as_f64().unwrap();
    let active = atlas_jan["active_gpu_hours"].as_f64().unwrap();
    let idle = atlas_jan["idle_gpu_hours"].as_f64().unwrap();
    assert!(
        idle > 0.0 && (available - active - idle).abs() < 0.002,
        "{atlas_jan}"
    );
    // CSV by Accept.
    let response = client
        .get(format!("{base}/accounting/v1/report?by=vo"))
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "text/csv; charset=utf-8"
    );
    assert!(
        response
            .text()
            .await
            .unwrap()
            .starts_with("vo,records,gpu_hours,")
    );
    // Bad requests name what is wrong.
    for (query, words) in [
        ("by=vo,person", "by: unknown dimension"),
        ("by=vo,site,model", "one or two"),
        ("from=2026-13", "from:"),
        ("from=2026-03&to=2026-01", "after"),
        ("format=xml", "format:"),
        ("idle=yes", "idle:"),
        ("colour=red", "unknown field"),
    ] {
        let response = client
            .get(format!("{base}/accounting/v1/report?{query}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{query}");
        let text = response.text().await.unwrap();
        assert!(text.contains(words), "{query}: {text}");
    }
    server.stop().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_pages_through_its_own_records_and_no_one_elses() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("accounting.sqlite");
    repository(&database).await;
    let pki = Pki::generate();
    let server =
        accelfed_tests::central::Server::start(&configuration(dir.path(), &pki, &database, ""));
    let base = format!(
        "https://localhost:{}/accounting/v1/sites",
        server.https.unwrap().port()
    );
    let client = client(&pki);
    let get = |path: String, token: Option<&str>| {
        let mut request = client.get(format!("{base}/{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.text().await.unwrap())
        }
    };
    // SITE-A holds three records: two on the first page of two, one on the second.
    let (status, body) = get("SITE-A/records?per_page=2".into(), Some(SITE_A_TOKEN)).await;
    assert_eq!(status, 200, "{body}");
    let first: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(first["records"].as_array().unwrap().len(), 2);
    assert_eq!(first["more"], true);
    let (_, body) = get(
        "SITE-A/records?per_page=2&page=2".into(),
        Some(SITE_A_TOKEN),
    )
    .await;
    let second: serde_json::Value = serde_json::from_str(&body).unwrap();
    let last = &second["records"].as_array().unwrap()[0];
    assert_eq!(second["more"], false);
    let mut seen: Vec<String> = first["records"]
        .as_array()
        .unwrap()
        .iter()
        .chain([last])
        .map(|r| r["associated_record"].as_str().unwrap().to_owned())
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 3);
    assert!(first["records"][0]["site"] == "SITE-A" && last["site"] == "SITE-A");
    assert_eq!(first["records"][0]["month"], "2026-01");
    assert_eq!(first["records"][0]["gpus"], 1.0);
    // Another site's records, or none of a token: refused; records are never anonymous.
    assert_eq!(
        get("SITE-B/records".into(), Some(SITE_A_TOKEN)).await.0,
        403
    );
    assert_eq!(get("SITE-A/records".into(), None).await.0, 401);
    assert_eq!(
        get("SITE-A/records?per_page=0".into(), Some(SITE_A_TOKEN))
            .await
            .0,
        400
    );
    assert_eq!(
        get("SITE-A/records?page=x".into(), Some(SITE_A_TOKEN))
            .await
            .0,
        400
    );
    server.stop().unwrap();
}
