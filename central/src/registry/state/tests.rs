//! Opening the registry on stored documents: each is checked again as a push of it would be now.

use accelfed_schemas::glue::sample;
use accelfed_schemas::render::json;
use chrono::TimeZone;
use serde_json::Value as Json;

use super::*;

/// The sample document of `site`, every entity created at `time`.
fn document(site: &str, time: &str) -> String {
    let mut json = json::document(&sample::snapshot(site));
    for list in json.as_object_mut().unwrap().values_mut() {
        for entity in list.as_array_mut().unwrap() {
            entity["CreationTime"] = Json::from(time);
        }
    }
    serde_json::to_string(&json).unwrap()
}

#[tokio::test]
async fn a_stored_document_that_fails_todays_checks_is_left_out_of_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = DocumentStore::open(dir.path().join("registry.sqlite").to_str().unwrap())
        .await
        .unwrap();
    let received_at = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    // Stored under older rules: one document as a site pushes it, one dated 2200.
    for (site, time) in [
        ("GOOD", "2026-11-01T11:59:00Z"),
        ("FUTURE", "2200-01-01T00:00:00Z"),
    ] {
        let stored = StoredDocument {
            site: site.to_owned(),
            received_at,
            document: document(site, time),
        };
        store.put(stored, 10).await.unwrap();
    }
    let checker = Checker::new(DEFAULT_MAX_DOCUMENT_BYTES).unwrap();
    let registry = Registry::open(store, checker, 10).await.unwrap();
    let index = registry.index();
    let sites: Vec<&str> = index.sites().iter().map(|v| v.site.as_str()).collect();
    assert_eq!(sites, ["GOOD"]);
    // The refused one stays in the site's history.
    assert_eq!(registry.history("FUTURE").await.unwrap().len(), 1);
}
