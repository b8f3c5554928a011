//! Pushes that are well-formed GLUE 2.1 JSON but do not hold together are refused over HTTPS with
//! 422 (docs/registry-openapi.yaml) and a reason naming the entity, and the site's stored document
//! stays as it was: IDs in another site's namespace, a service pointing at a missing AdminDomain,
//! and free GPUs above the total.

use accelfed_tests::central::{TOKEN_B, accelfed, stderr};
use accelfed_tests::pki::pki;

use super::{Server, central_config, push, put_raw, sites};

/// The site's stored pushes as `(received_at, bytes)`, from its history.
fn stored(server: &Server, ca: &std::path::Path) -> Vec<(String, u64)> {
    let ca = std::fs::read(ca).unwrap();
    let body = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let client = accelfed_publishers::registry::client(Some(&ca)).unwrap();
            accelfed_publishers::registry::get(
                &client,
                &server.url(),
                "/registry/v1/sites/EXAMPLE-HPC/history",
                &[],
            )
            .await
        })
        .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    answer["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| {
            (
                entry["received_at"].as_str().unwrap().to_owned(),
                entry["bytes"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn inconsistent_documents_are_refused_with_422_and_the_stored_one_stays() {
    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let server = Server::start(&central_config(dir.path(), &pki));
    let (_, batch) = sites(dir.path());
    let token = dir.path().join("b.token");
    std::fs::write(&token, format!("{TOKEN_B}\n")).unwrap();
    let pushed = push(&server, &pki, &batch, &token);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let before = stored(&server, &pki.ca);
    assert_eq!(before.len(), 1);

    let rendered = accelfed()
        .args(["provide", "--config"])
        .arg(&batch)
        .output()
        .unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let good = String::from_utf8(rendered.stdout).unwrap();
    let good_json: serde_json::Value = serde_json::from_str(&good).unwrap();

    // Every ID moved into the other site's namespace: the document is otherwise whole.
    let foreign = good.replace("urn:accelfed:EXAMPLE-HPC:", "urn:accelfed:EXAMPLE-GPU:");
    let mut no_domain = good_json.clone();
    no_domain["ComputingService"][0]["Associations"]["AdminDomain"] =
        serde_json::json!(["NOWHERE"]);
    let mut over_total = good_json.clone();
    let manager = &mut over_total["ComputingManagerAccelerator"][0];
    let total = manager["TotalPhysicalAccelerators"].as_f64().unwrap();
    manager["FreePhysicalAccelerators"] = serde_json::json!(total + 5.0);
    let manager_id = manager["ID"].as_str().unwrap().to_owned();

    for (body, reasons) in [
        (
            foreign,
            vec![
                "(422)",
                "urn:accelfed:EXAMPLE-GPU:",
                "is not in site \"EXAMPLE-HPC\"'s namespace",
            ],
        ),
        (
            no_domain.to_string(),
            vec![
                "(422)",
                "ComputingService urn:accelfed:EXAMPLE-HPC:service:hpc",
                "association to AdminDomain NOWHERE names no entity of the document",
            ],
        ),
        (
            over_total.to_string(),
            vec![
                "(422)",
                &format!("ComputingManagerAccelerator {manager_id}"),
                &format!("exceed TotalPhysicalAccelerators {total}"),
            ],
        ),
    ] {
        let error = put_raw(&server, &pki, TOKEN_B, body.into_bytes()).unwrap_err();
        for reason in reasons {
            assert!(error.contains(reason), "{reason:?} not in: {error}");
        }
        assert_eq!(stored(&server, &pki.ca), before, "after: {error}");
    }
    // The good document is still accepted, and stored as a new push.
    put_raw(&server, &pki, TOKEN_B, good.into_bytes()).unwrap();
    assert_eq!(stored(&server, &pki.ca).len(), 2);
}
