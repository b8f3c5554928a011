//! The Slurm client against an HTTP server standing in for slurmrestd (recorded responses of the
//! formats accelfed reads): which data version it asks for when the configuration names none,
//! and what it says when the server and accelfed share none, or the configured one is not served.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use accelfed_provider::slurm::{DataVersion, SlurmClient, SlurmConfig};
use chrono::{TimeZone, Utc};
use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/slurm")
            .join(name),
    )
    .unwrap()
}

/// An OpenAPI document in slurmrestd's 23.02+ layout, listing `paths`.
fn openapi(paths: &[&str]) -> Vec<u8> {
    let paths: serde_json::Map<String, serde_json::Value> = paths
        .iter()
        .map(|p| (p.to_string(), serde_json::json!({"get": {}})))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "openapi": "3.0.3",
        "info": {"title": "Slurm REST API"},
        "servers": [{"url": "/"}],
        "paths": paths,
    }))
    .unwrap()
}

/// Serves `routes` (path without query -> body) on 127.0.0.1, 404 elsewhere; records the paths
/// asked for. Each connection answers one request and closes.
async fn serve(routes: BTreeMap<String, Vec<u8>>) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let routes = Arc::new(routes);
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await.unwrap();
            let routes = routes.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut chunk = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = stream.read(&mut chunk).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&chunk[..n]);
                }
                let text = String::from_utf8_lossy(&request);
                let target = text.split(' ').nth(1).unwrap_or("/").to_owned();
                let path = target.split('?').next().unwrap().to_owned();
                seen.lock().unwrap().push(path.clone());
                let (status, body) = match routes.get(&path) {
                    Some(body) => ("200 OK", body.clone()),
                    None => (
                        "404 Not Found",
                        br#"{"errors":[{"description":"Unable find requested URL","error_number":9002}]}"#.to_vec(),
                    ),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.write_all(&body).await;
            });
        }
    });
    (url, asked)
}

fn config(url: &str, version: Option<&str>, token: &Path) -> SlurmConfig {
    #[derive(Deserialize)]
    struct File {
        slurm: Vec<SlurmConfig>,
    }
    let version = version.map_or(String::new(), |v| format!("api_version = \"{v}\"\n"));
    let source = format!(
        "[[slurm]]\nid = \"hpc\"\n[slurm.rest]\nurl = \"{url}\"\nuser = \"accelfed\"\ntoken_file = {token:?}\n{version}"
    );
    let config = toml::from_str::<File>(&source).unwrap().slurm.remove(0);
    config.validate().unwrap();
    config
}

fn token() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), "jwt\n").unwrap();
    file
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_configured_version_the_newest_both_sides_know_is_asked_for() {
    // a 24.05-like server: v0.0.39 to v0.0.41 for slurmctld, v0.0.40 and v0.0.41 for slurmdbd,
    // and a v0.0.45 that accelfed does not know
    let routes: BTreeMap<String, Vec<u8>> = [
        (
            "/openapi/v3",
            openapi(&[
                "/openapi/v3",
                "/slurm/v0.0.39/nodes/",
                "/slurm/v0.0.40/nodes/",
                "/slurm/v0.0.41/nodes",
                "/slurm/v0.0.41/partitions",
                "/slurm/v0.0.45/nodes",
                "/slurmdb/v0.0.40/jobs/",
                "/slurmdb/v0.0.41/jobs",
            ]),
        ),
        ("/slurm/v0.0.41/nodes", fixture("v0.0.41/rest-nodes.json")),
        (
            "/slurm/v0.0.41/partitions",
            fixture("v0.0.40/scontrol-partitions.json"),
        ),
        ("/slurmdb/v0.0.41/jobs", fixture("v0.0.41/rest-jobs.json")),
    ]
    .into_iter()
    .map(|(p, b)| (p.to_owned(), b))
    .collect();
    let (url, asked) = serve(routes).await;
    let token = token();
    let config = config(&url, None, token.path());

    let inventory = SlurmClient::new(&config).inventory().await.unwrap();
    assert_eq!(inventory.version, DataVersion::Modern(41));
    assert!(!inventory.nodes.is_empty());

    let client = SlurmClient::new(&config);
    let summary = tokio::task::spawn_blocking(move || {
        let start = Utc.with_ymd_and_hms(2023, 11, 1, 0, 0, 0).unwrap();
        let end = Utc.with_ymd_and_hms(2023, 12, 1, 0, 0, 0).unwrap();
        client.jobs_blocking(start, end, &mut |_| {})
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(summary.version, DataVersion::Modern(41));
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked.contains(&"/slurmdb/v0.0.41/jobs".to_owned()),
        "{asked:?}"
    );
    assert!(!asked.iter().any(|p| p.contains("v0.0.38")), "{asked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_common_version_names_both_sides_and_a_configured_one_not_served_says_so() {
    let routes: BTreeMap<String, Vec<u8>> = [(
        "/openapi/v3".to_owned(),
        openapi(&[
            "/slurm/v0.0.37/nodes/",
            "/slurm/v0.0.45/nodes/",
            "/slurmdb/v0.0.45/jobs/",
        ]),
    )]
    .into_iter()
    .collect();
    let (url, _) = serve(routes).await;
    let token = token();

    let err = SlurmClient::new(&config(&url, None, token.path()))
        .inventory()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("/openapi/v3"), "{err}");
    assert!(err.contains("v0.0.37, v0.0.45"), "{err}");
    assert!(err.contains("v0.0.38 to v0.0.44"), "{err}");

    // the configured v0.0.38, which this server no longer serves: the 404 says why
    let err = SlurmClient::new(&config(&url, Some("v0.0.38"), token.path()))
        .inventory()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("404"), "{err}");
    assert!(err.contains("may not serve data version v0.0.38"), "{err}");
    assert!(err.contains("rest.api_version"), "{err}");

    // a server without an OpenAPI document: the error says what to set
    let (bare, _) = serve(BTreeMap::new()).await;
    let err = SlurmClient::new(&config(&bare, None, token.path()))
        .inventory()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("openapi/v3") && err.contains("404"), "{err}");
    assert!(err.contains("set rest.api_version"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_ca_that_cannot_be_read_is_named_and_not_retried() {
    let token = token();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README"), "no certificate here\n").unwrap();
    for (ca, reason) in [
        (dir.path().join("missing.pem"), "missing.pem"),
        (dir.path().to_owned(), "no CA certificate in the folder"),
    ] {
        #[derive(Deserialize)]
        struct File {
            slurm: Vec<SlurmConfig>,
        }
        let source = format!(
            "[[slurm]]\nid = \"hpc\"\n[slurm.rest]\nurl = \"https://127.0.0.1:1\"\n\
             user = \"accelfed\"\ntoken_file = {:?}\nca = {ca:?}\napi_version = \"v0.0.40\"\n",
            token.path()
        );
        let config = toml::from_str::<File>(&source).unwrap().slurm.remove(0);
        config.validate().unwrap();
        let err = SlurmClient::new(&config).inventory().await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("rest.ca"), "{text}");
        assert!(text.contains(reason), "{text}");
        assert!(!err.retryable(), "{text}");
    }
}
