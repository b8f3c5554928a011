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

/// The capacity over time is what the pushes said, and the same after a restart, read back from
/// the store's history.
#[tokio::test]
async fn capacity_over_time_follows_pushes_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.sqlite");
    let open = || async {
        let store = DocumentStore::open(path.to_str().unwrap()).await.unwrap();
        let checker = Checker::new(DEFAULT_MAX_DOCUMENT_BYTES).unwrap();
        Registry::open(store, checker, 10).await.unwrap()
    };
    let first = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    let registry = open().await;
    for minutes in [0, 10] {
        let at = first + chrono::Duration::minutes(minutes);
        let text = document("SITE", &at.format("%Y-%m-%dT%H:%M:%SZ").to_string());
        registry.push("SITE", text.as_bytes(), at).await.unwrap();
    }
    let now = first + chrono::Duration::minutes(20);
    let before = registry.capacity_over_time(None, now);
    assert_eq!(before.instants.first(), Some(&first));
    assert_eq!(before.instants.len(), 3, "{:?}", before.instants);
    // The sample's A100s: the cloud's 8 and the batch side's, each pool once.
    assert!(
        before
            .models
            .values()
            .all(|levels| levels.iter().all(|l| l.total.get() > 0.0)),
        "{before:?}"
    );
    assert!(
        registry
            .capacity_over_time(Some("OTHER"), now)
            .instants
            .is_empty()
    );
    drop(registry);
    assert_eq!(open().await.capacity_over_time(None, now), before);
}
