//! `GET /registry/v1/sites/{site}/history` against the central service: every stored push of a
//! site, newest first, with its size; at most `[registry] keep_history` of them; 404 with a reason
//! for a site with none. No token is asked, as for the other read endpoints.

use accelfed_tests::central::{TOKEN_A, TOKEN_B, accelfed, stderr};
use accelfed_tests::pki::pki;

use super::{Server, central_config, put_raw, sites};

/// The site's history as the API answers it, or the error (status and reason).
fn history(server: &Server, ca: &std::path::Path, site: &str) -> Result<serde_json::Value, String> {
    let ca = std::fs::read(ca).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
            accelfed_publishers::registry::get(
                &client,
                &server.url(),
                &format!("/registry/v1/sites/{site}/history"),
                &[],
            )
            .await
        })
        .map(|body| serde_json::from_str(&body).unwrap())
        .map_err(|error| error.to_string())
}

/// (received_at, bytes) of each entry.
fn entries(answer: &serde_json::Value) -> Vec<(chrono::DateTime<chrono::Utc>, u64)> {
    answer["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["received_at"].as_str().unwrap().parse().unwrap(),
                entry["bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_sites_history_lists_its_pushes_newest_first_within_keep_history() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    // central_config keeps 3 documents per site.
    let server = Server::start(&central_config(dir.path(), &pki));
    let (cloud, _) = sites(dir.path());

    // The cloud site's document compact and pretty-printed: the same content, two sizes.
    let rendered = accelfed()
        .args(["provide", "--config"])
        .arg(&cloud)
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let value: serde_json::Value = serde_json::from_slice(&rendered.stdout).unwrap();
    let compact = serde_json::to_vec(&value).unwrap();
    let pretty = serde_json::to_vec_pretty(&value).unwrap();
    assert_ne!(compact.len(), pretty.len());

    put_raw(&server, &pki, TOKEN_A, compact.clone()).unwrap();
    put_raw(&server, &pki, TOKEN_A, pretty.clone()).unwrap();
    // A refused push (the other site's token) is not stored, so not listed.
    put_raw(&server, &pki, TOKEN_B, compact.clone()).unwrap_err();

    let answer = history(&server, &pki.ca, "EXAMPLE-GPU").unwrap();
    assert_eq!(answer["site"], "EXAMPLE-GPU");
    assert_eq!(answer["keep_history"], 3);
    let listed = entries(&answer);
    assert_eq!(
        listed.iter().map(|entry| entry.1).collect::<Vec<_>>(),
        vec![pretty.len() as u64, compact.len() as u64],
        "{answer}"
    );
    assert!(listed[0].0 >= listed[1].0, "newest first: {answer}");

    // Two more pushes: the oldest falls out, three stay (keep_history).
    put_raw(&server, &pki, TOKEN_A, compact.clone()).unwrap();
    put_raw(&server, &pki, TOKEN_A, compact.clone()).unwrap();
    let listed = entries(&history(&server, &pki.ca, "EXAMPLE-GPU").unwrap());
    assert_eq!(
        listed.iter().map(|entry| entry.1).collect::<Vec<_>>(),
        vec![
            compact.len() as u64,
            compact.len() as u64,
            pretty.len() as u64
        ]
    );
    assert!(listed.windows(2).all(|pair| pair[0].0 >= pair[1].0));

    // A configured site that never pushed, and a name no one has: 404 with the reason.
    for site in ["EXAMPLE-HPC", "NO-SUCH-SITE"] {
        let error = history(&server, &pki.ca, site).unwrap_err();
        assert!(error.contains("(404"), "{error}");
        assert!(
            error.contains(&format!(
                "no document of site \"{site}\" is stored: the site is unknown or has never pushed"
            )),
            "{error}"
        );
    }
}
